#pragma once
// Where a stack's speed comes from: starting from another stack, apply the scenario's stack
// settings one group at a time and simulate after each (the shape of MLM-G's history table).
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/driver/run.hpp"

namespace moesim::driver {

struct AttributionStep {
  std::string change;       // "start", or the settings applied, e.g. "cuda_graphs = full_iteration"
  double tflops_per_gpu = 0;
  double step_time_s = 0;
};

// Steps in a fixed order of stack settings (dispatcher settings travel together). Throws
// ConfigError / InfeasibleError like run_scenario.
std::vector<AttributionStep> attribute(const std::filesystem::path& scenario_file,
                                       const std::string& from_stack, const RunOptions& options);

std::string attribution_table(const std::vector<AttributionStep>& steps);

}  // namespace moesim::driver
