#pragma once
// Flows sharing the links of the scale-out network (NICs, a leaf's uplinks, switches), priced as
// SimGrid's CM02 flow model prices them under network/optim:Full: a flow first waits its route's
// latency, then takes its max-min share of every link it crosses, weighted by 1 / that latency
// (CM02's sharing penalty is the route's latency), at most its bound (its rate cap, and its
// slowest link). Where SimGrid re-solves every flow in flight at each start and end (n flows,
// n events: n^2), this re-solves only the flows a change can reach: those coupled to it through
// links that can saturate. A link that cannot (what its flows could carry at most, bounded by
// their own bounds and by the NICs that feed it, fits its capacity: the spine, a non-blocking
// leaf's uplinks) is a redundant constraint, so it couples nobody and the max-min allocation is
// the same without it.
#include <array>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <unordered_set>
#include <vector>

namespace moesim::engine {

class FlowNetwork {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  // A link of `bytes_per_s` > 0, shared by the flows that cross it. Returns its index.
  int add_link(double bytes_per_s);
  // A route over `links` (their indices, in order: the first is the sender's NIC, the last the
  // receiver's) of `latency_s` in all. Returns its index.
  int add_route(std::span<const int> links, double latency_s);

  // Starts flow `id` (the caller's: a non-negative integer unique among the flows in flight) of
  // `bytes` > 0 over `route` at `now_s`, at most `rate_cap` bytes/s when positive.
  void start(int id, int route, double bytes, double rate_cap, double now_s);
  // The date of the next latency paid or flow ended (kNever: none in flight).
  double next_event_s();
  // Moves to `now_s`, date by date: the flows that end by then are appended to `ended`.
  void advance(double now_s, std::vector<int>& ended);
  bool busy() const { return in_flight_ > 0; }
  double latency_s(int route) const { return routes_[static_cast<std::size_t>(route)].latency_s; }
  // A flow's current rate (0 while it pays its latency), for tests.
  double rate_of(int id) const { return flows_[static_cast<std::size_t>(id)].rate; }

 private:
  // The longest route: a NIC, a leaf's uplink, the spine, a leaf's uplink, a NIC (5) with room
  // for a tier more. A route's links and a flow's places in them are kept inside the route and
  // the flow, not in vectors of their own: each vector was a line more to read at every start,
  // share and end of a transfer, cold past a thousand GPUs.
  static constexpr std::size_t kMaxRouteLinks = 8;

  // What a re-solve and a flow's share read, in one cache line.
  struct alignas(64) Link {
    double capacity = 0;
    double sum_of_bounds = 0;
    // What the NICs that feed it can carry: the capacity of the senders' NICs unless it is one
    // of them (the first link of a route), of the receivers' unless it is one of them (the last).
    double feeders_bound = kNever;
    std::uint64_t mark = 0;  // the re-solve that reached it
    std::vector<int> flows;  // flows past their latency that cross it
  };
  static_assert(sizeof(Link) == 64);
  // How a link's feeders_bound is counted as routes are added: not read after.
  struct LinkFeeders {
    double senders_capacity = 0, receivers_capacity = 0;
    bool first_of_a_route = false, last_of_a_route = false;
  };
  struct alignas(64) Route {
    double latency_s = 0;
    double slowest_link = kNever;
    std::uint32_t size = 0;
    std::array<int, kMaxRouteLinks> links{};
    std::span<const int> hops() const { return {links.data(), size}; }
  };
  static_assert(sizeof(Route) == 64);
  struct alignas(64) Flow {
    int route = -1;
    bool active = false;    // in flight
    bool sharing = false;   // past its latency
    bool fixed = false;     // in the current re-solve
    double remaining = 0;   // bytes, as of `updated_s`
    double updated_s = 0;
    double rate = 0;
    double bound = 0;
    double weight = 1;      // 1 / its route's latency
    std::uint64_t version = 0;
    std::uint64_t mark = 0;
    std::array<int, kMaxRouteLinks> position{};  // its index in each of its route's links' flows
  };
  struct Due {
    double t;
    int flow;
    std::uint64_t version;
    bool operator>(const Due& o) const { return t != o.t ? t > o.t : flow > o.flow; }
  };

  bool may_saturate(const Link& l) const;
  void share(int id, double now_s);    // past its latency: takes its share on its links
  void unshare(int id);                // ended: leaves its links
  void resolve(double now_s);          // the flows reached from seeds_, re-solved
  void set_rate(int id, double rate, double now_s);

  // Counts NIC `nic` once among the feeders of `link` (as sender or receiver).
  bool new_feeder(int link, int nic, bool sender);

  std::vector<Link> links_;
  std::vector<LinkFeeders> feeders_of_;  // by link
  std::unordered_set<std::uint64_t> feeders_;  // (link, NIC, side) already counted
  std::vector<Route> routes_;
  std::vector<Flow> flows_;
  int in_flight_ = 0;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  std::uint64_t mark_ = 0;
  // Scratch of a re-solve.
  std::vector<int> seeds_, component_, component_links_;
  std::vector<double> link_room_, link_weight_;
  std::vector<int> link_unfixed_;
};

}  // namespace moesim::engine
