#pragma once
// Reproducing the published figures: every scenario under scenarios/published/ run and compared
// with its measured throughput, plus the GB200 history's order and the GB300 scaling claim.
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/driver/memory_validation.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/driver/schedule_comparison.hpp"

namespace moesim::driver {

struct ValidationRow {
  std::string file;            // scenario file name
  Published published;
  double simulated_tflops = 0;
  double relative_error = 0;   // simulated / published - 1
  bool within_tolerance = false;
  RunResult result;
};

struct ScalingCheck {
  int from_gpus = 0, to_gpus = 0;
  double efficiency = 0;       // per-GPU throughput at to_gpus / at from_gpus
  double published = 0.985;    // Megatron-Core, seeds
};

struct Validation {
  std::vector<ValidationRow> runs;          // sorted by file name
  bool history_monotone = true;             // gb200-history-step0..12 in increasing order
  ScalingCheck scaling;                     // record layout 256 -> 1,024 GPUs
  MemoryValidation memory;                  // peaks, measured memory (scenarios/memory/), estimator
  ScheduleComparison schedules;             // DeepSeek's own setup beside DSV3 Table 2 (if asked)
};

// The *.json files of `published_dir`, sorted by name.
std::vector<std::filesystem::path> published_scenarios(const std::filesystem::path& published_dir);

// Runs every *.json in `published_dir`; the scaling check weak-scales `record_scenario`;
// `schedules_scenario`, when given, is compared under the schedules of DSV3 Table 2.
Validation validate(const std::filesystem::path& published_dir,
                    const std::filesystem::path& record_scenario, const RunOptions& options,
                    const std::filesystem::path& schedules_scenario = {});

// What fails `moesim validate` (exit 1): one line per row outside its tolerance. Empty when the
// validation passes. The one place that decides it (the history's order and the scaling are
// reported, not gated).
std::vector<std::string> validation_failures(const Validation& v);

// docs/validation.md: the table, the known gaps and where the record step's time goes.
std::string validation_markdown(const Validation& v);

}  // namespace moesim::driver
