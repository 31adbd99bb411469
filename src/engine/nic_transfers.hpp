#pragma once
// The event core's NIC transfers (event_core.hpp): the traffic between NVLink domains, over the
// links other GPUs share (NICs, a leaf's uplinks, the switches). The routes and links are the
// SimGrid platform's (Host::route_to); their sharing is moesim's FlowNetwork, SimGrid's CM02
// flow model re-solved only where a change can reach (flow_network.hpp), so a transfer's end is
// known exactly and the core never waits on SimGrid's clock.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "gpu_state.hpp"
#include "moesim/engine/flat_map.hpp"
#include "moesim/engine/flow_network.hpp"

namespace simgrid::s4u {
class Link;
}

namespace moesim::engine {

class NicTransfers {
 public:
  NicTransfers(const platform::Platform& platform, const std::vector<Gpu>& gpus)
      : platform_(platform), gpus_(gpus), recent_(gpus.size()) {}

  // Starts transfer `id` (the caller's slot, reused once its transfer ended) of `bytes` > 0 from
  // GPU `from` to GPU `to` (indices into the GPUs) at `now_s`, at most `rate_cap` bytes/s when
  // positive.
  void start(int id, int from, int to, double bytes, double rate_cap, double now_s) {
    network_.start(id, route(from, to), bytes, rate_cap, now_s);
  }
  // The latency of the route from GPU `from` to GPU `to`: what an empty transfer takes.
  double latency_s(int from, int to);
  // When the next transfer ends or pays its latency (FlowNetwork::kNever: none in flight).
  double next_event_s() { return network_.next_event_s(); }
  bool busy() const { return network_.busy(); }
  // Moves to `now_s` (at most next_event_s()); the transfers that ended are appended to `ended`.
  void advance(double now_s, std::vector<int>& ended) { network_.advance(now_s, ended); }

 private:
  int route(int from, int to);
  int lookup(int from, int to);

  // A sender's two last receivers and their routes, the latest first: a GPU sends to a few peers
  // over and over (its ring's next member, its pipeline peer), and its entry shares a cache line
  // with its neighbours', where the table's is a line of its own, cold past a thousand GPUs.
  struct RecentRoute {
    int to = -1;
    int route = -1;
  };
  using RecentRoutes = std::array<RecentRoute, 2>;

  const platform::Platform& platform_;
  const std::vector<Gpu>& gpus_;
  FlowNetwork network_;
  std::unordered_map<const simgrid::s4u::Link*, int> link_index_;
  FlatMap<int> route_index_;  // by from * GPUs + to
  std::vector<RecentRoutes> recent_;  // by sender
};

}  // namespace moesim::engine
