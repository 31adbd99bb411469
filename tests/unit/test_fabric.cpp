// The scale-out fabric as built: rail-optimised leaves (a leaf serves one rail of a leaf group of
// domains), oversubscribed uplinks to the spine shared by the leaf's GPUs, and folded
// representatives that get the share of those uplinks their symmetric peers leave them. Closed
// forms by hand; folded against full, at the collective and at the step level.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "moesim/config/loader.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/platform/simulate_plan.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"

using namespace moesim;
using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {


Topology leafy(int gpus, int per_domain, int domains_per_leaf, double oversubscription) {
  Topology t = gb300_like(gpus, per_domain, oversubscription);
  t.domains_per_leaf = domains_per_leaf;
  return t;
}

// The members of `g` with rail 0 (local index 0) of each listed domain.
Group rail0(const Topology& t, std::initializer_list<int> domains) {
  Group g;
  for (int d : domains) g.ranks.push_back(d * t.gpus_per_domain);
  return g;
}

// Several collectives at once, each member of each group running its own plan; folded: only
// the first member of each group runs (the representatives).
double simulate_together(const Topology& t, Fidelity f, const std::vector<Group>& groups, CollectiveKind kind,
                         double bytes) {
  const std::string out = run_isolated([&]() -> std::string {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    std::vector<int> reps;
    for (const Group& g : groups) reps.push_back(g.ranks.front());
    auto platform = Platform::build(t, f, reps);
    Platform* p = platform.get();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const Group& g = groups[i];
      const std::vector<int> actors = f == Fidelity::full ? g.ranks : std::vector<int>{g.ranks.front()};
      for (int r : actors)
        sg4::Actor::create("rank" + std::to_string(r), p->host(r), [p, &g, kind, bytes, r, i] {
          run_collective(*p, kind, g, bytes, r, "group" + std::to_string(i));
        });
    }
    engine->run();
    return format_seconds(sg4::Engine::get_clock());
  });
  return std::stod(out);
}

}  // namespace

TEST_CASE("traffic between domains of one leaf group stays under the leaf, unslowed by oversubscription",
          "[platform][fabric]") {
  const double M = 4 * MB;
  // 8 HGX-like domains of 8, all under one leaf group, uplinks oversubscribed 2:1.
  const Topology one_leaf = leafy(64, 8, 8, 2.0);
  const Group g = range_group(0, 64);
  const TierLoad load = tier_load(one_leaf, CollectiveKind::all_to_all, g, M);
  CHECK(load.spine_bytes == 0);
  CHECK_FALSE(load.crosses_spine);
  CHECK(closed_form_seconds(one_leaf, CollectiveKind::all_to_all, g, M) ==
        Approx(56 * M / 100e9 + one_leaf.scaleout_latency_s()));
  CHECK(bottleneck(one_leaf, CollectiveKind::all_to_all, g, M) == "nic");
  // Two leaf groups of 4 domains: 32 of a member's 56 remote peers are behind the spine, at the
  // uplink share of 100 / 2 GB/s, while the NIC carries all 56.
  const Topology two_leaves = leafy(64, 8, 4, 2.0);
  const TierLoad split = tier_load(two_leaves, CollectiveKind::all_to_all, g, M);
  CHECK(split.spine_bytes == Approx(32 * M));
  CHECK(closed_form_seconds(two_leaves, CollectiveKind::all_to_all, g, M) ==
        Approx(std::max(56 * M / 100e9, 32 * M / 50e9) + two_leaves.scaleout_latency_s()));
  CHECK(bottleneck(two_leaves, CollectiveKind::all_to_all, g, M) == "spine");
  for (const Topology& t : {one_leaf, two_leaves})
    for (Fidelity f : {Fidelity::folded, Fidelity::full}) {
      INFO((f == Fidelity::full ? "full" : "folded") << ", " << t.leaf_groups() << " leaf groups");
      CHECK(simulate(t, f, CollectiveKind::all_to_all, g, M) ==
            Approx(closed_form_seconds(t, CollectiveKind::all_to_all, g, M)).epsilon(0.01));
    }
}

TEST_CASE("a ring across leaf groups climbs to the spine on s of its d domain crossings", "[platform][fabric]") {
  const Topology t = leafy(64, 8, 2, 4.0);  // 8 domains, 4 leaf groups of 2, 4:1
  const Group g = rail0(t, {0, 1, 2, 3, 4, 5, 6, 7});  // one member per domain
  const double S = 256 * MB;
  const TierLoad load = tier_load(t, CollectiveKind::all_gather, g, S);
  // A pure NIC ring of 8: 7/8 S through each NIC, 4 of its 8 edges between leaf groups.
  CHECK(load.nic_bytes == Approx(7.0 / 8 * S));
  CHECK(load.spine_bytes == Approx(7.0 / 8 * S * 4 / 8));
  CHECK(closed_form_seconds(t, CollectiveKind::all_gather, g, S) ==
        Approx(std::max(7.0 / 8 * S / 100e9, 7.0 / 16 * S / 25e9) + 7 * t.scaleout_latency_s()));
  for (Fidelity f : {Fidelity::folded, Fidelity::full}) {
    INFO((f == Fidelity::full ? "full" : "folded"));
    CHECK(simulate(t, f, CollectiveKind::all_gather, g, S) ==
          Approx(closed_form_seconds(t, CollectiveKind::all_gather, g, S)).epsilon(0.01));
  }
}

TEST_CASE("representatives on one leaf share the uplinks their symmetric peers leave them", "[platform][fabric]") {
  // 16 domains of 8 in 4 leaf groups of 4, uplinks 2:1. Two roles, A on domains 0,1 of each
  // leaf group and B on domains 2,3: rail 0 of every leaf carries 2 GPUs of each role.
  const Topology t = leafy(128, 8, 4, 2.0);
  const Group a = rail0(t, {0, 1, 4, 5, 8, 9, 12, 13});
  const Group b = rail0(t, {2, 3, 6, 7, 10, 11, 14, 15});
  const double M = 8 * MB;
  // Each role's all-to-all alone is held to the spine share when all its leaf's GPUs climb.
  const double alone = closed_form_seconds(t, CollectiveKind::all_to_all, a, M);
  CHECK(alone == Approx(std::max(7 * M / 100e9, 6 * M / 50e9) + t.scaleout_latency_s()));
  // Both roles at once: the full platform, every GPU of both, against the two representatives
  // (ranks 0 and 16 on the leaf of group 0, rail 0) sharing one link of C / 2.
  const double full = simulate_together(t, Fidelity::full, {a, b}, CollectiveKind::all_to_all, M);
  const double folded = simulate_together(t, Fidelity::folded, {a, b}, CollectiveKind::all_to_all, M);
  CHECK(folded == Approx(full).epsilon(0.01));
  CHECK(full == Approx(alone).epsilon(0.01));
  // Role A alone on the full platform borrows B's idle share of the uplinks: faster than the
  // symmetric closed form, which assumes every GPU of the leaf climbs.
  CHECK(simulate_together(t, Fidelity::full, {a}, CollectiveKind::all_to_all, M) < 0.9 * alone);
}

TEST_CASE("a leaf's uplinks bind on what its GPUs send, not only on what they receive", "[platform][fabric]") {
  // One-way transfers (pipeline sends): rail 0 of the four domains of leaf group 0 each send to a
  // GPU behind the spine, in leaf groups 1, 2, 3 and 1 again. The senders' leaf climbs 4 flows
  // into its rail's uplinks of 4 x 100 / 2 GB/s; no receiving leaf takes more than 2. Each
  // transfer runs at 50 GB/s, the share its own leaf leaves it, as a lone one is priced.
  const Topology t = leafy(128, 8, 4, 2.0);
  const double M = 64 * MB;
  std::vector<Group> pairs(4);
  pairs[0].ranks = {0, 32};
  pairs[1].ranks = {8, 64};
  pairs[2].ranks = {16, 96};
  pairs[3].ranks = {24, 40};
  const double lone = closed_form_seconds(t, CollectiveKind::send_recv, pairs[0], M);
  CHECK(lone == Approx(M / 50e9 + t.scaleout_latency_s()));
  for (Fidelity f : {Fidelity::folded, Fidelity::full}) {
    INFO((f == Fidelity::full ? "full" : "folded"));
    CHECK(simulate_together(t, f, pairs, CollectiveKind::send_recv, M) == Approx(lone).epsilon(0.01));
  }
}

TEST_CASE("a representative's own flows compete on its NIC and uplink share as in the full platform",
          "[platform][fabric]") {
  // The same members run an all-to-all and a ring all-reduce at once (EP and DP of one rank).
  const Topology t = leafy(64, 8, 2, 2.0);
  const Group g = rail0(t, {0, 1, 2, 3, 4, 5, 6, 7});
  const double M = 4 * MB;
  const std::string out_full = run_isolated([&]() -> std::string {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    auto platform = Platform::build(t, Fidelity::full);
    Platform* p = platform.get();
    for (int r : g.ranks) {
      sg4::Actor::create("a2a" + std::to_string(r), p->host(r),
                         [p, &g, r, M] { run_collective(*p, CollectiveKind::all_to_all, g, M, r, "ep"); });
      sg4::Actor::create("ar" + std::to_string(r), p->host(r),
                         [p, &g, r, M] { run_collective(*p, CollectiveKind::all_reduce, g, 16 * M, r, "dp"); });
    }
    engine->run();
    return format_seconds(sg4::Engine::get_clock());
  });
  const std::string out_folded = run_isolated([&]() -> std::string {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    auto platform = Platform::build(t, Fidelity::folded, {g.ranks.front()});
    Platform* p = platform.get();
    const int r = g.ranks.front();
    sg4::Actor::create("a2a", p->host(r), [p, &g, r, M] { run_collective(*p, CollectiveKind::all_to_all, g, M, r, "ep"); });
    sg4::Actor::create("ar", p->host(r),
                       [p, &g, r, M] { run_collective(*p, CollectiveKind::all_reduce, g, 16 * M, r, "dp"); });
    engine->run();
    return format_seconds(sg4::Engine::get_clock());
  });
  const double full = std::stod(out_full), folded = std::stod(out_folded);
  CHECK(folded == Approx(full).epsilon(0.01));
  // Together they take longer than either alone: they share the NIC and the uplink share.
  CHECK(full > closed_form_seconds(t, CollectiveKind::all_to_all, g, M) * 1.05);
  CHECK(full > closed_form_seconds(t, CollectiveKind::all_reduce, g, 16 * M) * 1.05);
}

TEST_CASE("folded equals full over an oversubscribed fabric with DP and EP across leaf groups",
          "[engine][fabric]") {
  auto run = [](const Scenario& s, Fidelity f) {
    driver::RunOptions o;
    o.engine.fidelity = f;
    o.configs_dir = test::configs_dir().string();
    return driver::run_scenario(s, o);
  };
  // 128 GPUs in domains of 16, leaf groups of 2 domains, uplinks 2:1. EP32 spans the two domains
  // of one leaf group; dense DP (64) and expert DP (2) span two leaf groups.
  Scenario dp = test::small_moe(3);
  dp.gpus = 128;
  dp.layout.gpus_per_domain = 16;
  dp.system.fabric.gpus_per_leaf = 2;
  dp.system.fabric.oversubscription = 2.0;
  dp.training.global_batch = 128;
  // EP64 over two racks of 32, each rack its own leaf group: EP crosses the spine.
  Scenario ep = test::small_moe(3);
  ep.gpus = 128;
  ep.layout.ep = 64;
  ep.system.fabric.gpus_per_leaf = 1;
  ep.system.fabric.oversubscription = 2.0;
  ep.training.global_batch = 128;
  for (const Scenario& s : {dp, ep}) {
    INFO("EP" << s.layout.ep << ", " << s.layout.gpus_per_domain << " GPUs per domain, " << s.system.fabric.gpus_per_leaf
              << " domains per leaf group");
    const auto folded = run(s, Fidelity::folded);
    const auto full = run(s, Fidelity::full);
    CHECK(full.sim.simulated_gpus == 128);
    CHECK(full.metrics.step_time_s == Approx(folded.metrics.step_time_s).epsilon(0.01));
    CHECK(folded.sim.stages.front().traffic.other_nic_bytes > 0);
  }
}

TEST_CASE("static ECMP: the mean uplink load over the busiest one's, balls into bins by hand", "[platform][fabric]") {
  CHECK(ecmp_efficiency(1, 1) == 1.0);
  CHECK(ecmp_efficiency(5, 1) == 1.0);
  // 2 flows on 2 uplinks: the same uplink with probability 1/2, E[max] = 1.5.
  CHECK(ecmp_efficiency(2, 2) == Approx(1.0 / 1.5));
  // 3 on 2: all on one uplink with probability 2/8 (max 3), else max 2: E[max] = 2.25.
  CHECK(ecmp_efficiency(3, 2) == Approx(1.5 / 2.25));
  // 4 on 2: (4,0) 2/16, (3,1) 8/16, (2,2) 6/16: E[max] = 2.75.
  CHECK(ecmp_efficiency(4, 2) == Approx(2.0 / 2.75));
  // 1 flow on 5 uplinks: the busiest carries it, the mean is 1/5.
  CHECK(ecmp_efficiency(1, 5) == Approx(0.2));
  CHECK_THROWS_AS(ecmp_efficiency(0, 4), std::invalid_argument);
  // Against a seeded Monte Carlo of the hash: exactly computed (72 x 72, a GB300 leaf with one
  // flow per NIC) and Poisson-approximated (2,000 flows on 100 uplinks).
  for (const auto& [flows, uplinks] : {std::pair{72, 72}, std::pair{2000, 100}}) {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> pick(0, uplinks - 1);
    double sum_max = 0;
    constexpr int kTrials = 20000;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<int> load(static_cast<std::size_t>(uplinks), 0);
      for (int f = 0; f < flows; ++f) ++load[static_cast<std::size_t>(pick(rng))];
      sum_max += *std::max_element(load.begin(), load.end());
    }
    INFO(flows << " flows on " << uplinks << " uplinks");
    CHECK(ecmp_efficiency(flows, uplinks) == Approx(double(flows) / uplinks / (sum_max / kTrials)).epsilon(0.02));
  }
  // Far beyond any Monte Carlo: 1,024 flows per uplink on 65,536 uplinks (the schema's largest
  // leaf, 1,024 flows per NIC) follows the law of heavy loads, max ~ m + sqrt(2 m ln n), to its
  // first order, and takes no time.
  const double m = 1024, n = 65536;
  CHECK(ecmp_efficiency(1024 * 65536, 65536) == Approx(m / (m + std::sqrt(2 * m * std::log(n)))).epsilon(0.02));
}

TEST_CASE("ECMP routing slows the traffic between leaf groups alike in the closed forms and both fidelities",
          "[platform][fabric]") {
  // HGX H100 with ECMP: NCCL's 16 channels over a node's 8 NICs, 2 flows per NIC; 32 NICs per
  // leaf hash 64 flows onto 32 uplinks.
  SystemSpec h100 = config::load_system("hgx-h100", test::configs_dir());
  REQUIRE(make_topology(h100, 1024, 0, Precision::bf16).spine_routing_efficiency == 1.0);
  h100.fabric.routing = "ecmp";
  const Topology ecmp = make_topology(h100, 1024, 0, Precision::bf16);
  CHECK(ecmp.spine_routing_efficiency == Approx(ecmp_efficiency(64, 32)));
  CHECK(ecmp.spine_routing_efficiency < 0.6);
  h100.fabric.ecmp_flows_per_nic = 8;
  CHECK(make_topology(h100, 1024, 0, Precision::bf16).spine_routing_efficiency == Approx(ecmp_efficiency(256, 32)));
  // A ring across leaf groups at 1:1: ECMP makes the spine the bound, in both fidelities.
  Topology t = leafy(64, 8, 2, 1.0);
  t.spine_routing_efficiency = 0.4;
  const Group g = rail0(t, {0, 1, 2, 3, 4, 5, 6, 7});
  const double S = 256 * MB;
  CHECK(closed_form_seconds(t, CollectiveKind::all_gather, g, S) ==
        Approx(7.0 / 16 * S / 40e9 + 7 * t.scaleout_latency_s()));
  CHECK(bottleneck(t, CollectiveKind::all_gather, g, S) == "spine");
  for (Fidelity f : {Fidelity::folded, Fidelity::full}) {
    INFO((f == Fidelity::full ? "full" : "folded"));
    CHECK(simulate(t, f, CollectiveKind::all_gather, g, S) ==
          Approx(closed_form_seconds(t, CollectiveKind::all_gather, g, S)).epsilon(0.01));
  }
}

TEST_CASE("a degraded NIC or leaf holds up every member of a ring, folded and full alike", "[platform][fabric][whatif]") {
  const double S = 256 * MB;
  for (Fidelity f : {Fidelity::folded, Fidelity::full}) {
    INFO((f == Fidelity::full ? "full" : "folded"));
    // The NICs of domain 3 at half speed: a NIC-bound ring of 8 (one member per domain, no
    // oversubscription) runs at the slow NIC's rate, as if every NIC were that slow.
    Topology t = leafy(64, 8, 2, 1.0);
    const Group g = rail0(t, {0, 1, 2, 3, 4, 5, 6, 7});
    Topology all_slow = t;
    all_slow.nic_bytes_per_s *= 0.5;
    FabricFaults nic;
    nic.nic_domain = 3;
    nic.nic_speed = 0.5;
    apply_fabric_faults(t, nic);
    CHECK(t.nic_speed_of(24) == 0.5);
    CHECK(t.nic_speed_of(32) == 1.0);
    const double expected = closed_form_seconds(all_slow, CollectiveKind::all_gather, g, S);
    CHECK(expected > 1.9 * closed_form_seconds(leafy(64, 8, 2, 1.0), CollectiveKind::all_gather, g, S));
    CHECK(simulate(t, f, CollectiveKind::all_gather, g, S) == Approx(expected).epsilon(0.01));
    // A group that avoids domain 3 does not see it.
    const Group clear = rail0(t, {0, 1, 4, 5});
    CHECK(simulate(t, f, CollectiveKind::all_gather, clear, S) ==
          Approx(closed_form_seconds(leafy(64, 8, 2, 1.0), CollectiveKind::all_gather, clear, S)).epsilon(0.01));

    // The uplinks of leaf group 2 at half capacity, 4:1 oversubscribed: the ring's spine part
    // runs at half the spine share, as if every leaf were 8:1.
    Topology leaf = leafy(64, 8, 2, 4.0);
    FabricFaults uplinks;
    uplinks.uplink_leaf_group = 2;
    uplinks.uplink_speed = 0.5;
    apply_fabric_faults(leaf, uplinks);
    const double spine_bound = closed_form_seconds(leafy(64, 8, 2, 8.0), CollectiveKind::all_gather, g, S);
    CHECK(simulate(leaf, f, CollectiveKind::all_gather, g, S) == Approx(spine_bound).epsilon(0.01));
  }
  Topology t = leafy(64, 8, 2, 1.0);
  FabricFaults outside;
  outside.uplink_leaf_group = 4;  // 4 leaf groups: 0..3
  outside.uplink_speed = 0.5;
  CHECK_THROWS_AS(apply_fabric_faults(t, outside), std::invalid_argument);
}
