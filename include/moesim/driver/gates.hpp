#pragma once
// CI gates: thresholds a user puts on a run or a sweep (`--min-scaling-efficiency 0.97`,
// `--max-step-time`, `--min-tflops`); a point that misses one fails the command (exit 1) with a
// one-line message naming the point and the value, so a CI job can regression-test scaling.
#include <optional>
#include <string>
#include <vector>

namespace moesim::driver {

struct Gates {
  std::optional<double> min_scaling_efficiency;  // per-GPU throughput vs the series' first point
  std::optional<double> max_step_time_s;
  std::optional<double> min_tflops_per_gpu;
  bool any() const { return min_scaling_efficiency || max_step_time_s || min_tflops_per_gpu; }
};

// One point as the gates see it; a value is absent where the point has none (the first point
// of a series has efficiency 1). A point that did not run (an invalid or infeasible scenario, an
// axis path with a typo) has no value to check and fails every gate: a gate over points that
// did not run must not pass vacuously.
struct GatePoint {
  std::string name;                            // "gpus=1024", "label=gb300, gpus=512"
  std::optional<double> step_time_s;
  std::optional<double> tflops_per_gpu;
  std::optional<double> scaling_efficiency;
  std::string not_run;                         // why it has no result ("invalid: ..."); "" if it ran
};

// One line per missed threshold, and one per point that did not run (when any gate is set), in
// point order; empty when every point passes.
std::vector<std::string> gate_failures(const Gates& gates, const std::vector<GatePoint>& points);

}  // namespace moesim::driver
