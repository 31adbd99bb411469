// The Engine settings that make SimGrid's flow model match the closed forms
// (SG-CFG in docs/sources.md): LV08, the default, multiplies latencies by 13.01, scales
// bandwidth by 0.97 and adds 5 % reverse traffic; TCP-gamma caps a flow at gamma / (2 latency).
#include <xbt/log.h>

#include "moesim/platform/platform.hpp"

namespace moesim::platform {

void configure_engine() {
  // Configuration freezes when the first zone is created (notes §2.2): call before build().
  simgrid::s4u::Engine::set_config("network/model:CM02");
  simgrid::s4u::Engine::set_config("network/crosstraffic:0");
  simgrid::s4u::Engine::set_config("network/TCP-gamma:1e12");
  // Lazy updates (the default) mis-share a leaf's uplinks in SimGrid 3.32: when the flows under
  // a leaf finish before those climbing to the spine, the climbing flows were left at twice
  // their max-min share (tests/unit/test_fabric.cpp, the ring across leaf groups); Full
  // re-solves every flow's share at each completion.
  simgrid::s4u::Engine::set_config("network/optim:Full");
}

std::unique_ptr<simgrid::s4u::Engine> make_engine() {
  // The Engine parses (and may rewrite) argc/argv; static storage keeps them valid throughout.
  static int argc = 1;
  static char name[] = "moesim";
  static char* argv[] = {name, nullptr};
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  xbt_log_control_set("root.thres:critical");
  configure_engine();
  return engine;
}

}  // namespace moesim::platform
