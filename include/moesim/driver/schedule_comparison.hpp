#pragma once
// One scenario under several pipeline schedules, beside the DeepSeek-V3 report's Table 2 (DSV3
// §3.2.1): the bubble its formula gives for the pass times the simulation measured, the bubble
// the simulation found, the parameters and in-flight activations per GPU, and the throughput.
#include <filesystem>
#include <string>
#include <vector>

#include "moesim/driver/run.hpp"

namespace moesim::driver {

// Median wall time of one pass kind on an observed GPU, its exposed communication included
// (seconds; 0 when the schedule has no such pass). The report's notation: F a forward chunk,
// B a full backward chunk, W a weight-gradient chunk, F&B an overlapped forward and backward.
struct PassTimes {
  double f = 0, b = 0, w = 0, f_and_b = 0;
};
PassTimes measured_pass_times(const RunResult& r, int pp_rank);

struct ScheduleRow {
  std::string schedule;
  std::string table_bubble;           // Table 2's formula, as printed there
  int table_parameters = 1;           // Table 2: parameter copies per device
  int table_activations = 0;          // Table 2: activations per device, in chunks (PP or PP + 1)
  PassTimes times;                    // measured on pipeline rank `observed_pp_rank`
  int observed_pp_rank = 0;
  double formula_bubble_s = 0;        // Table 2's formula with `times`
  double simulated_bubble_s = 0;      // idle time of the observed rank in the simulation
  double parameters_per_gpu = 0;      // largest over pipeline ranks
  int inflight_chunks = 0;            // largest over pipeline ranks
  double memory_bytes = 0;            // largest total over pipeline ranks
  bool fits = false;
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
};

struct ScheduleComparison {
  std::string scenario_file;
  std::string scenario_name;
  int pp = 0;
  std::vector<ScheduleRow> rows;      // 1f1b, zb-h1, then the scenario's own schedule
};

// Runs `scenario` as given and under 1f1b and zb-h1 (same layout, recipe.ep_overlap off: the
// table's plain 1F1B, and ZB-H1's reference has no F&B pairs).
ScheduleComparison compare_schedules(const std::filesystem::path& scenario, const RunOptions& options);

std::string schedule_comparison_markdown(const ScheduleComparison& c);

}  // namespace moesim::driver
