#pragma once
// Shared by the platform and collective tests: hand-built GB300-like topologies (so the tests do
// not depend on the config loader) and a one-collective simulation run in a child process
// (SimGrid allows one Engine per process).
#include <cstdio>
#include <string>
#include <vector>

#include "moesim/platform/collective.hpp"
#include "moesim/platform/isolated_run.hpp"

namespace moesim::platform::testing {

inline constexpr double MB = 1e6;

inline Topology gb300_like(int gpus, int gpus_per_domain = 72, double oversubscription = 1.0) {
  Topology t;
  t.gpus = gpus;
  t.gpus_per_domain = gpus_per_domain;
  t.gpu_flop_per_s = 2.5e15;
  t.nvlink_bytes_per_s = 900e9;
  t.nvlink_latency_s = 1e-6;
  t.nic_bytes_per_s = 100e9;
  t.nic_latency_s = 1e-6;
  t.switch_latency_s = 0.5e-6;
  t.oversubscription = oversubscription;
  return t;
}

inline Group range_group(int first, int count) {
  Group g;
  for (int r = first; r < first + count; ++r) g.ranks.push_back(r);
  return g;
}

inline std::string format_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", s);
  return buf;
}

// One collective on an idle platform; `copies` concurrent instances (distinct tags) of it.
// folded: g.ranks[0] is the representative (and g.ranks[1] too for send_recv when
// `fold_both_ends`). Returns the simulated seconds until the last rank finished.
inline double simulate(const Topology& t, Fidelity f, CollectiveKind kind, const Group& g, double bytes,
                       int copies = 1, bool fold_both_ends = false) {
  const std::string out = run_isolated([&]() -> std::string {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    std::vector<int> reps = {g.ranks.front()};
    if (fold_both_ends) reps.push_back(g.ranks[1]);
    auto platform = Platform::build(t, f, reps);
    Platform* p = platform.get();
    const std::vector<int> actors = f == Fidelity::full ? g.ranks : reps;
    for (int copy = 0; copy < copies; ++copy) {
      const std::string tag = "test" + std::to_string(copy);
      for (int r : actors)
        sg4::Actor::create("rank" + std::to_string(r), p->host(r),
                           [p, kind, g, bytes, r, tag] { run_collective(*p, kind, g, bytes, r, tag); });
    }
    engine->run();
    return format_seconds(sg4::Engine::get_clock());
  });
  return std::stod(out);
}

}  // namespace moesim::platform::testing
