#include "moesim/driver/checks.hpp"

#include <fmt/format.h>

#include <cmath>

#include "moesim/config/error.hpp"
#include "moesim/platform/topology.hpp"
#include "moesim/workload/step_builder.hpp"

namespace moesim::driver {

// What SimGrid receives must be finite and in range (it aborts otherwise, or loops on a zero
// rate): checked here, where the scenario's file can be named with the key that caused it.
void check_simulation_inputs(const Scenario& s, const workload::StepProgram& program, platform::Fidelity fidelity) {
  // Folded fidelity simulates one GPU per role and lets it stand for the others: true when every
  // group of a role sits on the racks as its representative's does (in_order, round_robin_nodes),
  // not when each node went to a random rack.
  if (fidelity == platform::Fidelity::folded && s.placement == "random_nodes")
    throw ConfigError(s.file, "$.placement",
                      "in_order or round_robin_nodes in folded fidelity (one GPU per role stands for all, and under "
                      "random_nodes every group sits on its own racks); run random_nodes with --fidelity full");
  try {
    platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision);
  } catch (const platform::TopologyError& e) {
    throw ConfigError(s.file, "$.system." + e.system_key, std::string("a value whose derived quantities SimGrid can "
                                                                      "simulate; ") + e.what());
  }
  try {
    workload::check_program(program);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(s.file, "$", std::string("a model, layout and recipe whose step has finite task durations and "
                                               "sizes; ") + e.what());
  }
}

// A result no GPU can produce means an input outside what the model was made for: refused
// rather than printed (a 300-digit step time, an MFU above 100 %).
void check_result(const Scenario& s, double step_time_s, double tflops_per_gpu, double peak_tflops) {
  if (!(std::isfinite(step_time_s) && step_time_s > 0))
    throw ConfigError(s.file, "$", fmt::format("inputs that give a finite, positive step time; the simulation gave {} "
                                               "s (check the system's latencies and the recipe's launch times)",
                                               step_time_s));
  if (!(std::isfinite(tflops_per_gpu) && tflops_per_gpu <= peak_tflops * (1 + 1e-9)))
    throw ConfigError(s.file, "$.system.gpu", fmt::format("a GPU whose dense {} peak bounds the simulated throughput; "
                                                          "{:.1f} model TFLOP/s per GPU exceeds the peak of {:.1f} "
                                                          "TFLOP/s (check the GPU's peak and the kernel calibration)",
                                                          to_string(s.training.precision), tflops_per_gpu,
                                                          peak_tflops));
}

}  // namespace moesim::driver
