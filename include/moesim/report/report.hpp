#pragma once
// Writers for run results: terminal table, JSON, CSV; and the plan view.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/driver/run.hpp"

namespace moesim::report {

nlohmann::json run_json(const driver::RunResult& r);
std::string run_table(const driver::RunResult& r);
// One header line, one row per result (sweeps and scaling use the same columns).
std::string runs_csv(const std::vector<driver::RunResult>& results);

// Weak scaling: each point and its per-GPU throughput relative to the first.
nlohmann::json scaling_json(const std::vector<driver::RunResult>& points);
std::string scaling_table(const std::vector<driver::RunResult>& points);

// `moesim plan`: layout, groups with their placement and bottleneck, memory per stage.
nlohmann::json plan_json(const Scenario& s, const plan::Layout& l,
                         const std::vector<plan::MemoryBreakdown>& memory);
std::string plan_table(const Scenario& s, const plan::Layout& l,
                       const std::vector<plan::MemoryBreakdown>& memory);

}  // namespace moesim::report
