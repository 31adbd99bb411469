#pragma once
// Results of a --samples run (N seeds of one scenario, or of each point of a weak-scaling
// series): the mean of every figure, and for the headline ones the 95 % confidence interval of
// the mean (util/statistics.hpp) as "<key>_ci95": [low, high].
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace moesim::report {

// The element-wise mean of documents of one shape: floating-point numbers averaged, everything
// else (integers, strings, booleans) as in the first.
nlohmann::json mean_document(const std::vector<nlohmann::json>& docs);
nlohmann::ordered_json mean_document(const std::vector<nlohmann::ordered_json>& docs);

// One scenario's seeds, each a run_json() document in seed order: their mean, with "samples",
// "seeds" and step_time_s_ci95, tflops_per_gpu_ci95, tokens_per_s_per_gpu_ci95, mfu_ci95.
nlohmann::json samples_json(const std::vector<nlohmann::json>& runs);

// A weak-scaling series, each point's seeds in the same order: samples_json() per point plus
// scaling_efficiency (the mean over seeds of seed k's per-GPU throughput relative to seed k's at
// the first point) and scaling_efficiency_ci95.
nlohmann::json sampled_scaling_json(const std::vector<std::vector<nlohmann::json>>& runs);

std::string samples_table(const nlohmann::json& summary);          // of samples_json()
std::string sampled_scaling_table(const nlohmann::json& series);   // of sampled_scaling_json()
// One row per point: the means and the intervals' ends (of either document kind).
std::string samples_csv(const nlohmann::json& points);

}  // namespace moesim::report
