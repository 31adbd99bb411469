// Closed forms, tier loads, bottlenecks and placements: arithmetic only, no simulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "test_platform_support.hpp"

using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {
}

TEST_CASE("all-to-all inside a domain: (n-1) M / B_nvl + one NVLink hop", "[platform]") {
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 64);
  const TierLoad load = tier_load(t, CollectiveKind::all_to_all, g, 4 * MB);
  CHECK(load.nvlink_bytes == Approx(63 * 4 * MB));
  CHECK(load.nvlink_steps == 1);
  CHECK(load.nic_bytes == 0);
  CHECK(load.nic_steps == 0);
  CHECK(closed_form_seconds(t, CollectiveKind::all_to_all, g, 4 * MB) == Approx(63 * 4 * MB / 900e9 + 1e-6));
  CHECK(bottleneck(t, CollectiveKind::all_to_all, g, 4 * MB) == "nvlink");
}

TEST_CASE("all-to-all across domains: NVLink and NIC parts run concurrently, NIC bounds", "[platform]") {
  const Topology t = gb300_like(64, 32);
  const Group g = range_group(0, 64);
  const TierLoad load = tier_load(t, CollectiveKind::all_to_all, g, 4 * MB);
  CHECK(load.nvlink_bytes == Approx(31 * 4 * MB));
  CHECK(load.nic_bytes == Approx(32 * 4 * MB));
  CHECK_FALSE(load.tiers_sequential);
  CHECK(closed_form_seconds(t, CollectiveKind::all_to_all, g, 4 * MB) ==
        Approx(32 * 4 * MB / 100e9 + t.scaleout_latency_s()));
  CHECK(bottleneck(t, CollectiveKind::all_to_all, g, 4 * MB) == "nic");
  CHECK(bottleneck(gb300_like(64, 32, 2.0), CollectiveKind::all_to_all, g, 4 * MB) == "spine");
}

TEST_CASE("ring collectives inside a domain", "[platform]") {
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 8);
  const double S = 256 * MB, B = 900e9, a = 1e-6;
  CHECK(closed_form_seconds(t, CollectiveKind::all_reduce, g, S) == Approx(2.0 * 7 / 8 * S / B + 14 * a));
  CHECK(closed_form_seconds(t, CollectiveKind::all_gather, g, S) == Approx(7.0 / 8 * S / B + 7 * a));
  CHECK(closed_form_seconds(t, CollectiveKind::reduce_scatter, g, S) == Approx(7.0 / 8 * S / B + 7 * a));
}

TEST_CASE("a ring across domains: each member's NIC carries 1/k of its ring traffic, NVLink the rest",
          "[platform]") {
  const Topology t = gb300_like(64, 8);  // 8 HGX-like domains of 8
  const Group g = range_group(0, 64);
  const double S = 256 * MB;
  const TierLoad load = tier_load(t, CollectiveKind::all_reduce, g, S);
  // A flat ring of 64 moves 2 x 63/64 S per member in 2 x 63 steps; per channel each domain is
  // entered and left once, through a different GPU per channel: 1 of a member's 8 ring edges is
  // its NIC, 7 are NVLink, and both carry their share concurrently.
  const double ring = 2.0 * 63 / 64 * S;
  CHECK_FALSE(load.tiers_sequential);
  CHECK(load.nvlink_bytes == Approx(ring * 7 / 8));
  CHECK(load.nic_bytes == Approx(ring / 8));
  CHECK(load.nvlink_steps == 126);
  CHECK(load.nic_steps == 126);
  const double nvl = ring * 7 / 8 / 900e9 + 126 * 1e-6;
  const double nic = ring / 8 / 100e9 + 126 * t.scaleout_latency_s();
  CHECK(closed_form_seconds(t, CollectiveKind::all_reduce, g, S) == Approx(std::max(nvl, nic)));
  // One rank per domain: a pure NIC ring.
  const Group spread = {{0, 8, 16, 24}};
  CHECK(closed_form_seconds(t, CollectiveKind::all_gather, spread, S) ==
        Approx(3.0 / 4 * S / 100e9 + 3 * t.scaleout_latency_s()));
}

TEST_CASE("send_recv uses NVLink inside a domain and the NIC across", "[platform]") {
  const Topology t = gb300_like(144, 72);
  CHECK(closed_form_seconds(t, CollectiveKind::send_recv, {{3, 70}}, 100 * MB) == Approx(100 * MB / 900e9 + 1e-6));
  CHECK(closed_form_seconds(t, CollectiveKind::send_recv, {{3, 80}}, 100 * MB) ==
        Approx(100 * MB / 100e9 + t.scaleout_latency_s()));
  CHECK_THROWS_AS(closed_form_seconds(t, CollectiveKind::send_recv, {{1, 2, 3}}, MB), std::invalid_argument);
}

TEST_CASE("tier_load of a given rank follows its domain's member count", "[platform]") {
  const Topology t = gb300_like(144, 72);
  const Group g = {{0, 1, 2, 72}};  // 3 ranks in domain 0, 1 in domain 1
  const TierLoad in_big = tier_load(t, CollectiveKind::all_to_all, g, MB, 0);
  const TierLoad alone = tier_load(t, CollectiveKind::all_to_all, g, MB, 72);
  CHECK(in_big.nvlink_bytes == Approx(2 * MB));
  CHECK(in_big.nic_bytes == Approx(1 * MB));
  CHECK(alone.nvlink_bytes == 0);
  CHECK(alone.nic_bytes == Approx(3 * MB));
  // The busiest rank is the lonely one: 3 MB over the NIC.
  CHECK(tier_load(t, CollectiveKind::all_to_all, g, MB).nic_bytes == Approx(3 * MB));
}

TEST_CASE("invalid groups are rejected", "[platform]") {
  const Topology t = gb300_like(16, 8);
  CHECK_THROWS_AS(closed_form_seconds(t, CollectiveKind::all_to_all, {}, MB), std::invalid_argument);
  CHECK_THROWS_AS(closed_form_seconds(t, CollectiveKind::all_to_all, {{0, 0}}, MB), std::invalid_argument);
  CHECK_THROWS_AS(closed_form_seconds(t, CollectiveKind::all_to_all, {{0, 16}}, MB), std::invalid_argument);
  CHECK(closed_form_seconds(t, CollectiveKind::all_reduce, {{5}}, MB) == 0);
  CHECK(bottleneck(t, CollectiveKind::all_reduce, {{5}}, MB) == "none");
}

TEST_CASE("all_to_all_v: a uniform matrix gives the all-to-all closed form, a hot rank its port", "[platform]") {
  const Topology t = gb300_like(64, 32);
  const Group g = range_group(0, 64);
  std::vector<double> m(64 * 64, 2 * MB);
  CHECK(all_to_all_v_seconds(t, g, m) == Approx(closed_form_seconds(t, CollectiveKind::all_to_all, g, 2 * MB)));
  // Everyone sends rank 5 twice as much: rank 5 receives 32 x 4 MB over its NIC.
  for (int i = 0; i < 64; ++i) m[static_cast<std::size_t>(i * 64 + 5)] = 4 * MB;
  CHECK(all_to_all_v_seconds(t, g, m) == Approx(32 * 4 * MB / 100e9 + t.scaleout_latency_s()));
  CHECK_THROWS_AS(all_to_all_v_seconds(t, g, std::vector<double>(10, 1.0)), std::invalid_argument);
}

TEST_CASE("placement summarises where a group sits", "[platform]") {
  const Topology t = gb300_like(144, 72, 2.0);
  const GroupPlacement in_rack = placement(t, range_group(0, 64));
  CHECK(in_rack.size == 64);
  CHECK(in_rack.domains_spanned == 1);
  CHECK(in_rack.max_ranks_per_domain == 64);
  CHECK(in_rack.bottleneck_tier == "nvlink");
  const GroupPlacement across = placement(t, {{0, 1, 2, 72}});
  CHECK(across.domains_spanned == 2);
  CHECK(across.min_ranks_per_domain == 1);
  CHECK(across.max_ranks_per_domain == 3);
  CHECK(across.bottleneck_tier == "spine");
  CHECK(to_string(CollectiveKind::reduce_scatter) == "reduce_scatter");
}
