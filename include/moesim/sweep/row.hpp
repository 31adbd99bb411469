#pragma once
// One row of sweep results per point: its index, its axis values, then fixed result columns.
// Every row has every column (null where there is no value), so CSV, Markdown and plots can be
// written from rows alone, e.g. after a merge.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/driver/run.hpp"
#include "moesim/sweep/spec.hpp"

namespace moesim::sweep {

// Rows keep their column order in JSON files.
using Json = nlohmann::ordered_json;

// Row status: ok, or why the point produced no result. Only "error" fails a sweep.
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusInvalid = "invalid";        // ConfigError: the point's scenario
inline constexpr const char* kStatusInfeasible = "infeasible";  // InfeasibleError: layout or size
inline constexpr const char* kStatusError = "error";            // anything else: a bug or a crash

// Whether the row's status is `status` (one of the above).
bool has_status(const Json& row, const char* status);

// The columns after the axis columns ("index" comes first of all), in order.
const std::vector<std::string>& result_columns();
bool is_fixed_column(const std::string& name);  // "index" or a result column
std::vector<std::string> row_columns(const std::vector<std::string>& axis_columns);

Json result_row(const Point& p, const driver::RunResult& r);
// One row from the rows of one point's --samples seeds (in seed order): metrics and breakdown
// averaged, with samples, step_time_s_ci95, tflops_per_gpu_ci95 ([low, high] of the 95 %
// interval of the mean) and tflops_per_gpu_samples; a failed seed's row stands for the point.
Json combined_sample_row(const std::vector<Json>& rows);
// `s`: the point's scenario when it was built before the failure (fills its identity columns).
Json failed_row(const Point& p, const std::string& status, const std::string& reason,
                const Scenario* s = nullptr);

}  // namespace moesim::sweep
