// FlowNetwork (the full fidelity's NIC transfers) against hand-worked max-min sharing, and its
// incremental re-solve against a global one that re-solves every flow at every event, as
// SimGrid's network/optim:Full does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "moesim/engine/flow_network.hpp"

using moesim::engine::FlowNetwork;

namespace {

// Runs the network until idle; the end date of each flow by id.
std::map<int, double> run_to_end(FlowNetwork& net) {
  std::map<int, double> end;
  std::vector<int> ended;
  while (net.busy()) {
    const double t = net.next_event_s();
    ended.clear();
    net.advance(t, ended);
    for (int id : ended) end[id] = t;
  }
  return end;
}

}  // namespace

TEST_CASE("A flow alone pays its latency, then runs at its slowest link", "[flow-network]") {
  FlowNetwork net;
  const int nic = net.add_link(100), uplink = net.add_link(40), far_nic = net.add_link(100);
  const int route = net.add_route(std::vector<int>{nic, uplink, far_nic}, 0.5);
  net.start(0, route, 200, 0, 1.0);
  CHECK(net.next_event_s() == Approx(1.5));
  const std::map<int, double> end = run_to_end(net);
  CHECK(end.at(0) == Approx(1.5 + 200.0 / 40));
}

TEST_CASE("A route holds up to eight links of its own; a longer one is refused with its length", "[flow-network]") {
  // A route's links live inside it (no vector of their own): the platform's longest is five (NIC,
  // leaf uplink, spine, leaf uplink, NIC).
  FlowNetwork net;
  std::vector<int> links;
  for (int i = 0; i < 9; ++i) links.push_back(net.add_link(10.0 * (i + 1)));
  const std::vector<int> eight(links.begin(), links.begin() + 8);
  const int route = net.add_route(eight, 0.0);
  net.start(0, route, 100, 0, 0.0);
  CHECK(run_to_end(net).at(0) == Approx(100.0 / 10));  // its slowest link, the first of eight
  CHECK_THROWS_WITH(net.add_route(links, 0.0), Catch::Contains("a route of 9 links (at most 8)"));
}

TEST_CASE("Flows on one NIC share it equally, and the survivor speeds up", "[flow-network]") {
  FlowNetwork net;
  const int nic = net.add_link(100), a = net.add_link(100), b = net.add_link(100);
  const int to_a = net.add_route(std::vector<int>{nic, a}, 1.0);
  const int to_b = net.add_route(std::vector<int>{nic, b}, 1.0);
  net.start(0, to_a, 100, 0, 0);  // alone from 1 s (its latency paid) until flow 1's comes, at 1.5 s
  net.start(1, to_b, 300, 0, 0.5);
  std::vector<int> ended;
  net.advance(1.6, ended);
  CHECK(net.rate_of(0) == Approx(50));
  CHECK(net.rate_of(1) == Approx(50));
  // Flow 0: 50 bytes by 1.5 s, the other 50 at 50/s: ends at 2.5 s. Flow 1: 50 bytes by then,
  // 250 more at 100/s: ends at 5 s.
  const std::map<int, double> end = run_to_end(net);
  CHECK(end.at(0) == Approx(2.5));
  CHECK(end.at(1) == Approx(5.0));
}

TEST_CASE("Shares are weighted by 1 / the route's latency, as SimGrid's CM02", "[flow-network]") {
  FlowNetwork net;
  const int nic = net.add_link(90), a = net.add_link(1000), b = net.add_link(1000);
  const int near = net.add_route(std::vector<int>{nic, a}, 1.0);
  const int far = net.add_route(std::vector<int>{nic, b}, 2.0);
  net.start(0, near, 1e6, 0, 0);
  net.start(1, far, 1e6, 0, 0);
  std::vector<int> ended;
  net.advance(net.next_event_s(), ended);  // flow 0 past its latency: alone at 90
  CHECK(net.rate_of(0) == Approx(90));
  net.advance(net.next_event_s(), ended);  // flow 1 past its: weights 1 and 1/2
  CHECK(net.rate_of(0) == Approx(60));
  CHECK(net.rate_of(1) == Approx(30));
}

TEST_CASE("A capped flow leaves the rest of its links to the others", "[flow-network]") {
  FlowNetwork net;
  const int nic = net.add_link(100), a = net.add_link(100), b = net.add_link(100);
  const int to_a = net.add_route(std::vector<int>{nic, a}, 1.0);
  const int to_b = net.add_route(std::vector<int>{nic, b}, 1.0);
  net.start(0, to_a, 1e6, 20, 0);
  net.start(1, to_b, 1e6, 0, 0);
  std::vector<int> ended;
  net.advance(1.0, ended);
  CHECK(net.rate_of(0) == Approx(20));
  CHECK(net.rate_of(1) == Approx(80));
}

TEST_CASE("An oversubscribed uplink couples its NICs; one that cannot saturate couples nobody",
          "[flow-network]") {
  // Three NICs of 10 under an uplink of 15 (oversubscribed) and a spine of 1,000 that no set of
  // flows from these NICs can fill.
  FlowNetwork net;
  std::vector<int> senders, receivers;
  for (int i = 0; i < 3; ++i) {
    senders.push_back(net.add_link(10));
    receivers.push_back(net.add_link(10));
  }
  const int uplink = net.add_link(15), spine = net.add_link(1000), local = net.add_link(10);
  for (int i = 0; i < 3; ++i)
    net.start(i, net.add_route(std::vector<int>{senders[i], uplink, spine, receivers[i]}, 1.0), i == 0 ? 5 : 100, 0, 0);
  // NIC 0 also sends under the leaf, not through the uplink.
  net.start(3, net.add_route(std::vector<int>{senders[0], local}, 1.0), 1e6, 0, 0);
  std::vector<int> ended;
  net.advance(1.0, ended);
  // Max-min: the uplink gives each of its three flows 5; NIC 0's local flow takes the 5 left.
  for (int i = 0; i < 3; ++i) CHECK(net.rate_of(i) == Approx(5));
  CHECK(net.rate_of(3) == Approx(5));
  net.advance(2.0, ended);  // flow 0 done (5 bytes at 5/s)
  REQUIRE(ended == std::vector<int>{0});
  // The two left on the uplink share it (7.5 each); NIC 0's local flow gets all of NIC 0: the
  // share SimGrid's lazy update got wrong (the climbing flows at twice theirs), re-solved here.
  CHECK(net.rate_of(1) == Approx(7.5));
  CHECK(net.rate_of(2) == Approx(7.5));
  CHECK(net.rate_of(3) == Approx(10));
}

namespace {

// The reference: every flow in flight re-solved at every event (weighted max-min with bounds,
// global water-filling), like SimGrid's Full update.
struct GlobalFlow {
  std::vector<int> links;
  double start, latency, remaining, bound, weight, rate = 0;
  bool done = false;
};

void global_solve(std::vector<GlobalFlow>& flows, const std::vector<double>& capacity, double now) {
  std::vector<int> live;
  for (std::size_t i = 0; i < flows.size(); ++i)
    if (!flows[i].done && flows[i].start + flows[i].latency <= now) live.push_back(static_cast<int>(i));
  std::vector<double> room = capacity;
  std::vector<bool> fixed(flows.size(), false);
  std::size_t left = live.size();
  for (auto& f : flows) f.rate = 0;
  while (left > 0) {
    std::vector<double> weight(capacity.size(), 0);
    for (int i : live)
      if (!fixed[static_cast<std::size_t>(i)])
        for (int l : flows[static_cast<std::size_t>(i)].links) weight[static_cast<std::size_t>(l)] += flows[static_cast<std::size_t>(i)].weight;
    double share = FlowNetwork::kNever;
    int tight = -1;
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (weight[l] > 0 && std::max(0.0, room[l]) / weight[l] < share) {
        share = std::max(0.0, room[l]) / weight[l];
        tight = static_cast<int>(l);
      }
    int bounded = -1;
    for (int i : live) {
      const GlobalFlow& f = flows[static_cast<std::size_t>(i)];
      if (!fixed[static_cast<std::size_t>(i)] && f.bound / f.weight <= share) {
        share = f.bound / f.weight;
        bounded = i;
      }
    }
    for (int i : live) {
      GlobalFlow& f = flows[static_cast<std::size_t>(i)];
      if (fixed[static_cast<std::size_t>(i)]) continue;
      const bool on_tight = bounded < 0 && std::find(f.links.begin(), f.links.end(), tight) != f.links.end();
      if (i != bounded && !on_tight) continue;
      f.rate = bounded == i ? f.bound : share * f.weight;
      fixed[static_cast<std::size_t>(i)] = true;
      --left;
      for (int l : f.links) room[static_cast<std::size_t>(l)] -= f.rate;
    }
  }
}

}  // namespace

TEST_CASE("Re-solving only what a change reaches gives the global re-solve's dates", "[flow-network]") {
  // A small fat tree: 4 leaves of 4 NICs (10 each way), each leaf's uplink 20 (oversubscribed)
  // and a spine of 1,000; 60 flows of random sizes, starts and caps between random NICs, some
  // under one leaf (NIC, NIC) and some through the spine (NIC, uplink, spine, uplink, NIC).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  FlowNetwork net;
  std::vector<double> capacity;
  const auto link = [&](double c) {
    capacity.push_back(c);
    return net.add_link(c);
  };
  std::vector<int> up, down, uplink_up, uplink_down;
  for (int i = 0; i < 16; ++i) {
    up.push_back(link(10));
    down.push_back(link(10));
  }
  for (int leaf = 0; leaf < 4; ++leaf) {
    uplink_up.push_back(link(20));
    uplink_down.push_back(link(20));
  }
  const int spine = link(1000);
  std::vector<GlobalFlow> reference;
  struct Start {
    double t;
    int id, route;
    double bytes, cap;
  };
  std::vector<Start> starts;
  for (int id = 0; id < 60; ++id) {
    const int from = static_cast<int>(unit(rng) * 16), to = (from + 1 + static_cast<int>(unit(rng) * 15)) % 16;
    std::vector<int> links;
    double latency = 0;
    if (from / 4 == to / 4) {
      links = {up[static_cast<std::size_t>(from)], down[static_cast<std::size_t>(to)]};
      latency = 1e-3;
    } else {
      links = {up[static_cast<std::size_t>(from)], uplink_up[static_cast<std::size_t>(from / 4)], spine,
               uplink_down[static_cast<std::size_t>(to / 4)], down[static_cast<std::size_t>(to)]};
      latency = 3e-3;
    }
    const double cap = unit(rng) < 0.3 ? 2 + 6 * unit(rng) : 0;
    const double bytes = 1 + 50 * unit(rng);
    const double t = 10 * unit(rng);
    starts.push_back({t, id, net.add_route(links, latency), bytes, cap});
    reference.push_back({links, t, latency, bytes, cap > 0 ? std::min(cap, 10.0) : 10.0, 1 / latency});
  }
  std::sort(starts.begin(), starts.end(), [](const Start& a, const Start& b) { return a.t < b.t; });

  // The network under test, starts interleaved with its own events.
  std::map<int, double> end;
  std::vector<int> ended;
  std::size_t next = 0;
  while (next < starts.size() || net.busy()) {
    const double t = net.next_event_s();
    if (next < starts.size() && starts[next].t <= t) {
      const Start& s = starts[next++];
      net.start(s.id, s.route, s.bytes, s.cap, s.t);
      continue;
    }
    ended.clear();
    net.advance(t, ended);
    for (int id : ended) end[id] = t;
  }

  // The reference, event by event: starts, latencies paid, ends.
  double now = 0;
  std::map<int, double> reference_end;
  while (reference_end.size() < reference.size()) {
    global_solve(reference, capacity, now);
    double t = FlowNetwork::kNever;
    for (const GlobalFlow& f : reference) {
      if (f.done) continue;
      if (f.start > now) t = std::min(t, f.start);
      else if (f.start + f.latency > now) t = std::min(t, f.start + f.latency);
      else t = std::min(t, now + f.remaining / f.rate);
    }
    for (std::size_t i = 0; i < reference.size(); ++i) {
      GlobalFlow& f = reference[i];
      if (f.done || f.rate <= 0) continue;
      f.remaining -= f.rate * (t - now);
      if (f.remaining <= 1e-9) {
        f.done = true;
        reference_end[static_cast<int>(i)] = t;
      }
    }
    now = t;
  }

  REQUIRE(end.size() == reference.size());
  for (const auto& [id, t] : reference_end) {
    INFO("flow " << id);
    CHECK(end.at(id) == Approx(t).epsilon(1e-9));
  }
}
