// NCCL's algorithms as moesim plans them: what each moves, NCCL's latencies, its choice by size
// and placement, the SMs it holds, and the bus bandwidths against published nccl-tests runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "moesim/config/loader.hpp"
#include "moesim/platform/nccl.hpp"
#include "published_check.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"

using namespace moesim;
using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {

constexpr double GiB = 1024.0 * 1024 * 1024;
constexpr double MiB = 1024.0 * 1024;
constexpr double KiB = 1024.0;

// nccl-tests' bus bandwidth of the plan moesim picks, GB/s.
double busbw(const Topology& t, CollectiveKind kind, int ranks, double size) {
  const double bytes = kind == CollectiveKind::all_to_all ? size / ranks : size;
  const CollectivePlan p = plan_collective(t, kind, range_group(0, ranks), bytes);
  return bus_bytes_per_s(kind, ranks, bytes, p.seconds) / 1e9;
}

// NCCL's double binary tree over `nodes` (ncclGetBtree, ncclGetDtree in src/graph/trees.cc),
// written again from its description: the first tree is a binary tree on the node indices, whose
// parent clears the lowest set bit and sets the next; the second mirrors it (even counts) or
// shifts it by one (odd counts). Returns what each node sends per byte of the collective: half
// of it to its parent and to each child in each tree.
std::vector<double> double_binary_tree_sends(int nodes) {
  struct Links {
    int parent = -1;
    std::vector<int> children;
  };
  auto btree = [nodes](int r) {
    Links out;
    int bit = 1;
    while (bit < nodes && !(bit & r)) bit <<= 1;
    if (r == 0) {
      if (nodes > 1) out.children.push_back(bit >> 1);
      return out;
    }
    int up = (r ^ bit) | (bit << 1);
    if (up >= nodes) up = r ^ bit;
    out.parent = up;
    int low = bit >> 1;
    if (low != 0) out.children.push_back(r - low);
    int right = low == 0 ? -1 : r + low;
    while (right >= nodes) {
      right = low == 0 ? -1 : r + low;
      low >>= 1;
    }
    if (right >= 0) out.children.push_back(right);
    return out;
  };
  std::vector<double> sends(nodes, 0.0);
  const bool odd = nodes % 2 == 1;
  for (int r = 0; r < nodes; ++r) {
    const Links first = btree(r);
    const Links second = btree(odd ? (r - 1 + nodes) % nodes : nodes - 1 - r);
    sends[r] = 0.5 * ((first.parent >= 0) + first.children.size() + (second.parent >= 0) + second.children.size());
  }
  return sends;
}

}  // namespace

TEST_CASE("NCCL's ring latency is its base plus one step latency per ring step", "[platform][nccl]") {
  const Topology t = test::system_topology("hgx-h100", 8);
  // A zero-byte all-gather on one HGX node: ring Simple costs base 8.4 us + 7 NVLink steps of
  // 3.4 us (NCCL-TUNE), LL 6.6 + 7 x 0.6; NCCL takes the cheaper, LL; plus the wire's one hop.
  const CollectivePlan p = plan_collective(t, CollectiveKind::all_gather, range_group(0, 8), 0);
  CHECK(p.algorithm == NcclAlgorithm::ring);
  CHECK(p.protocol == NcclProtocol::ll);
  CHECK(p.load.latency_s == Approx((6.6 + 7 * 0.6) * 1e-6));
  CHECK(p.seconds == Approx((6.6 + 7 * 0.6) * 1e-6 + t.nvlink_latency_s));
  // Across 4 nodes the inter-node steps pay the network latency: 3 of the 31 ring steps.
  const Topology four = test::system_topology("hgx-h100", 32);
  const CollectivePlan q = plan_collective(four, CollectiveKind::all_gather, range_group(0, 32), 0);
  REQUIRE(q.algorithm == NcclAlgorithm::ring);
  const double intra = q.protocol == NcclProtocol::ll ? std::max(0.6, 1.0) : q.protocol == NcclProtocol::ll128 ? std::max(1.9, 1.0) : std::max(3.4, 3.0);
  const double inter = q.protocol == NcclProtocol::ll ? 2.7 : q.protocol == NcclProtocol::ll128 ? 4.0 : 14.0;
  const double base = q.protocol == NcclProtocol::ll ? 6.6 : 14.0;
  CHECK(q.load.latency_s == Approx((base + 28 * intra + 3 * inter) * 1e-6));
}

TEST_CASE("NCCL's choice: NVLS for large all-reduces in an NVSwitch domain, LL for tiny ones", "[platform][nccl]") {
  const Topology t = test::system_topology("hgx-h100", 8);
  const Group g = range_group(0, 8);
  const CollectivePlan big = plan_collective(t, CollectiveKind::all_reduce, g, 8 * GiB);
  CHECK(big.algorithm == NcclAlgorithm::nvls);
  CHECK(big.channels == 16);
  // NVLS moves S through each port at the measured NVLS fraction of the port.
  CHECK(big.load.nvlink_bytes == Approx(8 * GiB));
  CHECK(big.load.nvlink_bytes_per_s == Approx(0.610 * 450e9));
  const CollectivePlan tiny = plan_collective(t, CollectiveKind::all_reduce, g, 1024);
  CHECK(tiny.algorithm == NcclAlgorithm::ring);
  CHECK(tiny.protocol == NcclProtocol::ll);
  // H800 switches without NVLS: the ring, with its Simple protocol, at large sizes.
  const Topology h800 = test::system_topology("hgx-h800", 8);
  const CollectivePlan ring = plan_collective(h800, CollectiveKind::all_reduce, g, 8 * GiB);
  CHECK(ring.algorithm == NcclAlgorithm::ring);
  CHECK(ring.protocol == NcclProtocol::simple);
  CHECK(ring.load.nvlink_bytes == Approx(2.0 * 7 / 8 * 8 * GiB));
}

TEST_CASE("NCCL's protocols: LL capped in all, LL128 and the tree per channel, on the channels the size leaves",
          "[platform][nccl]") {
  // NCCL-TUNE: LL moves half the Simple rate, at most 141 GB/s of bus bandwidth on one Hopper node
  // (llMaxBws); H100's 0.5 x 0.822 x 450 GB/s is above it.
  const Topology h100 = test::system_topology("hgx-h100", 8);
  const CollectivePlan tiny = plan_collective(h100, CollectiveKind::all_reduce, range_group(0, 8), 1024);
  REQUIRE(tiny.protocol == NcclProtocol::ll);
  CHECK(tiny.load.nvlink_bytes_per_s == Approx(141e9));
  // NCCL-KERN: a ring LL channel needs 512 threads x 8 bytes x 8 ranks = 32 KiB, so 1 KiB runs on
  // one channel and 64 KiB on two.
  CHECK(tiny.channels == 1);
  const CollectivePlan small = plan_collective(h100, CollectiveKind::all_reduce, range_group(0, 8), 64 * 1024);
  REQUIRE(small.protocol == NcclProtocol::ll);
  CHECK(small.channels == 2);
  // Across nodes the LL cap is the host's: 39 GB/s on 2 nodes (above the NIC's 0.5 x 0.94 x 50),
  // 20.4 from 3 on (below it).
  for (const auto& [nodes, nic_rate] : {std::pair{2, 0.5 * 0.94 * 50e9}, std::pair{4, 20.4e9}}) {
    const Topology t = test::system_topology("hgx-h100", 8 * nodes);
    const CollectivePlan p = plan_collective(t, CollectiveKind::all_gather, range_group(0, 8 * nodes), 1024);
    INFO(nodes << " nodes");
    REQUIRE(p.protocol == NcclProtocol::ll);
    CHECK(p.load.nic_bytes_per_s == Approx(nic_rate));
    CHECK(p.load.nvlink_bytes_per_s == Approx(nodes == 2 ? 39e9 : 20.4e9));
  }
  // PAT keeps all of H100's 16 channels at any size: NCCL's tuning sets no thread count for it,
  // so its channel loop never drops one.
  const Topology cluster = test::system_topology("hgx-h100", 512);
  Group one_per_node;
  for (int n = 0; n < 64; ++n) one_per_node.ranks.push_back(8 * n);
  const CollectivePlan pat = plan_collective(cluster, CollectiveKind::all_gather, one_per_node, 64 * 1024);
  REQUIRE(pat.algorithm == NcclAlgorithm::pat);
  CHECK(pat.channels == 16);
  // Across nodes the tree's LL128 moves 120/128 of its Simple rate (the ring's, 0.92), at most
  // 29 GB/s per channel on Hopper from 3 nodes on, which 16 channels leave above the NIC's.
  bool tree_ll128 = false;
  for (double size = 64 * 1024; size <= 1 * GiB && !tree_ll128; size *= 2) {
    const CollectivePlan p = plan_collective(cluster, CollectiveKind::all_reduce, range_group(0, 512), size);
    if (p.algorithm != NcclAlgorithm::tree || p.protocol != NcclProtocol::ll128) continue;
    tree_ll128 = true;
    INFO(size << " bytes");
    CHECK(p.load.nic_bytes_per_s == Approx(120.0 / 128 * 0.94 * 50e9));
  }
  CHECK(tree_ll128);
}

TEST_CASE("An all-to-all in one domain runs as NCCL schedules it: LL to 16 KiB per channel, transfers in turn",
          "[platform][nccl]") {
  const Topology t = test::system_topology("gb300-nvl72", 64);
  REQUIRE(t.nccl.channels == 32);
  const double overhead = t.nccl.call_overhead_s, hop = t.nvlink_latency_s;
  // OCI-QS fits: a transfer's fixed time on LL and Simple, LL's rate per channel, Simple's ceiling
  // per CTA and rate per copying warp.
  const double ll_latency = 5.12e-6, simple_latency = 6.73e-6, ll_rate = 4.77e9, cta = 22.2e9, warp = 3.28e9;
  REQUIRE(t.nccl.p2p_ll_latency_s == Approx(ll_latency));
  REQUIRE(t.nccl.p2p_simple_latency_s == Approx(simple_latency));
  REQUIRE(t.nccl.p2p_simple_warp_bytes_per_s == Approx(warp));
  const double port = 0.755 * 900e9;
  // 64 ranks: one channel per peer (32 halved while 32 x 64 > 32); rounds r and r + 32 share a
  // channel but not an epoch of 8 rounds, so they run in turn. LL up to 32 x 16 KiB = 512 KiB per
  // peer, at the measured rate per channel; 63 of every 64 transfers leave through the port.
  const Group g = range_group(0, 64);
  const CollectivePlan ll = plan_collective(t, CollectiveKind::all_to_all, g, 512 * 1024);
  CHECK(ll.protocol == NcclProtocol::ll);
  CHECK(ll.channels == 32);
  CHECK(ll.load.nvlink_bytes_per_s == Approx(31.5 * ll_rate));
  CHECK(ll.load.latency_s == Approx(overhead + 2 * ll_latency));
  CHECK(ll.seconds == Approx(overhead + 2 * ll_latency + hop + 2 * 512 * 1024 / ll_rate));
  // Above it Simple: two 1 MiB transfers in turn at a CTA's ceiling (94.5 us) take less than the
  // port's 97.2 us for 63 MiB, so the port binds; each transfer then waits for its receiver to copy
  // its last 512 KiB step out, at its 9 receive warps' rate (one transfer per CTA: 20 warps, 9
  // receive, 10 send of which 9 copy).
  const CollectivePlan simple = plan_collective(t, CollectiveKind::all_to_all, g, 1 * MiB);
  CHECK(simple.protocol == NcclProtocol::simple);
  REQUIRE(2 * MiB / cta < 63 * MiB / port);
  CHECK(simple.load.nvlink_bytes_per_s == Approx(port));
  CHECK(simple.load.latency_s == Approx(overhead + 2 * (simple_latency + 512 * 1024 / (9 * warp))));
  // 8 ranks: up to 4 channels per peer, one per 64 KiB of a Simple transfer (8 KiB of LL's); the
  // rank's own copy is never LL, so it takes one channel per 64 KiB even then.
  const Topology eight = test::system_topology("gb300-nvl72", 8);
  const Group g8 = range_group(0, 8);
  CHECK(plan_collective(eight, CollectiveKind::all_to_all, g8, 8 * 1024).channels == 8);
  CHECK(plan_collective(eight, CollectiveKind::all_to_all, g8, 16 * 1024).channels == 15);
  const CollectivePlan eight_ll = plan_collective(eight, CollectiveKind::all_to_all, g8, 256 * 1024);
  CHECK(eight_ll.channels == 32);
  CHECK(eight_ll.load.latency_s == Approx(overhead + ll_latency));
  // At 1 MiB per peer, 28 CTAs send 256 KiB each at their ceiling, below the port.
  const CollectivePlan eight_simple = plan_collective(eight, CollectiveKind::all_to_all, g8, 1 * MiB);
  CHECK(eight_simple.protocol == NcclProtocol::simple);
  REQUIRE(28 * cta < port);
  CHECK(eight_simple.load.nvlink_bytes_per_s == Approx(28 * cta));
  CHECK(eight_simple.load.latency_s == Approx(overhead + simple_latency + 256 * 1024 / (9 * warp)));
  // 4 ranks: 8 channels per peer up to 16 MiB parts: 24 CTAs run one remote transfer each, 8 the
  // rank's own copy only.
  const Topology four = test::system_topology("gb300-nvl72", 4);
  const Group g4 = range_group(0, 4);
  const CollectivePlan four_half = plan_collective(four, CollectiveKind::all_to_all, g4, 128 * MiB);
  CHECK(four_half.channels == 32);
  CHECK(four_half.load.nvlink_bytes_per_s == Approx(24 * cta));
  // At 256 MiB per peer NCCL doubles to 16 channels per round (rounds 0-3 from channels 0, 16, 8,
  // 24): every CTA runs 2 rounds of the same epoch at once, 10 warps each (4 receive, 5 send of
  // which 4 copy). Channels 16-23 carry rounds 1 and 2, both remote: the CTA's ceiling (under 2 x 4
  // warps' 26.2 GB/s) shared by two 16 MiB parts sets the pace.
  const CollectivePlan four_doubled = plan_collective(four, CollectiveKind::all_to_all, g4, 256 * MiB);
  REQUIRE(2 * 4 * warp > cta);
  CHECK(four_doubled.load.nvlink_bytes_per_s == Approx(3 * 256 * MiB / (2 * 16 * MiB / cta)));
  CHECK(four_doubled.load.latency_s == Approx(overhead + simple_latency + 512 * 1024 / (4 * warp)));
  // At 4 GiB per peer every round has all 32 channels: each CTA runs the 4 rounds at once, 5 warps
  // each (2 receive, 3 send of which one fences and flags): 3 remote rounds x 2 copying warps bind
  // below the CTA's ceiling, and 32 such CTAs below the port.
  const CollectivePlan four_all = plan_collective(four, CollectiveKind::all_to_all, g4, 4 * GiB);
  REQUIRE(3 * 2 * warp < cta);
  REQUIRE(32 * 3 * 2 * warp < port);
  CHECK(four_all.load.nvlink_bytes_per_s == Approx(32 * 3 * 2 * warp));
  // Across domains NCCL's network connections have no LL buffers: Simple, every channel.
  const CollectivePlan racks = plan_collective(test::system_topology("gb300-nvl72", 128, 64), CollectiveKind::all_to_all,
                                               range_group(0, 128), 64 * 1024);
  CHECK(racks.protocol == NcclProtocol::simple);
  CHECK(racks.channels == 32);
  // Without a measured LL rate per channel (Hopper: none published), an LL transfer takes NCCL's
  // LL model: half the Simple rate, capped in all by llMaxBws (141 GB/s on one Hopper node).
  const Topology hopper = test::system_topology("hgx-h100", 8);
  REQUIRE(hopper.nccl.p2p_ll_channel_bytes_per_s == 0);
  const CollectivePlan hopper_ll = plan_collective(hopper, CollectiveKind::all_to_all, g8, 64 * 1024);
  CHECK(hopper_ll.protocol == NcclProtocol::ll);
  CHECK(hopper_ll.load.nvlink_bytes_per_s == Approx(std::min(0.5 * 0.822 * 450e9, 141e9)));
  // Without measured point-to-point latencies NCCL's ring latency is borrowed (NCCL-TUNE: LL 6.6 +
  // 0.6 us on Hopper's NVLink).
  REQUIRE(hopper.nccl.p2p_ll_latency_s == 0);
  CHECK(hopper_ll.load.latency_s == Approx(hopper.nccl.call_overhead_s + (6.6 + 0.6) * 1e-6));
}

TEST_CASE("Every collective pays the system's fixed NCCL call overhead on top of NCCL's latency model",
          "[platform][nccl]") {
  // AZ-GB200: a 4 KiB ring all-reduce on one tray, LL: NCCL's 6.6 + 6 x 0.6 us, one NVLink hop and
  // the overhead fitted to it (5.45 us) make the measured 16.17 us.
  Topology tray = test::system_topology("gb200-nvl72", 4);
  REQUIRE(tray.nccl.call_overhead_s == Approx(5.45e-6));
  const CollectivePlan p = plan_collective(tray, CollectiveKind::all_reduce, range_group(0, 4), 4096);
  REQUIRE(p.protocol == NcclProtocol::ll);
  CHECK(p.seconds * 1e6 == Approx(6.6 + 6 * 0.6 + 0.5 + 5.45).epsilon(0.01));
  CHECK(p.seconds * 1e6 == Approx(4096 * 1.5 / 0.38e9 * 1e6).epsilon(0.01));
  tray.nccl.call_overhead_s = 0;
  CHECK(plan_collective(tray, CollectiveKind::all_reduce, range_group(0, 4), 4096).seconds ==
        Approx(p.seconds - 5.45e-6));
}

TEST_CASE("An all-to-all takes at least its host's 2 n ncclSend/ncclRecv calls; nothing else does",
          "[platform][nccl]") {
  // OCI-QS: 64 GB300s at 8 KiB per peer measure 32.64 us, the floor fitted (0.255 us per call).
  Topology rack = test::system_topology("gb300-nvl72", 64);
  REQUIRE(rack.nccl.p2p_host_call_s == Approx(0.255e-6));
  const Group g64 = range_group(0, 64);
  const CollectivePlan floored = plan_collective(rack, CollectiveKind::all_to_all, g64, 8 * 1024);
  CHECK(floored.seconds == Approx(128 * 0.255e-6).epsilon(1e-9));
  // Above the floor the GPU's time stands, to the last digit; without the host term the small
  // operation is the GPU's alone, and faster.
  const CollectivePlan large = plan_collective(rack, CollectiveKind::all_to_all, g64, 1024 * 1024);
  const CollectivePlan ar = plan_collective(rack, CollectiveKind::all_reduce, g64, 64 * 1024);
  const CollectivePlan small4 = plan_collective(test::system_topology("gb300-nvl72", 4), CollectiveKind::all_to_all,
                                                range_group(0, 4), 8 * 1024);
  rack.nccl.p2p_host_call_s = 0;
  CHECK(plan_collective(rack, CollectiveKind::all_to_all, g64, 1024 * 1024).seconds == large.seconds);
  CHECK(large.seconds > 128 * 0.255e-6);
  const double gpu_only = plan_collective(rack, CollectiveKind::all_to_all, g64, 8 * 1024).seconds;
  CHECK(gpu_only < floored.seconds - 5e-6);
  CHECK(plan_collective(rack, CollectiveKind::all_reduce, g64, 64 * 1024).seconds == ar.seconds);
  // Four ranks make 8 calls, 2 us: never binding.
  Topology tray = test::system_topology("gb300-nvl72", 4);
  tray.nccl.p2p_host_call_s = 0;
  CHECK(plan_collective(tray, CollectiveKind::all_to_all, range_group(0, 4), 8 * 1024).seconds == small4.seconds);
}

TEST_CASE("NVLS runs on NCCL's channel count for one NVLink domain, NVLS-tree on its multi-node count",
          "[platform][nccl]") {
  // NCCL-NVLS (ncclNvlsInit): a Blackwell communicator inside one node or MNNVL clique gets 24
  // NVLS channels, one over several gets 32; Hopper 16 either way.
  Topology rack = test::system_topology("gb300-nvl72", 64);
  rack.nccl.forced_algorithm = NcclAlgorithm::nvls;
  CHECK(plan_collective(rack, CollectiveKind::all_reduce, range_group(0, 64), 1 * GiB).channels == 24);
  Topology racks = test::system_topology("gb300-nvl72", 128, 64);
  racks.nccl.forced_algorithm = NcclAlgorithm::nvls_tree;
  CHECK(plan_collective(racks, CollectiveKind::all_reduce, range_group(0, 128), 1 * GiB).channels == 32);
  Topology nodes = test::system_topology("hgx-b200", 16);
  nodes.nccl.forced_algorithm = NcclAlgorithm::nvls_tree;
  CHECK(plan_collective(nodes, CollectiveKind::all_reduce, range_group(0, 16), 1 * GiB).channels == 32);
  Topology hopper = test::system_topology("hgx-h100", 16);
  hopper.nccl.forced_algorithm = NcclAlgorithm::nvls_tree;
  CHECK(plan_collective(hopper, CollectiveKind::all_reduce, range_group(0, 16), 1 * GiB).channels == 16);
}

TEST_CASE("NVLS pays its pipeline's fill: (stages - 1) iterations of heads x chunk per channel", "[platform][nccl]") {
  Topology t = test::system_topology("hgx-h100", 8);
  t.nccl.forced_algorithm = NcclAlgorithm::nvls;
  const Group g = range_group(0, 8);
  const double rate = 0.610 * 450e9;
  // 128 MiB on 16 channels x 8 heads: under 64 rounds of 128 KiB, so 64 KiB chunks; 16 iterations
  // of 8 x 64 KiB per channel; an all-reduce's 3 stages add 2 of them to NCCL's 25 us.
  const double s128 = 128 * MiB / rate;
  const CollectivePlan ar = plan_collective(t, CollectiveKind::all_reduce, g, 128 * MiB);
  CHECK(ar.load.latency_s == Approx(25e-6 + 2.0 / 16 * s128).epsilon(1e-3));
  // 8 MiB: 32 KiB chunks, 2 iterations: the fill doubles the bandwidth time.
  const double s8 = 8 * MiB / rate;
  CHECK(plan_collective(t, CollectiveKind::all_reduce, g, 8 * MiB).load.latency_s ==
        Approx(25e-6 + s8).epsilon(1e-3));
  // 1 MiB: 16 KiB chunks, half an iteration: the three stages run one after another.
  const double s1 = 1 * MiB / rate;
  CHECK(plan_collective(t, CollectiveKind::all_reduce, g, 1 * MiB).load.latency_s ==
        Approx(25e-6 + 2 * s1).epsilon(1e-3));
  // A reduce-scatter has two stages (scatter, reduce): one iteration of fill. 8 MiB: 2 iterations.
  const double rs8 = 8 * MiB * 7 / 8 / rate;  // (n-1)/n S through each port
  CHECK(plan_collective(t, CollectiveKind::reduce_scatter, g, 8 * MiB).load.latency_s ==
        Approx(25e-6 + rs8 / 2).epsilon(1e-3));
  // 8 GiB: 512 iterations of 128 KiB chunks, under 0.4 % of the time.
  const CollectivePlan big = plan_collective(t, CollectiveKind::all_reduce, g, 8 * GiB);
  CHECK(big.load.latency_s == Approx(25e-6 + 2.0 / 512 * 8 * GiB / rate).epsilon(1e-3));
}

TEST_CASE("NVLS all-reduce's busiest channel as each NCCL version cuts the buffer", "[platform][nccl]") {
  // 32 KiB on 8 H100 (16 channels, 8 heads, 16 KiB chunks); s is its bandwidth time at the port's
  // NVLS rate, a channel's share of the rate moves 1/16 of it. The busiest channel passes its share
  // and 2 more of its largest iteration (3 stages); the fill is what it takes beyond s.
  const double s = 32 * KiB / (0.610 * 450e9);
  auto fill_s = [](int version) {
    Topology t = test::system_topology("hgx-h100", 8);
    t.nccl.forced_algorithm = NcclAlgorithm::nvls;
    t.nccl.version = version;
    return plan_collective(t, CollectiveKind::all_reduce, range_group(0, 8), 32 * KiB).load.latency_s - 25e-6;
  };
  // Up to 2.19 channel 0 takes the first 8 heads x 16 KiB: all 32 KiB, in one iteration.
  CHECK(fill_s(218) == Approx((32 + 2 * 32) * 16.0 / 32 * s - s).epsilon(1e-3));
  CHECK(fill_s(219) == Approx(fill_s(218)).epsilon(1e-9));
  // 2.20-2.21: ceil(32 KiB / 16) = 2 KiB per channel, rounded up to 4 KiB.
  CHECK(fill_s(220) == Approx((4 + 2 * 4) * 16.0 / 32 * s - s).epsilon(1e-3));
  // 2.22: 2 KiB per channel (16-byte cells): the even cut, 2 of its iterations of fill.
  CHECK(fill_s(222) == Approx(2 * s).epsilon(1e-3));
  // From 2.23 the 8 KiB cells: 8 KiB on each of 4 channels.
  CHECK(fill_s(228) == Approx((8 + 2 * 8) * 16.0 / 32 * s - s).epsilon(1e-3));
}

TEST_CASE("NVLS-tree pays its pipeline's fill: 2 x tree depth + 3 stages of heads x chunk per channel",
          "[platform][nccl]") {
  auto plan = [](int gpus, double bytes) {
    Topology t = test::system_topology("gb200-nvl72", gpus);
    t.nccl.forced_algorithm = NcclAlgorithm::nvls_tree;
    return plan_collective(t, CollectiveKind::all_reduce, range_group(0, gpus), bytes);
  };
  // The busier tier's bandwidth time sets an iteration's pace.
  auto bandwidth_s = [](const CollectivePlan& p) {
    return std::max(p.load.nvlink_bytes / p.load.nvlink_bytes_per_s, p.load.nic_bytes / p.load.nic_bytes_per_s);
  };
  // NCCL's model latency (NCCL-TUNE): NVLS-tree's NVLink 25 us plus 2 log2(d) network steps of
  // 20.9 us, plus the system's call overhead.
  const double overhead_us = test::system_topology("gb200-nvl72", 144).nccl.call_overhead_s * 1e6;
  // 2 racks: a tree of depth 1, 5 stages; 128 KiB chunks over 32 channels x 32 heads: 1 GiB is 8
  // iterations, so 4 of them fill the pipeline.
  const CollectivePlan two = plan(144, 1 * GiB);
  REQUIRE(two.channels == 32);
  CHECK(two.load.latency_s == Approx((25 + 2 * 20.9 + overhead_us) * 1e-6 + 4.0 / 8 * bandwidth_s(two)).epsilon(1e-6));
  // Before 2.21 NVLS had 8 heads (NCCL_MAX_NVLS_ARITY): the same 1 GiB is 32 iterations of 32 x 8
  // x 128 KiB, a quarter of the fill.
  Topology arity8 = test::system_topology("gb200-nvl72", 144);
  arity8.nccl.forced_algorithm = NcclAlgorithm::nvls_tree;
  arity8.nccl.version = 220;
  const CollectivePlan two_arity8 = plan_collective(arity8, CollectiveKind::all_reduce, range_group(0, 144), 1 * GiB);
  CHECK(two_arity8.load.latency_s ==
        Approx((25 + 2 * 20.9 + overhead_us) * 1e-6 + 4.0 / 32 * bandwidth_s(two_arity8)).epsilon(1e-6));
  // 20 racks: depth ceil(log2 20) = 5, 13 stages; 64 KiB chunks from 4 domains on: 16 GiB is 256
  // iterations.
  const CollectivePlan twenty = plan(1440, 16 * GiB);
  CHECK(twenty.load.latency_s ==
        Approx((25 + 2 * 4 * 20.9 + overhead_us) * 1e-6 + 12.0 / 256 * bandwidth_s(twenty)).epsilon(1e-6));
  // Below one round of all channels' heads the chunk falls to 32 KiB: 16 MiB over 2 racks is half
  // an iteration, so every stage runs in turn, 4 bandwidth times of fill.
  const CollectivePlan small = plan(144, 16 * MiB);
  CHECK(small.load.latency_s == Approx((25 + 2 * 20.9 + overhead_us) * 1e-6 + 4 * bandwidth_s(small)).epsilon(1e-6));
}

TEST_CASE("The busiest node of NCCL's double binary tree sends S over 2 nodes, 1.5 S over 3, 2 S from 4 on",
          "[platform][nccl]") {
  const double S = 1 * GiB;
  // One GPU per node: its NIC carries all of its node's tree traffic.
  for (int nodes = 2; nodes <= 300; ++nodes) {
    const std::vector<double> sends = double_binary_tree_sends(nodes);
    Topology t = test::system_topology("hgx-h100", nodes, 1);
    t.nccl.forced_algorithm = NcclAlgorithm::tree;
    INFO(nodes << " nodes");
    CHECK(plan_collective(t, CollectiveKind::all_reduce, range_group(0, nodes), S).load.nic_bytes ==
          Approx(*std::max_element(sends.begin(), sends.end()) * S));
  }
  // With k members per domain each NIC carries 1/k of the busiest node's bytes.
  auto tree = [&](int domains, int per_domain) {
    Topology t = test::system_topology("gb200-nvl72", domains * per_domain, per_domain);
    t.nccl.forced_algorithm = NcclAlgorithm::tree;
    return plan_collective(t, CollectiveKind::all_reduce, range_group(0, domains * per_domain), S);
  };
  CHECK(tree(2, 8).load.nic_bytes == Approx(S / 8));
  CHECK(tree(3, 8).load.nic_bytes == Approx(1.5 * S / 8));
  CHECK(tree(20, 8).load.nic_bytes == Approx(2 * S / 8));
  CHECK(tree(3, 8).load.nvlink_bytes == Approx(2 * S * 7 / 8));  // the chain: S up and S down
}

TEST_CASE("NCCL_ALGO forces one algorithm, and one that cannot run the collective is an error", "[platform][nccl]") {
  Topology t = test::system_topology("hgx-h100", 8);
  const Group g = range_group(0, 8);
  REQUIRE(plan_collective(t, CollectiveKind::all_reduce, g, 1 * MiB).algorithm != NcclAlgorithm::nvls);
  t.nccl.forced_algorithm = NcclAlgorithm::nvls;
  CHECK(plan_collective(t, CollectiveKind::all_reduce, g, 1 * MiB).algorithm == NcclAlgorithm::nvls);
  t.nccl.forced_algorithm = NcclAlgorithm::ring;
  CHECK(plan_collective(t, CollectiveKind::all_reduce, g, 8 * GiB).algorithm == NcclAlgorithm::ring);
  t.nccl.forced_algorithm = NcclAlgorithm::tree;  // needs more than one domain
  CHECK_THROWS_AS(plan_collective(t, CollectiveKind::all_reduce, g, 8 * GiB), std::invalid_argument);
  CHECK(nccl_algorithm_named("nvls_tree") == NcclAlgorithm::nvls_tree);
  CHECK_FALSE(nccl_algorithm_named("collnet").has_value());
}

TEST_CASE("NVLS-tree sends its network bytes through the heads' NICs only: min(GPUs per domain, 32)",
          "[platform][nccl]") {
  const double S = 1 * GiB;
  auto forced = [](Topology t) {
    t.nccl.forced_algorithm = NcclAlgorithm::nvls_tree;
    return t;
  };
  // NVL72 racks: 32 heads of 72 GPUs. Two racks: each head sends its S/32 once; 20 racks: an
  // inner node of the double binary tree sends it twice (NCCL connect.cc, connectNvls).
  const CollectivePlan two = plan_collective(forced(test::system_topology("gb200-nvl72", 144)), CollectiveKind::all_reduce,
                                             range_group(0, 144), S);
  CHECK(two.load.nic_bytes == Approx(S / 32));
  CHECK(two.load.nvlink_bytes == Approx(S));
  const CollectivePlan twenty = plan_collective(forced(test::system_topology("gb200-nvl72", 1440)),
                                                CollectiveKind::all_reduce, range_group(0, 1440), S);
  CHECK(twenty.load.nic_bytes == Approx(2 * S / 32));
  // HGX nodes of 8 GPUs: every GPU is a head.
  const CollectivePlan hgx = plan_collective(forced(test::system_topology("hgx-h100", 64)), CollectiveKind::all_reduce,
                                             range_group(0, 64), S);
  CHECK(hgx.load.nic_bytes == Approx(2 * S / 8));
  // The spine carries what the 32 heads send, not 72 heads' worth: per member, on average, the
  // head's bytes x 32/72 x the share of the other racks outside its leaf group (16 of 19 with
  // leaf groups of 4 racks).
  Topology leafy = forced(test::system_topology("gb200-nvl72", 1440));
  leafy.domains_per_leaf = 4;
  const CollectivePlan spine = plan_collective(leafy, CollectiveKind::all_reduce, range_group(0, 1440), S);
  CHECK(spine.load.nic_bytes == Approx(2 * S / 32));
  CHECK(spine.load.spine_bytes == Approx(2 * S / 32 * 32 / 72 * 16 / 19));
}

TEST_CASE("NCCL's choice across nodes: trees for all-reduce at scale, PAT for one GPU per node", "[platform][nccl]") {
  const Topology t = test::system_topology("hgx-h100", 1024);
  // 128 nodes: the ring's 2 x 1023 step latencies make the trees cheaper below gigabytes.
  const CollectivePlan ar = plan_collective(t, CollectiveKind::all_reduce, range_group(0, 1024), 64 * MiB);
  CHECK((ar.algorithm == NcclAlgorithm::tree || ar.algorithm == NcclAlgorithm::nvls_tree));
  Group one_per_node;
  for (int n = 0; n < 64; ++n) one_per_node.ranks.push_back(8 * n);
  const CollectivePlan ag = plan_collective(t, CollectiveKind::all_gather, one_per_node, 1 * MiB);
  CHECK(ag.algorithm == NcclAlgorithm::pat);
  // PAT never runs with more than one GPU per node (NCCL-TUNE: ncclPatEnable).
  const CollectivePlan ag2 = plan_collective(t, CollectiveKind::all_gather, range_group(0, 16), 1 * MiB);
  CHECK(ag2.algorithm != NcclAlgorithm::pat);
}

// One published nccl-tests table: every size it lists (2^log2_bytes bytes), its bus bandwidth and
// the error recorded where moesim misses it by more than 10 % (published_check.hpp).
struct PublishedSize {
  int log2_bytes;
  double busbw_gbytes_per_s;
  double recorded_miss_percent;
};

void check_table(const std::string& source, const Topology& t, CollectiveKind kind, int ranks,
                 const std::vector<PublishedSize>& sizes) {
  std::vector<test::PublishedFigure> rows;
  for (const PublishedSize& s : sizes)
    rows.push_back({source + ", 2^" + std::to_string(s.log2_bytes) + " B", s.busbw_gbytes_per_s,
                    busbw(t, kind, ranks, std::ldexp(1.0, s.log2_bytes)), s.recorded_miss_percent});
  test::check_published(rows);
}

void check_table(const std::string& source, const Topology& t, int ranks, const std::vector<PublishedSize>& sizes) {
  check_table(source, t, CollectiveKind::all_reduce, ranks, sizes);
}

TEST_CASE("NCCL all-reduce against every size of the published nccl-tests tables", "[platform][nccl][published]") {
  // Each table on the NCCL it was measured with (docs/sources.md): it cuts a small NVLS all-reduce
  // among its channels its own way.
  auto on_nccl = [](Topology t, int version) {
    t.nccl.version = version;
    return t;
  };
  Topology h100 = on_nccl(test::system_topology("hgx-h100", 8), 218);  // AZ-H100 and AZ-H200 force NVLS
  h100.nccl.forced_algorithm = NcclAlgorithm::nvls;                 // (NCCL_ALGO=NVLS)
  Topology h200 = on_nccl(test::system_topology("hgx-h200", 8), 220);
  h200.nccl.forced_algorithm = NcclAlgorithm::nvls;
  Topology gb200_tray = test::system_topology("gb200-nvl72", 4);  // Azure forces Ring on 4 GPUs
  gb200_tray.nccl.forced_algorithm = NcclAlgorithm::ring;
  REQUIRE(h100.nccl.modelled);
  // AZ-H100, 8 H100, NVLS, in-place, NCCL 2.18.5, 1 KiB to 8 GiB; 8 GiB is the source of
  // nvls_efficiency. 2.18.5 puts up to 128 KiB on channel 0, which then sets the time: from 128 KiB to
  // 1 MiB moesim's 48 us is 6 us over the measured 42-43 (a single iteration passes its 3 stages
  // faster than a third of the pipelined rate each).
  check_table("AZ-H100 NVLS", h100, 8,
              {{10, 0.07, 0},     {11, 0.14, 0},      {12, 0.27, 0},      {13, 0.53, 0},      {14, 0.95, 0},
               {15, 1.71, 0},  {16, 2.72, 14.1},   {17, 5.40, -12.3},   {18, 10.86, -12.8},  {19, 21.35, -11.2},
               {20, 43.70, -13.3}, {21, 81.93, 0},     {22, 128.73, 0},    {23, 172.13, 0},    {24, 234.45, 0},
               {25, 295.53, 11.4}, {26, 361.78, 0},   {27, 400.61, 0},    {28, 423.38, 0},    {29, 438.46, 0},
               {30, 466.35, 0},   {31, 472.36, 0},    {32, 475.54, 0},    {33, 478.87, 0}});
  // AZ-H200, NCCL 2.20.5: predicted from H100's efficiency (same NVLink 4 and NVSwitch); its
  // small-message floor (0.06 GB/s at 1 KiB, 30 us) is 4-5 us above H100's, which neither NCCL's
  // latency table nor its 4 KiB pieces per channel tell apart.
  check_table("AZ-H200 NVLS", h200, 8,
              {{10, 0.06, 16.3},  {11, 0.12, 15.5},   {12, 0.23, 18.9},   {13, 0.47, 16.3},   {14, 0.93, 17.6},
               {15, 1.84, 18.9},  {16, 3.72, 17.6},   {17, 7.39, 15.2},   {18, 14.75, 0},     {19, 29.38, 0},
               {20, 52.96, 0},    {21, 88.78, -14.6}, {22, 138.44, 0},    {23, 181.94, 0},    {24, 240.41, 0},
               {25, 300.91, 0},   {26, 368.11, 0},    {27, 412.45, 0},    {28, 432.24, 0},    {29, 442.72, 0},
               {30, 467.58, 0},   {31, 472.57, 0},    {32, 477.41, 0},    {33, 479.98, 0}});
  // AZ-GB200, one 4-GPU tray, Ring; 8 GiB is the source of GB200's nvlink_efficiency. Up to 4 MiB
  // the tray is 4.5-6 us slower (10 us at 4 MiB) than NCCL's ring latencies and capped LL/LL128 rates
  // make it in moesim; OCI's GB300 tray below shows the same 4-5 us.
  check_table("AZ-GB200 ring", gb200_tray, 4,
              {{10, 0.10, 0},  {11, 0.19, 0},   {12, 0.38, 0},   {13, 0.76, 0},   {14, 1.46, 0},
               {15, 2.88, 0},  {16, 5.71, 0},   {17, 11.29, 0},  {18, 22.41, 0},  {19, 44.07, 0},
               {20, 80.48, -10.1}, {21, 110.43, 0}, {22, 146.27, 11.8}, {23, 253.46, 0},    {24, 331.09, 0},
               {25, 422.62, 0}, {26, 550.73, 0},   {27, 574.19, 0},    {28, 593.53, 0},    {29, 618.74, 0},
               {30, 646.87, 0},   {31, 666.63, 0},    {32, 673.06, 0},    {33, 679.61, 0}});
  // CW43, GB200 NVL72, out-of-place, NCCL's default algorithm (not reported; moesim: NVLS in one
  // rack, NVLS-tree across racks); 8 GiB on one rack is the source of nvls_efficiency. Below 2 GiB
  // one rack pays about 0.5 ms more than NVLS's fill. Across 2 racks NVLS-tree's own fill (5
  // stages) gives the ramp.
  check_table("CW43 NVL72, 1 rack", on_nccl(test::system_topology("gb200-nvl72", 72), 225), 72,
              {{29, 586.06, 20.1}, {30, 681.17, 13.3}, {31, 757.78, 0}, {32, 839.16, 0}, {33, 834.57, 0}});
  check_table("CW43 NVL72, 2 racks", on_nccl(test::system_topology("gb200-nvl72", 144), 225), 144,
              {{29, 493.94, -15.4}, {30, 596.10, 0}, {31, 680.30, 0}, {32, 743.09, 0}, {33, 793.06, 0},
               {34, 810.41, 0}});
  // CW48 ran the same script with NVLS disabled (NCCL_NVLS_ENABLE=0 since the script's commit
  // a736384, a week before): ring and tree only. Its times are 4.6-5 ms plus the bytes at 217 GB/s
  // of algorithm bandwidth. NCCL's model picks the tree to 2 GiB and the ring's LL128 from 4 GiB
  // (its 5.6 ms of latency then pays off); moesim prices the tree NVLink-bound at 340 GB/s, with no
  // such constant: a chunk's trip up and down the 71-GPU chain of each rack is not modelled
  // (docs/method.md).
  Topology cw48 = test::system_topology("gb200-nvl72", 1440);
  cw48.nccl.nvls = false;
  check_table("CW48 NVL72, 20 racks, NVLS off", cw48, 1440,
              {{29, 150.95, 215.6}, {30, 218.85, 157.3}, {31, 286.52, 116.2}, {32, 346.38, 29.7},
               {33, 381.48, 37.8}, {34, 405.74, 41.7}});
}

TEST_CASE("NCCL all-reduce and all-to-all against OCI's GB300, GB200 and B300 tables", "[platform][nccl][published]") {
  // OCI (oracle-quickstart/oci-gpu-quickstarts): nccl-tests with NCCL's default algorithm, NVLS on;
  // GB300 NCCL 2.28.7 (every size, 512 KiB to 16 GiB), GB200 2.27.3 and B300 2.28.9 (the two largest
  // sizes printed). Racks are joined by RoCE; moesim's NICs are InfiniBand's (NT290's 47 GB/s).
  auto gb300_rack = [](int gpus, int per_domain) { return test::system_topology("gb300-nvl72", gpus, per_domain); };
  auto gb200_rack = [](int gpus, int per_domain) { return test::system_topology("gb200-nvl72", gpus, per_domain); };
  auto b300 = [](int gpus) { return test::system_topology("hgx-b300", gpus); };
  const auto AR = CollectiveKind::all_reduce;
  const auto A2A = CollectiveKind::all_to_all;
  check_table("OCI GB300 all-reduce, 4 GPUs", gb300_rack(4, 0), AR, 4,
              {{19, 43.87, 0}, {20, 77.81, 0}, {21, 117.78, 0}, {22, 152.98, 0}, {23, 260.67, 0},
               {24, 333.72, 0}, {25, 413.39, 11.9}, {26, 559.78, 0}, {27, 596.63, 0}, {28, 617.05, 0},
               {29, 632.27, 0}, {30, 639.96, 0}, {31, 657.53, 0}, {32, 665.45, 0}, {33, 681.03, 0}, {34, 685.19, 0}});
  check_table("OCI GB300 all-reduce, 8 GPUs (2 trays)", gb300_rack(8, 0), AR, 8,
              {{19, 30.27, 25.2}, {20, 61.09, 0}, {21, 105.46, 0}, {22, 131.05, 0}, {23, 193.24, 16.9},
               {24, 276.88, 0}, {25, 346.73, 23.0}, {26, 421.21, 29.5}, {27, 596.65, 0}, {28, 657.17, 0},
               {29, 702.18, 0}, {30, 724.98, 0}, {31, 823.23, -10.6}, {32, 832.47, -10.3}, {33, 838.38, -10.3},
               {34, 841.63, -10.3}});
  check_table("OCI GB300 all-reduce, 64 GPUs (16 trays)", gb300_rack(64, 0), AR, 64,
              {{19, 15.57, 89.2}, {20, 30.87, 70.9}, {21, 59.06, 52.2}, {22, 110.18, 23.0}, {23, 173.82, 0},
               {24, 222.39, 15.9}, {25, 301.95, 31.2}, {26, 399.55, 0}, {27, 485.05, 19.1}, {28, 583.51, 18.0},
               {29, 645.41, 0}, {30, 743.33, 0}, {31, 820.02, 0}, {32, 865.47, 0}, {33, 897.52, 0}, {34, 930.48, 0}});
  check_table("OCI GB300 all-reduce, 2 racks of 64", gb300_rack(128, 64), AR, 128,
              {{19, 1.70, 664.8}, {20, 4.26, 474.4}, {21, 8.48, 406.1}, {22, 17.18, 299.7}, {23, 33.66, 191.5},
               {24, 65.35, 91.1}, {25, 124.72, 16.0}, {26, 199.87, -21.4}, {27, 269.75, 0}, {28, 312.59, 29.8},
               {29, 484.55, -13.9}, {30, 566.95, 0}, {31, 622.31, 0}, {32, 659.43, 15.0}, {33, 708.75, 13.7},
               {34, 738.39, 12.6}});
  check_table("OCI GB300 all-to-all, 4 GPUs", gb300_rack(4, 0), A2A, 4,
              {{19, 27.11, 0}, {20, 46.92, 0}, {21, 65.84, 0}, {22, 136.59, 0}, {23, 196.58, 0},
               {24, 268.80, -13.4}, {25, 344.77, 0}, {26, 414.78, 0}, {27, 459.81, 0}, {28, 490.93, 0},
               {29, 511.57, 0}, {30, 553.75, 0}, {31, 614.05, 0}, {32, 621.39, 0}, {33, 624.98, 0},
               {34, 627.69, 0}});
  check_table("OCI GB300 all-to-all, 8 GPUs (2 trays)", gb300_rack(8, 0), A2A, 8,
              {{19, 30.08, 0}, {20, 52.76, 0}, {21, 74.67, 0}, {22, 96.63, 0}, {23, 218.53, 0},
               {24, 290.88, 0}, {25, 374.31, 0}, {26, 451.47, 0}, {27, 515.87, 0}, {28, 561.64, 0},
               {29, 589.91, 0}, {30, 630.39, 0}, {31, 628.52, 0}, {32, 669.63, 0}, {33, 679.65, 0},
               {34, 685.06, 0}});
  check_table("OCI GB300 all-to-all, 64 GPUs (16 trays)", gb300_rack(64, 0), A2A, 64,
              {{19, 15.81, 0}, {20, 33.33, 0}, {21, 63.06, 0}, {22, 88.46, 0}, {23, 113.90, 0},
               {24, 130.27, 0}, {25, 139.98, 0}, {26, 408.61, 0}, {27, 497.18, 0}, {28, 570.55, 0},
               {29, 617.70, 0}, {30, 651.23, 0}, {31, 655.64, 0}, {32, 653.53, 0}, {33, 649.03, 0}, {34, 666.92, 0}});
  check_table("OCI GB300 all-to-all, 2 racks of 64", gb300_rack(128, 64), A2A, 128,
              {{19, 0.90, 785.4}, {20, 2.06, 673.7}, {21, 4.58, 595.9}, {22, 6.22, 924.9}, {23, 9.19, 1104.0},
               {24, 22.05, 529.9}, {25, 19.76, 705.8}, {26, 20.45, 740.1}, {27, 44.71, 300.1}, {28, 45.67, 299.9},
               {29, 45.08, 309.4}, {30, 47.68, 289.1}, {31, 47.15, 294.6}, {32, 47.78, 289.9}, {33, 47.30, 294.1},
               {34, 47.67, 291.2}});
  check_table("OCI GB200 all-reduce, 4 GPUs", gb200_rack(4, 0), AR, 4,
              {{32, 657.31, 0}, {33, 663.34, 0}});
  check_table("OCI GB200 all-reduce, 2 racks of 64", gb200_rack(128, 64), AR, 128,
              {{32, 753.51, 0}, {33, 799.79, 0}});
  check_table("OCI GB200 all-reduce, 3 racks of 64", gb200_rack(192, 64), AR, 192,
              {{32, 703.07, 0}, {33, 748.93, 0}});
  check_table("OCI GB200 all-to-all, 4 GPUs", gb200_rack(4, 0), A2A, 4,
              {{32, 611.52, 0}, {33, 615.30, 0}});
  check_table("OCI GB200 all-to-all, 8 GPUs (2 trays)", gb200_rack(8, 0), A2A, 8,
              {{33, 657.81, 0}, {34, 662.27, 0}});
  check_table("OCI GB200 all-to-all, 64 GPUs (16 trays)", gb200_rack(64, 0), A2A, 64,
              {{32, 566.30, 16.2}, {33, 622.92, 0}});
  check_table("OCI GB200 all-to-all, 2 racks of 64", gb200_rack(128, 64), A2A, 128,
              {{32, 88.63, 0}, {33, 89.70, 0}});
  check_table("OCI GB200 all-to-all, 3 racks of 64", gb200_rack(192, 64), A2A, 192,
              {{32, 60.90, 15.1}, {33, 62.49, 12.2}});
  check_table("OCI B300 all-reduce, 8 GPUs", b300(8), AR, 8,
              {{33, 834.84, 0}});
  // NCCL's model runs the ring on 2 B300 nodes (NVLS-tree, moesim's faster pick by its own times,
  // was 14-15 % fast).
  check_table("OCI B300 all-reduce, 2 nodes of 8", b300(16), AR, 16,
              {{33, 766.54, 0}, {34, 766.84, 0}});
  check_table("OCI B300 all-to-all, 8 GPUs", b300(8), A2A, 8,
              {{33, 675.55, 0}});
  check_table("OCI B300 all-to-all, 2 nodes of 8", b300(16), A2A, 16,
              {{33, 180.98, 0}});
}

TEST_CASE("NCCL collectives against other published nccl-tests bus bandwidths", "[platform][nccl][published]") {
  const Topology h100_2 = test::system_topology("hgx-h100", 16);
  const Topology b200_2 = test::system_topology("hgx-b200", 16);
  const Topology h100_4 = test::system_topology("hgx-h100", 32);
  const Topology h200_248 = test::system_topology("hgx-h200", 1984);
  const Topology h800_8 = test::system_topology("hgx-h800", 64);
  const Topology h100_8 = test::system_topology("hgx-h100", 8);
  Topology h100_ring = test::system_topology("hgx-h100", 8);  // NCCL_ALGO=Ring
  h100_ring.nccl.nvls = false;
  Topology h100_ring4 = test::system_topology("hgx-h100", 4);
  h100_ring4.nccl.nvls = false;
  auto gb200_racks = [](int per_rack, NcclAlgorithm algorithm) {
    Topology t = test::system_topology("gb200-nvl72", 3 * per_rack, per_rack);
    t.nccl.nvls = false;
    t.nccl.forced_algorithm = algorithm;
    return t;
  };
  const Topology gb200_3x4_ring = gb200_racks(4, NcclAlgorithm::ring);
  const Topology gb200_3x4_tree = gb200_racks(4, NcclAlgorithm::tree);
  const Topology gb200_3x8_ring = gb200_racks(8, NcclAlgorithm::ring);
  const Topology gb200_3x8_tree = gb200_racks(8, NcclAlgorithm::tree);
  const auto AR = CollectiveKind::all_reduce;
  const auto AG = CollectiveKind::all_gather;
  const auto RS = CollectiveKind::reduce_scatter;
  const auto A2A = CollectiveKind::all_to_all;
  test::check_published({
      // N1455: H100 ring 365-370 GB/s with 2-8 GPUs at 2-4 GB; NT212's 370 GB/s is the source of
      // nvlink_efficiency.
      {"N1455 H100 ring all-reduce 8 GPUs, 2 GiB", 367.5, busbw(h100_ring, AR, 8, 2 * GiB)},
      {"N1455 H100 ring all-reduce 4 GPUs, 2 GiB", 367.5, busbw(h100_ring4, AR, 4, 2 * GiB)},
      // NT326: all-gather on 8 H100 saturates near 360 GB/s, 'exactly what we'd expect' (maintainer);
      // N1281: reduce-scatter 360, all-gather 350 on 8 H100 (sizes not stated; taken at 1 GiB).
      {"NT326 H100 all-gather 8 GPUs, 1 GiB", 360, busbw(h100_8, AG, 8, 1 * GiB)},
      {"N1281 H100 all-gather 8 GPUs, 1 GiB", 350, busbw(h100_8, AG, 8, 1 * GiB)},
      {"N1281 H100 reduce-scatter 8 GPUs, 1 GiB", 360, busbw(h100_8, RS, 8, 1 * GiB)},
      // Across nodes over 8 x 400 Gb/s per node. CW92's two nodes run NVLS-tree: B200's is bound by
      // its NICs and matches; H100's is bound by NVLink in moesim, which overlaps the NVLink and
      // network parts fully, and NCCL's code does not say why it is slower (docs/method.md).
      {"CW92 2 x 8 H100 all-reduce 8 GiB (NVLS-tree)", 440.58, busbw(h100_2, AR, 16, 8 * GiB), +15.7},
      {"CW92 2 x 8 B200 all-reduce 8 GiB (NVLS-tree)", 690.07, busbw(b200_2, AR, 16, 8 * GiB)},
      // N1221: 4 nodes of 8 H100 on 8 x 400 Gb/s RoCE, 4-8 GiB, 'same busbw 320GB' with NVLS on or
      // off; moesim's NICs are InfiniBand's (NT290's 47 GB/s per NIC).
      {"N1221 4 x 8 H100 all-reduce 8 GiB (RoCE)", 320, busbw(h100_4, AR, 32, 8 * GiB), +16.7},
      // NCCL's model picks NVLS-tree (3.3 against the tree's 4.7 ms; if the cluster had NVLS);
      // moesim's NVLS-tree pays a fill of 19 stages (a tree 8 deep) on 64 iterations, where the
      // tree it chose by its own times came within 1.7 %.
      {"NT283 248 x 8 H200 all-reduce 512 MiB", 350, busbw(h200_248, AR, 1984, 512 * MiB), -22.9},
      // NCCL1801: 3 GB200 NVL72 racks, 4 or 8 GPUs used in each, NVLS off, over InfiniBand, 16 GiB.
      // NCCL chose the ring; the tree, forced, was faster: its busiest node sends 1.5 S against the
      // ring's 2 S.
      {"NCCL1801 3 x 4 GB200 all-reduce 16 GiB, ring", 196.72, busbw(gb200_3x4_ring, AR, 12, 16 * GiB)},
      {"NCCL1801 3 x 4 GB200 all-reduce 16 GiB, tree", 234.43, busbw(gb200_3x4_tree, AR, 12, 16 * GiB)},
      {"NCCL1801 3 x 8 GB200 all-reduce 16 GiB, ring", 393.66, busbw(gb200_3x8_ring, AR, 24, 16 * GiB)},
      {"NCCL1801 3 x 8 GB200 all-reduce 16 GiB, tree", 485.68, busbw(gb200_3x8_tree, AR, 24, 16 * GiB)},
      // The reporter calls it unstable; NCCL's code (p2p rounds, chunks, proxy depth) gives 41-47 GB/s.
      {"N1531 8 x 8 H800 all-to-all 8 MiB (reported unstable)", 26.4, busbw(h800_8, A2A, 64, 8 * MiB), +72.5},
  });
}
