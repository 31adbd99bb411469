#pragma once
// Writers for run results: terminal table, JSON, CSV; and the plan view.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/driver/fit.hpp"
#include "moesim/driver/run.hpp"

namespace moesim::report {

nlohmann::json run_json(const driver::RunResult& r);
std::string run_table(const driver::RunResult& r);
// One header line, one row per result (sweeps and scaling use the same columns).
std::string runs_csv(const std::vector<driver::RunResult>& results);

// Weak scaling: each point and its per-GPU throughput relative to the first.
nlohmann::json scaling_json(const std::vector<driver::RunResult>& points);
std::string scaling_table(const std::vector<driver::RunResult>& points);

// `moesim plan`: layout, groups with their placement and bottleneck, memory per stage, and
// (when given) the simulated changes that make a layout fit.
nlohmann::json plan_json(const Scenario& s, const plan::Layout& l,
                         const std::vector<plan::MemoryBreakdown>& memory, const driver::FitReport* fits = nullptr);
std::string plan_table(const Scenario& s, const plan::Layout& l,
                       const std::vector<plan::MemoryBreakdown>& memory, const driver::FitReport* fits = nullptr);

// Memory per pipeline rank: one rank as JSON; the table with the peak rank, the moment of the
// schedule it is reached and the kinds of tensors its activations are.
nlohmann::json memory_json(const plan::Layout& l, const plan::MemoryBreakdown& m);
std::string memory_table(const plan::Layout& l, const std::vector<plan::MemoryBreakdown>& memory);
// "Fits if ..." candidates with their simulated throughput.
nlohmann::json fit_json(const driver::FitReport& f);
std::string fit_table(const driver::FitReport& f);

}  // namespace moesim::report
