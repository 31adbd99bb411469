#pragma once
// Running scenarios in engine, trace and schedule tests.
#include "moesim/driver/run.hpp"
#include "scenario_fixtures.hpp"

namespace moesim::test {

inline driver::RunResult run(const Scenario& s, platform::Fidelity f = platform::Fidelity::folded,
                             bool record_timeline = false) {
  driver::RunOptions o;
  o.engine.fidelity = f;
  o.engine.record_timeline = record_timeline;
  o.configs_dir = configs_dir().string();
  return driver::run_scenario(s, o);
}

inline driver::RunResult recorded(const Scenario& s, platform::Fidelity f = platform::Fidelity::folded) {
  return run(s, f, true);
}

// Links so fast and so close that communication costs nothing measurable.
inline Scenario without_network_cost(Scenario s) {
  s.system.nvlink_bytes_per_s = s.system.nic_bytes_per_s = 1e18;
  s.system.nvlink_latency_s = s.system.nic_latency_s = s.system.fabric.switch_latency_s = 0;
  return s;
}

}  // namespace moesim::test
