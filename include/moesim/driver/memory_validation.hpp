#pragma once
// Memory against published figures, for docs/validation.md: every published run's peak with its
// own recipe's recompute; measured peak memory of published runs (scenarios/memory/); and
// Megatron-LM's theoretical memory estimator for weights, gradients and optimizer states.
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/driver/run.hpp"

namespace moesim::driver {

struct ValidationRow;

struct RunMemory {             // one published throughput run
  std::string id;
  std::string recompute;       // the recipe's recompute list, "none" when empty
  int peak_rank = 0;
  std::string moment;          // when the peak rank reaches it, in the schedule's terms
  double peak_bytes = 0, usable_bytes = 0;
  bool fits = false;
};

struct MeasuredMemory {        // a published peak-memory measurement
  std::string id, source, scenario_file;
  double published_bytes = 0, simulated_bytes = 0;
  double tolerance = 0;
  double relative_error() const { return simulated_bytes / published_bytes - 1; }
  bool within() const;
};

struct EstimatorMemory {       // weights + gradients + optimizer, BF16 parameters, FP32 rest
  std::string id;
  double estimator_bytes = 0;  // Megatron-LM theoretical_memory_usage, most loaded shard
  double moesim_bytes = 0;     // moesim's largest pipeline rank, same assumptions
  double relative_difference() const { return moesim_bytes / estimator_bytes - 1; }
};

struct MemoryValidation {
  std::vector<RunMemory> runs;
  std::vector<MeasuredMemory> measured;
  std::vector<EstimatorMemory> estimator;
  static constexpr double kEstimatorTolerance = 0.10;  // decided before comparing
};

// Megatron-LM's compute_weight_and_optimizer_memory (megatron/training/theoretical_memory_usage.py)
// for the scenario's model and layout: BF16 parameters, FP32 gradients, FP32 master weights and
// Adam moments under the distributed optimizer, on the most loaded pipeline shard.
double megatron_estimator_weight_and_optimizer_bytes(const Scenario& s, const plan::Layout& l);

// `runs`: the published throughput runs already simulated; `memory_dir`: scenarios whose
// published object gives a measured peak memory.
MemoryValidation validate_memory(const std::vector<ValidationRow>& runs, const std::filesystem::path& memory_dir,
                                 const RunOptions& options);
std::string memory_validation_markdown(const MemoryValidation& m);

}  // namespace moesim::driver
