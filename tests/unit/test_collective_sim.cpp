// Simulated collectives on the SimGrid platform against their closed forms (within 1 %), and
// the physical sanity checks: oversubscription slows only what crosses the spine, NVLink
// bandwidth changes only the NVLink bandwidth term. Each simulation runs in its own child.
#include <catch2/catch.hpp>

#include "test_platform_support.hpp"

using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {

void check_against_closed_form(const Topology& t, CollectiveKind kind, const Group& g, double bytes) {
  const double expected = closed_form_seconds(t, kind, g, bytes);
  for (Fidelity f : {Fidelity::full, Fidelity::folded}) {
    INFO(to_string(kind) << (f == Fidelity::full ? " full" : " folded") << " n=" << g.ranks.size());
    CHECK(simulate(t, f, kind, g, bytes) == Approx(expected).epsilon(0.01));
  }
}
}  // namespace

TEST_CASE("simulated all-to-all inside a domain equals (n-1) M / B + latency", "[platform]") {
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 64);
  REQUIRE(closed_form_seconds(t, CollectiveKind::all_to_all, g, 4 * MB) == Approx(281e-6));
  check_against_closed_form(t, CollectiveKind::all_to_all, g, 4 * MB);
}

TEST_CASE("simulated all-to-all across domains is NIC-bound", "[platform]") {
  const Topology t = gb300_like(64, 32);
  const Group g = range_group(0, 64);
  REQUIRE(bottleneck(t, CollectiveKind::all_to_all, g, 4 * MB) == "nic");
  check_against_closed_form(t, CollectiveKind::all_to_all, g, 4 * MB);
}

TEST_CASE("simulated ring all-reduce, all-gather and reduce-scatter", "[platform]") {
  const Topology in_rack = gb300_like(72);
  const Topology hgx = gb300_like(32, 8);
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    check_against_closed_form(in_rack, kind, range_group(0, 8), 256 * MB);
    check_against_closed_form(hgx, kind, range_group(0, 32), 256 * MB);  // ring across 4 domains
  }
}

TEST_CASE("simulated send_recv inside a domain and across domains", "[platform]") {
  const Topology t = gb300_like(144, 72);
  for (const Group& g : {Group{{3, 70}}, Group{{3, 80}}}) {
    const double expected = closed_form_seconds(t, CollectiveKind::send_recv, g, 100 * MB);
    CHECK(simulate(t, Fidelity::full, CollectiveKind::send_recv, g, 100 * MB) == Approx(expected).epsilon(0.01));
    // Folded: to the receiver's representative host, or over the sender's own loop route.
    CHECK(simulate(t, Fidelity::folded, CollectiveKind::send_recv, g, 100 * MB, 1, true) ==
          Approx(expected).epsilon(0.01));
    CHECK(simulate(t, Fidelity::folded, CollectiveKind::send_recv, g, 100 * MB) == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("an oversubscribed spine slows cross-domain traffic by its ratio only", "[platform]") {
  const Group across = range_group(0, 64);  // 2 full domains of 32: every GPU uses the spine
  const Group inside = range_group(0, 32);
  const Topology plain = gb300_like(64, 32, 1.0);
  const Topology over = gb300_like(64, 32, 2.0);
  const double lat = plain.scaleout_latency_s();
  for (Fidelity f : {Fidelity::full, Fidelity::folded}) {
    const double a = simulate(plain, f, CollectiveKind::all_to_all, across, 4 * MB);
    const double b = simulate(over, f, CollectiveKind::all_to_all, across, 4 * MB);
    CHECK((b - lat) / (a - lat) == Approx(2.0).epsilon(0.01));
    const double c = simulate(plain, f, CollectiveKind::all_to_all, inside, 4 * MB);
    const double d = simulate(over, f, CollectiveKind::all_to_all, inside, 4 * MB);
    CHECK(d == Approx(c).epsilon(1e-6));
  }
}

TEST_CASE("doubling NVLink bandwidth halves the NVLink bandwidth term and nothing else", "[platform]") {
  Topology fast = gb300_like(64, 32);
  fast.nvlink_bytes_per_s *= 2;
  const Topology base = gb300_like(64, 32);
  const Group inside = range_group(0, 32);
  const double S = 256 * MB;
  const double latency = 2 * 31 * base.nvlink_latency_s;  // ring all-reduce: 2(n-1) hops
  for (Fidelity f : {Fidelity::full, Fidelity::folded}) {
    const double slow_s = simulate(base, f, CollectiveKind::all_reduce, inside, S);
    const double fast_s = simulate(fast, f, CollectiveKind::all_reduce, inside, S);
    CHECK(fast_s - latency == Approx((slow_s - latency) / 2).epsilon(0.01));
    // The NIC-bound all-to-all across domains does not move.
    const Group across = range_group(0, 64);
    CHECK(simulate(fast, f, CollectiveKind::all_to_all, across, 4 * MB) ==
          Approx(simulate(base, f, CollectiveKind::all_to_all, across, 4 * MB)).epsilon(1e-6));
  }
}

TEST_CASE("concurrent collectives with distinct tags share the ports", "[platform]") {
  // Two all-to-alls at once on the same ranks: twice the bytes through each port.
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 16);
  const double one = simulate(t, Fidelity::full, CollectiveKind::all_to_all, g, 4 * MB);
  const double two = simulate(t, Fidelity::full, CollectiveKind::all_to_all, g, 4 * MB, 2);
  CHECK(two - t.nvlink_latency_s == Approx(2 * (one - t.nvlink_latency_s)).epsilon(0.01));
  CHECK(simulate(t, Fidelity::folded, CollectiveKind::all_to_all, g, 4 * MB, 2) == Approx(two).epsilon(0.01));
}

TEST_CASE("an asymmetric placement runs and is bounded by its busiest rank", "[platform]") {
  // 3 ranks in one rack, 1 in the other: the lonely rank moves 3 M over its NIC.
  const Topology t = gb300_like(144, 72);
  const Group g = {{0, 1, 2, 72}};
  const double expected = closed_form_seconds(t, CollectiveKind::all_to_all, g, 8 * MB);
  REQUIRE(expected == Approx(3 * 8 * MB / 100e9 + t.scaleout_latency_s()));
  CHECK(simulate(t, Fidelity::full, CollectiveKind::all_to_all, g, 8 * MB) == Approx(expected).epsilon(0.01));
  // Folded on the busiest rank (the engine picks one representative per distinct role).
  const Group busiest_first = {{72, 0, 1, 2}};
  CHECK(simulate(t, Fidelity::folded, CollectiveKind::all_to_all, busiest_first, 8 * MB) ==
        Approx(expected).epsilon(0.01));
}

TEST_CASE("zero-byte collectives cost their latency steps only", "[platform]") {
  const Topology t = gb300_like(64, 32);
  for (CollectiveKind kind : {CollectiveKind::all_to_all, CollectiveKind::all_reduce}) {
    const double expected = closed_form_seconds(t, kind, range_group(0, 64), 0);
    CHECK(expected > 0);
    check_against_closed_form(t, kind, range_group(0, 64), 0);
  }
}
