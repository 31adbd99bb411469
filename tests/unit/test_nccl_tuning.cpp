// NCCL's model of itself, which moesim chooses by: the graphs its topology search finds on
// NVSwitch systems (NCCL-GRAPH: search.cc, traced by hand at v2.28.7) and the sizes where its
// tuning model switches algorithm or protocol.
#include <catch2/catch.hpp>

#include <string>

#include "moesim/config/loader.hpp"
#include "moesim/platform/nccl_tuning.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"

using namespace moesim;
using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {

void check_graph(const NcclGraph& g, int channels, double intra, double inter) {
  CHECK(g.channels == channels);
  CHECK(g.intra_gbytes_per_s == Approx(intra));
  CHECK(g.inter_gbytes_per_s == Approx(inter));
}

// The algorithm and protocol NCCL's model picks for an all-reduce of `bytes` over `ranks`.
std::string nccl_pick(const Topology& t, int ranks, double bytes) {
  const CollectivePlan p = plan_collective(t, CollectiveKind::all_reduce, range_group(0, ranks), bytes);
  return std::string(to_string(p.algorithm)) + "/" + std::string(to_string(p.protocol));
}

// The least size from `from` up (in steps of 1 %) where the pick is no longer `before`.
double first_size_leaving(const Topology& t, int ranks, double from, const std::string& before) {
  double size = from;
  while (size < 1e11 && nccl_pick(t, ranks, size) == before) size *= 1.01;
  return size;
}

}  // namespace

TEST_CASE("NCCL's topology search on NVSwitch systems, in closed form", "[platform][nccl][tuning]") {
  // One HGX H100 (18 NVLink 4 links, 370.8 GB/s to NCCL): the ring finds 6 x 60 and doubles to
  // 12 x 30; the balanced tree 12 x 30; NVLS 8 heads at 40 (9 x 40 <= 370.8), bwInter 60.
  const NcclGraphs h100 = nccl_search_graphs(test::system_topology("hgx-h100", 8), 8, 1);
  check_graph(h100.ring, 12, 30, 30);
  check_graph(h100.tree, 12, 30, 30);
  check_graph(h100.nvls, 8, 40, 60);
  CHECK_FALSE(h100.plain_tree);
  // One HGX B200 (NVLink 5, 721.8 GB/s): ring 8 x 90 doubled to 16 x 45; tree 16 x 40; NVLS 8 at 80/90.
  const NcclGraphs b200 = nccl_search_graphs(test::system_topology("hgx-b200", 8), 8, 1);
  check_graph(b200.ring, 16, 45, 45);
  check_graph(b200.tree, 16, 40, 40);
  check_graph(b200.nvls, 8, 80, 90);
  // A GB300 NVL72 rack is one node: 4 GPUs give NVLS 4 heads at 90/90, 64 give 32 heads at 20/40.
  const Topology rack = test::system_topology("gb300-nvl72", 72);
  check_graph(nccl_search_graphs(rack, 4, 1).nvls, 4, 90, 90);
  check_graph(nccl_search_graphs(rack, 64, 1).ring, 16, 45, 45);
  check_graph(nccl_search_graphs(rack, 64, 1).nvls, 32, 20, 40);
  // Two HGX H100 nodes, 8 x 400 Gb/s: ring and tree 8 x 48 (the tree's pattern plain: PXN), NVLS
  // 8 heads at 40/48.
  const NcclGraphs two_h100 = nccl_search_graphs(test::system_topology("hgx-h100", 16), 8, 2);
  check_graph(two_h100.ring, 8, 48, 48);
  check_graph(two_h100.tree, 8, 48, 48);
  CHECK(two_h100.plain_tree);
  check_graph(two_h100.nvls, 8, 40, 48);
  // Two GB200 NVL72 racks: the ring 16 x 45.1 (above 15 x 48 = 720), NVLS 32 heads at 20/40.
  const NcclGraphs two_racks = nccl_search_graphs(test::system_topology("gb200-nvl72", 144), 72, 2);
  check_graph(two_racks.ring, 16, 45.1, 45.1);
  check_graph(two_racks.nvls, 32, 20, 40);
  CHECK_FALSE(two_racks.plain_tree);
}

TEST_CASE("moesim picks an all-reduce's algorithm and protocol where NCCL's model does", "[platform][nccl][tuning]") {
  // NCCL's model (v2.28.7 constants, traced by hand): one H100 node leaves ring LL for NVLS at
  // 1.14 MB; 8 Blackwell GPUs at 2.65 MB; a 4-GPU GB300 tray never runs NVLS (ring LL128 from
  // 5.0 MB, Simple from 18.8 MB: NCCL 2.30.7's 40 GB/s LL128 channel cap moves it); 64 GPUs of a
  // rack always NVLS.
  const Topology h100 = test::system_topology("hgx-h100", 8);
  CHECK(nccl_pick(h100, 8, 64e3) == "ring/LL");
  CHECK(first_size_leaving(h100, 8, 64e3, "ring/LL") == Approx(1.14e6).epsilon(0.02));
  CHECK(nccl_pick(h100, 8, 2e6) == "nvls/Simple");
  const Topology b200 = test::system_topology("hgx-b200", 8);
  CHECK(first_size_leaving(b200, 8, 64e3, "ring/LL") == Approx(2.65e6).epsilon(0.02));
  CHECK(nccl_pick(b200, 8, 4e6) == "nvls/Simple");
  const Topology tray = test::system_topology("gb300-nvl72", 4);
  CHECK(nccl_pick(tray, 4, 1e6) == "ring/LL");
  CHECK(nccl_pick(tray, 4, 1e9) == "ring/Simple");
  for (double size = 64e3; size < 1e10; size *= 2) CHECK(nccl_pick(tray, 4, size).rfind("ring/", 0) == 0);
  const Topology rack = test::system_topology("gb300-nvl72", 64);
  for (double size = 512e3; size < 1e10; size *= 2) CHECK(nccl_pick(rack, 64, size) == "nvls/Simple");
}
