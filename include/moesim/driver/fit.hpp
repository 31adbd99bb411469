#pragma once
// "Fits if ...": when a layout does not fit in memory, the changes that make it fit, each one
// simulated through the same driver as `moesim run`, with its throughput.
#include <string>
#include <vector>

#include "moesim/driver/run.hpp"

namespace moesim::driver {

struct FitCandidate {
  std::string change;          // e.g. "recompute + moe_act", "pp 4 -> 8", "micro_batch 2 -> 1"
  double peak_bytes = 0;       // the largest pipeline rank's memory with the change
  double usable_bytes = 0;
  bool fits = false;
  double tflops_per_gpu = 0;   // simulated, only for candidates that fit
};

struct FitReport {
  double tflops_per_gpu = 0;               // the scenario as given (simulated although it does not fit)
  std::vector<FitCandidate> fitting;       // best simulated throughput first
  std::vector<FitCandidate> not_fitting;   // tried, still too large
  std::vector<std::string> not_tried;      // options left out, and why
};

// The candidates: recompute modules Megatron offers that the recipe does not already use (one
// at a time, cheapest first, then accumulated, then full recompute), twice the pipeline
// stages, twice the expert parallelism, every smaller micro-batch down to the largest that fits.
// Candidates whose layout cannot be built are skipped.
FitReport suggest_fits(const Scenario& s, const RunOptions& options);

}  // namespace moesim::driver
