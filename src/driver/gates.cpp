#include "moesim/driver/gates.hpp"

#include <fmt/format.h>

namespace moesim::driver {

std::vector<std::string> gate_failures(const Gates& gates, const std::vector<GatePoint>& points) {
  std::vector<std::string> out;
  const auto missing = [&](const GatePoint& p, const char* what, const char* option) {
    out.push_back(fmt::format("{}: no {} to check against {} (the point has no result)", p.name, what, option));
  };
  const auto options = [&] {
    std::vector<std::string> o;
    if (gates.min_scaling_efficiency) o.emplace_back("--min-scaling-efficiency");
    if (gates.max_step_time_s) o.emplace_back("--max-step-time");
    if (gates.min_tflops_per_gpu) o.emplace_back("--min-tflops");
    return fmt::format("{}", fmt::join(o, ", "));
  }();
  for (const GatePoint& p : points) {
    if (gates.any() && !p.not_run.empty()) {
      out.push_back(fmt::format("{}: did not run ({}), so {} cannot be checked", p.name, p.not_run, options));
      continue;
    }
    if (const auto& min = gates.min_scaling_efficiency) {
      if (!p.scaling_efficiency) missing(p, "scaling efficiency", "--min-scaling-efficiency");
      else if (*p.scaling_efficiency < *min)
        out.push_back(fmt::format("{}: scaling efficiency {:.2f} % is below --min-scaling-efficiency {:.2f} %", p.name,
                                  100 * *p.scaling_efficiency, 100 * *min));
    }
    if (const auto& max = gates.max_step_time_s) {
      if (!p.step_time_s) missing(p, "step time", "--max-step-time");
      else if (*p.step_time_s > *max)
        out.push_back(fmt::format("{}: step time {:.4f} s is above --max-step-time {} s", p.name, *p.step_time_s, *max));
    }
    if (const auto& min = gates.min_tflops_per_gpu) {
      if (!p.tflops_per_gpu) missing(p, "TFLOP/s per GPU", "--min-tflops");
      else if (*p.tflops_per_gpu < *min)
        out.push_back(fmt::format("{}: {:.1f} model TFLOP/s per GPU is below --min-tflops {}", p.name,
                                  *p.tflops_per_gpu, *min));
    }
  }
  return out;
}

}  // namespace moesim::driver
