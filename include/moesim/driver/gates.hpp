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

// One simulated point as the gates see it; a value is absent where the point has none (the
// first point of a series has efficiency 1; a failed point has no result and fails every gate).
struct GatePoint {
  std::string name;                            // "gpus=1024", "label=gb300, gpus=512"
  std::optional<double> step_time_s;
  std::optional<double> tflops_per_gpu;
  std::optional<double> scaling_efficiency;
};

// One line per missed threshold, in point order; empty when every point passes.
std::vector<std::string> gate_failures(const Gates& gates, const std::vector<GatePoint>& points);

}  // namespace moesim::driver
