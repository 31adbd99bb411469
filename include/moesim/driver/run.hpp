#pragma once
// The whole data flow for one scenario: plan -> memory -> step program -> simulation -> metrics.
// Everything a report needs, as plain values.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "moesim/config/calibration_overlay.hpp"
#include "moesim/config/specs.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/engine/simulate.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/plan/memory.hpp"

namespace moesim::driver {

struct RunOptions {
  engine::Options engine;
  std::string calibration_file;  // empty: <configs>/calibration/kernels.json
  std::string configs_dir;       // used to find the calibration when calibration_file is empty
  bool force = false;            // simulate even when the work estimate exceeds this machine
  // `moesim calibrate`'s overlays (--calibration): each patches the scenarios on its system
  // wherever this run loads one (validate's rows, attribution's steps, gap experiments).
  std::vector<config::CalibrationOverlay> calibration_overlays;
};

struct Metrics {
  double step_time_s = 0;
  double model_flop_per_gpu = 0;    // Megatron convention, per step
  double tflops_per_gpu = 0;        // model TFLOP/s per GPU
  // The same step by the stack's framework's own formula (StackSpec::flops_formula): what its
  // logs would print; equal to tflops_per_gpu for Megatron stacks.
  double framework_tflops_per_gpu = 0;
  // The expected share of routed tokens the recipe's capacity factor drops (0: dropless, or
  // force-balanced routing).
  double dropped_token_fraction = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                   // against the precision's dense peak
  double peak_tflops = 0;
};

struct RunResult {
  Scenario scenario;
  plan::Layout layout;
  std::vector<plan::MemoryBreakdown> memory;  // per pipeline rank
  bool fits_in_memory = true;
  Metrics metrics;
  engine::SimResult sim;
  // The simulated program, kept only with engine::Options::record_timeline: a trace maps the
  // timeline's task ids back to tasks, and a sweep should not hold every point's program.
  workload::StepProgram program;
  std::vector<std::string> warnings;
};

// The kernel calibration file a run of `s` reads.
std::filesystem::path calibration_path(const Scenario& s, const RunOptions& options);
// That file, with the keys the scenario's calibration overlay sets (Scenario::calibrated_kernels).
cost::KernelCalibration load_kernel_calibration(const Scenario& s, const RunOptions& options);

// Throws InfeasibleError for layouts that cannot be built and for runs whose work estimate
// (work_estimate.hpp) exceeds this machine (reported, not crashed on).
RunResult run_scenario(const Scenario& s, const RunOptions& options);

// Weak scaling: the same layout at another GPU count, the global batch grown with DP.
// InfeasibleError when that batch would pass 2^31 - 1 or fall below one sequence.
Scenario scaled_to(const Scenario& s, int gpus);

}  // namespace moesim::driver
