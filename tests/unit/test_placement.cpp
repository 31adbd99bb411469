// Placement what-ifs (Scenario::placement): which GPU each rank runs on. The orders' invariants
// (whole nodes, every GPU once, the same seed the same placement), a collective whose members
// the placement spreads over racks against its closed form, and a whole step in both fidelities.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "moesim/driver/run.hpp"
#include "moesim/platform/topology.hpp"
#include "run_support.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"

using namespace moesim;

namespace {

platform::Topology racks(int gpus, int per_domain) {
  platform::Topology t;
  t.gpus = gpus;
  t.gpus_per_domain = per_domain;
  return t;
}

// Every GPU holds exactly one rank, and the ranks of a node stay together on consecutive GPUs.
void check_whole_nodes(const platform::Topology& t, int per_node) {
  std::set<int> gpus;
  for (int r = 0; r < t.gpus; ++r) {
    const int g = t.gpu_of(r);
    REQUIRE(g >= 0);
    REQUIRE(g < t.gpus);
    gpus.insert(g);
    CHECK(g % per_node == r % per_node);
    CHECK(t.gpu_of(r - r % per_node) + r % per_node == g);
  }
  CHECK(static_cast<int>(gpus.size()) == t.gpus);
}

}  // namespace

TEST_CASE("in_order leaves every rank on its own GPU, rack by rack", "[placement]") {
  platform::Topology t = racks(256, 64);
  platform::apply_placement(t, "in_order", 4, 1);
  for (int r : {0, 63, 64, 255}) {
    CHECK(t.gpu_of(r) == r);
    CHECK(t.domain_of(r) == r / 64);
    CHECK(t.rail_of(r) == r % 64);
  }
}

TEST_CASE("round_robin_nodes deals the job's nodes to the racks in turn", "[placement]") {
  platform::Topology t = racks(256, 64);
  platform::apply_placement(t, "round_robin_nodes", 4, 1);
  check_whole_nodes(t, 4);
  // Node k (ranks 4k..4k+3) in rack k mod 4, as its (k div 4)-th node.
  for (int k : {0, 1, 2, 3, 4, 5, 63}) {
    CHECK(t.domain_of(4 * k) == k % 4);
    CHECK(t.rail_of(4 * k + 3) == 4 * (k / 4) + 3);
  }
  // An EP group of 32 consecutive ranks (8 nodes) now has 8 members in each rack.
  std::vector<int> members(4, 0);
  for (int r = 0; r < 32; ++r) ++members[static_cast<std::size_t>(t.domain_of(r))];
  CHECK(members == std::vector<int>{8, 8, 8, 8});

  SECTION("a partial last rack drops out of the cycle once full") {
    platform::Topology p = racks(72 + 8, 72);  // 18 + 2 nodes of 4
    platform::apply_placement(p, "round_robin_nodes", 4, 1);
    check_whole_nodes(p, 4);
    CHECK(p.domain_of(0) == 0);
    CHECK(p.domain_of(4) == 1);
    CHECK(p.domain_of(8) == 0);
    CHECK(p.domain_of(12) == 1);
    CHECK(p.domain_of(16) == 0);  // rack 1 holds its 2 nodes
    CHECK(p.domain_of(79) == 0);
  }
}

TEST_CASE("random_nodes is a seeded shuffle of whole nodes", "[placement]") {
  platform::Topology a = racks(1024, 64), b = racks(1024, 64), c = racks(1024, 64);
  platform::apply_placement(a, "random_nodes", 4, 7);
  platform::apply_placement(b, "random_nodes", 4, 7);
  platform::apply_placement(c, "random_nodes", 4, 8);
  check_whole_nodes(a, 4);
  check_whole_nodes(c, 4);
  CHECK(a.gpu_of_rank == b.gpu_of_rank);
  CHECK(a.gpu_of_rank != c.gpu_of_rank);
  // A shuffle, not the identity: most of the 256 nodes moved.
  int moved = 0;
  for (int r = 0; r < 1024; r += 4) moved += a.gpu_of(r) != r ? 1 : 0;
  CHECK(moved > 200);
}

TEST_CASE("A placement that splits nodes, or an unknown one, is refused", "[placement]") {
  platform::Topology t = racks(256, 62);
  CHECK_THROWS_AS(platform::apply_placement(t, "round_robin_nodes", 4, 1), std::invalid_argument);
  t = racks(256, 64);
  CHECK_THROWS_AS(platform::apply_placement(t, "shuffled", 4, 1), std::invalid_argument);
}

TEST_CASE("A ring the placement spreads over two racks crosses their NICs: the closed form", "[placement]") {
  // 8 ranks, racks of 4 GPUs, nodes of 2: in order the ring of ranks 0-3 stays on NVLink; dealt
  // round robin, ranks 0-1 and 2-3 sit in different racks and the ring crosses the NICs. No
  // latencies: the bytes alone.
  using namespace platform;
  Topology t = testing::gb300_like(8, 4);
  t.nvlink_latency_s = t.nic_latency_s = t.switch_latency_s = 0;
  const Group g = testing::range_group(0, 4);
  const double bytes = 1e9;
  CHECK(closed_form_seconds(t, CollectiveKind::all_gather, g, bytes) == Approx(3.0 / 4 * bytes / 900e9));
  apply_placement(t, "round_robin_nodes", 2, 1);
  REQUIRE(t.domain_of(2) == 1);
  // Two members per rack: one of each member's two ring edges per rack is the NIC, so half of
  // its (n-1)/n S crosses it.
  const double spread = 3.0 / 4 * bytes / 2 / 100e9;
  CHECK(closed_form_seconds(t, CollectiveKind::all_gather, g, bytes) == Approx(spread));
  for (Fidelity f : {Fidelity::folded, Fidelity::full})
    CHECK(testing::simulate(t, f, CollectiveKind::all_gather, g, bytes) == Approx(spread).epsilon(0.01));
}

TEST_CASE("Nodes dealt round robin spread each EP group over the racks: folded and full agree", "[placement][whatif]") {
  // 64 GPUs in two racks of 32, EP 32: in order each stage's EP group fills a rack; round robin
  // puts 16 of its members in each rack, so the all-to-alls cross the NICs.
  Scenario s = test::identical_gpus(test::small_moe(4));
  const driver::RunResult in_order = test::run(s, platform::Fidelity::folded);
  s.placement = "round_robin_nodes";
  const driver::RunResult folded = test::run(s, platform::Fidelity::folded);
  const driver::RunResult full = test::run(s, platform::Fidelity::full);
  INFO("in order " << in_order.metrics.step_time_s << " s, round robin: folded " << folded.metrics.step_time_s
                   << " s, full " << full.metrics.step_time_s << " s");
  CHECK(in_order.sim.stages.front().traffic.ep_nic_bytes == 0);
  // Half of each member's peers are in the other rack now: the dispatcher's RDMA copies (one per
  // token and other rack) cross the NICs.
  CHECK(folded.sim.stages.front().traffic.ep_nic_bytes > 0.1 * folded.sim.stages.front().traffic.ep_nvlink_bytes);
  CHECK(folded.metrics.step_time_s != Approx(in_order.metrics.step_time_s).epsilon(1e-3));
  CHECK(full.metrics.step_time_s == Approx(folded.metrics.step_time_s).epsilon(0.005));
  // Random nodes need every GPU: refused in folded fidelity.
  s.placement = "random_nodes";
  CHECK_THROWS(test::run(s, platform::Fidelity::folded));
  CHECK(test::run(s, platform::Fidelity::full).metrics.step_time_s > 0);
}
