// NCCL's model of itself (nccl_tuning.hpp): its search's graphs in closed form, its latency
// model and its predicted time, which is what it chooses by.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "collective_load.hpp"
#include "nccl_tuning_model.hpp"

namespace moesim::platform {

namespace {

// NCCL's tuning constants (NCCL-TUNE: src/graph/tuning.cc at v2.30.7, microseconds), indexed
// [protocol LL, LL128, Simple]. Not measurements: NCCL's own model of itself.
struct Latencies {
  double base[3];
  double nvlink[3];
  double net[3];
};
Latencies latencies(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::tree: return {{6.8, 14.0, 8.4}, {0.6, 1.25, 4.0}, {5.0, 8.5, 14.0}};
    case NcclAlgorithm::ring:
    case NcclAlgorithm::p2p: return {{6.6, 14.0, 8.4}, {0.6, 1.9, 3.4}, {2.7, 4.0, 14.0}};
    case NcclAlgorithm::nvls: return {{0, 0, 0}, {0, 0, 25.0}, {0, 0, 18.0}};
    case NcclAlgorithm::nvls_tree: return {{0, 0, 0}, {0, 0, 25.0}, {0, 0, 20.9}};
    case NcclAlgorithm::pat: return {{8.0, 8.0, 8.0}, {0, 0, 4.0}, {0, 0, 14.0}};
  }
  return {};
}
constexpr double kUs = 1e-6;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
// On inter-node rings NCCL raises the intra-node step latency to the network post overhead
// (1 us on x86, three times that with Simple).
double net_overhead_us(NcclProtocol p) { return p == NcclProtocol::simple ? 3.0 : 1.0; }

int log2_int(double v) {
  int r = 0;
  while (v >= 2) {
    v /= 2;
    ++r;
  }
  return r;
}

// ncclTopoCompute's speeds (NCCL-GRAPH: src/graph/search.cc, speedArrayIntra/Inter), GB/s per
// channel, tried from the fastest down.
constexpr double kHopperIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kHopperInter[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, .24, .12};
constexpr double kBlackwellIntra[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18};
constexpr double kBlackwellInter[] = {96, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, .24, .12};
constexpr int kMaxGraphChannels = 32;  // MAXCHANNELS / 2
// NCCL's link figures (NCCL-GRAPH: topo.h): 20.6 GB/s per NVLink 4 link of 25, 40.1 per NVLink 5
// link of 50; a NIC at its speed (400 Gb/s: 50 GB/s) behind a PCIe Gen5 x16 path (48 GB/s).
constexpr double kNicGbytesPerS = 50;
constexpr double kPcieGen5Gbytes = 48;
constexpr double kSlack = 1e-6;

int whole(double x) { return static_cast<int>(std::floor(std::min(x, 1e6) + kSlack)); }

}  // namespace

namespace detail {

double nccl_latency_s(NcclAlgorithm a, NcclProtocol p, CollectiveKind kind, int n, int d) {
  const Latencies lat = latencies(a);
  const int pi = static_cast<int>(p);
  const bool reduction = kind == CollectiveKind::all_reduce;
  const int ppn = n / d;
  double intra = lat.nvlink[pi];
  // With one rank per node the network latency is fully exposed: the tree's is used.
  const double inter = ppn == 1 ? latencies(NcclAlgorithm::tree).net[pi] : lat.net[pi];
  switch (a) {
    case NcclAlgorithm::ring: {
      const int steps = reduction ? 2 * (n - 1) : n - 1;
      const int inter_steps = d == 1 ? 0 : (reduction ? 2 * (d - 1) : d - 1);
      if (d > 1) intra = std::max(intra, net_overhead_us(p));
      return (lat.base[pi] + (steps - inter_steps) * intra + inter_steps * inter) * kUs;
    }
    case NcclAlgorithm::tree: return (lat.base[pi] + 2 * ((ppn - 1) * intra + log2_int(d) * inter)) * kUs;
    case NcclAlgorithm::nvls: return (intra + (d > 1 ? inter : 0)) * kUs;
    case NcclAlgorithm::nvls_tree: return (lat.base[pi] + intra + 2 * log2_int(d) * inter) * kUs;
    case NcclAlgorithm::pat: return (lat.base[pi] + log2_int(d) * inter / 3.5 + n * 2.8) * kUs;
    case NcclAlgorithm::p2p: return (lat.base[pi] + (d > 1 ? lat.net[pi] : lat.nvlink[pi])) * kUs;
  }
  return 0;
}

NcclTunerCaps nccl_tuner_caps(bool blackwell, int domains) {
  const auto column = static_cast<std::size_t>(domains <= 2 ? domains - 1 : 2);
  constexpr double ll_multi_node[] = {0, 39.0, 20.4};
  constexpr double tree_blackwell[] = {70.0, 42.8, 24.0}, tree_hopper[] = {38.7, 41.4, 36.0};
  constexpr double tree_ll128_blackwell[] = {55.6, 31.67, 20.0}, tree_ll128_hopper[] = {36.7, 36.7, 29.0};
  constexpr double nvls_tree_blackwell[] = {0, 96.0, 80.0}, nvls_tree_hopper[] = {0, 57.7, 45.5};
  NcclTunerCaps c;
  c.ll_max = domains == 1 ? (blackwell ? 282.0 : 141.0) : ll_multi_node[column];
  c.ring_ll128_per_channel = blackwell ? 40.0 : 36.7;
  c.tree_per_channel = (blackwell ? tree_blackwell : tree_hopper)[column];
  c.tree_ll128_per_channel = (blackwell ? tree_ll128_blackwell : tree_ll128_hopper)[column];
  c.nvls_tree_per_channel = (blackwell ? nvls_tree_blackwell : nvls_tree_hopper)[column];
  return c;
}

namespace {

// ncclTopoGetAlgoTime's correction of the tree's bandwidth at medium sizes, by log2(bytes / 64).
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// The bus bandwidth NCCL's model gives the algorithm and protocol, GB/s; 0 where NCCL disables it.
double nccl_bus_gbytes_per_s(const Topology& t, const GroupLayout& l, const NcclGraphs& graphs, NcclAlgorithm a,
                             NcclProtocol p, CollectiveKind kind) {
  const bool reduction = kind == CollectiveKind::all_reduce;
  const bool nvls = a == NcclAlgorithm::nvls || a == NcclAlgorithm::nvls_tree;
  const int d = l.domains;
  // What NCCL never runs: NVLS across nodes (without CollNet), NVLS-tree inside one, the trees
  // but for all-reduce, PAT but with one rank per node, NVLS on any protocol but Simple.
  if (a == NcclAlgorithm::p2p || (a == NcclAlgorithm::nvls && d > 1) || (a == NcclAlgorithm::nvls_tree && d == 1) ||
      ((a == NcclAlgorithm::tree || a == NcclAlgorithm::nvls_tree) && !reduction) ||
      (a == NcclAlgorithm::pat && (reduction || l.max_per_domain != 1)) || (nvls && p != NcclProtocol::simple))
    return 0;
  const NcclGraph& g = a == NcclAlgorithm::ring ? graphs.ring : nvls ? graphs.nvls : graphs.tree;
  if (g.channels <= 0) return 0;
  const NcclTunerCaps caps = nccl_tuner_caps(t.nccl.blackwell, d);
  double bw = d <= 2 ? g.intra_gbytes_per_s : g.inter_gbytes_per_s;
  if (nvls) {
    if (g.channels < 2) return 0;
    const double ppn = static_cast<double>(l.size) / d;
    const double nvls_efficiency = t.nccl.blackwell ? 0.74 : 0.85;  // NCCL's nvlsEfficiency
    double intra = g.intra_gbytes_per_s * nvls_efficiency * (g.channels - 1) / g.channels;
    intra *= reduction ? 2.0 : (ppn - 1) / ppn;  // an all-reduce pipelines two operations
    const double inter = g.inter_gbytes_per_s * (d <= 2 && a == NcclAlgorithm::nvls_tree ? 2 : 1);
    bw = std::min({intra, inter, a == NcclAlgorithm::nvls_tree ? caps.nvls_tree_per_channel : kInfinity});
  }
  double bus = g.channels * bw;
  const bool ring = a == NcclAlgorithm::ring, tree = a == NcclAlgorithm::tree;
  if (ring && p == NcclProtocol::ll) bus = std::min(caps.ll_max, bus * .5);
  if (ring && p == NcclProtocol::ll128) bus = std::min(bus * .92, g.channels * caps.ring_ll128_per_channel);
  if (tree) bus = std::min(bus * .92, g.channels * caps.tree_per_channel);
  if (tree && p == NcclProtocol::ll) bus = std::min(bus / 3.8, caps.ll_max);
  if (tree && p == NcclProtocol::ll128)
    bus = std::min(bus * (d == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g.channels * caps.tree_ll128_per_channel);
  if (tree && graphs.plain_tree) bus *= .85;
  if (a == NcclAlgorithm::pat) bus *= .75;
  return std::max(bus, 0.0);
}

}  // namespace

double nccl_estimated_seconds(const Topology& t, const GroupLayout& l, const NcclGraphs& graphs, NcclAlgorithm a,
                              NcclProtocol p, CollectiveKind kind, double bytes) {
  if (l.size < 2) return kInfinity;
  double bw = nccl_bus_gbytes_per_s(t, l, graphs, a, p, kind);
  if (bw <= 0) return kInfinity;
  const bool reduction = kind == CollectiveKind::all_reduce;
  // To the algorithm's bandwidth: the ring, NVLS and NVLS-tree by ranks over steps, the tree
  // by half; all-gather and reduce-scatter other than the ring's keep the bus figure.
  if (a == NcclAlgorithm::ring || reduction) {
    const int steps = reduction ? 2 * (l.size - 1) : l.size - 1;
    bw *= a == NcclAlgorithm::tree ? 0.5 : static_cast<double>(l.size) / steps;
  }
  double latency_s = nccl_latency_s(a, p, kind, l.size, l.domains);
  const int size_index = log2_int(std::floor(bytes / 64));
  if (a == NcclAlgorithm::tree && reduction && bytes >= 64 && size_index < 23)
    bw *= kTreeCorrection[static_cast<int>(p)][size_index];
  // The ring's plateau across nodes (sm80 and later).
  if (a == NcclAlgorithm::ring && p == NcclProtocol::simple && l.domains > 1 && reduction &&
      bytes / (std::max(1, t.nccl.channels) * l.size) >= 64)
    latency_s *= 1.4;
  return latency_s + bytes / (bw * 1e9);
}

}  // namespace detail

NcclGraphs nccl_search_graphs(const Topology& t, int ranks_per_domain, int domains) {
  NcclGraphs out;
  const int n = std::max(1, ranks_per_domain);
  const bool blackwell = t.nccl.blackwell, inter = domains > 1;
  // A GPU's links to the NVSwitches as NCCL counts them.
  const double link_total = t.nvlink_bytes_per_s / 1e9 * (blackwell ? 40.1 / 50 : 20.6 / 25);
  const std::span<const double> speeds = inter ? (blackwell ? std::span<const double>(kBlackwellInter)
                                                            : std::span<const double>(kHopperInter))
                                               : (blackwell ? std::span<const double>(kBlackwellIntra)
                                                            : std::span<const double>(kHopperIntra));
  const std::size_t last = speeds.size() - 1;
  const double nic_total = t.nic_bytes_per_s / 1e9;
  const int nics_per_gpu = static_cast<int>(std::clamp(std::round(nic_total / kNicGbytesPerS), 1.0, 64.0));
  const double max_speed = inter ? std::min(kPcieGen5Gbytes, nic_total / nics_per_gpu) : link_total;
  const int nics = n * nics_per_gpu;
  if (link_total <= 0 || max_speed <= 0) return out;

  // Ring channels at speed s: NVLink carries s each way per channel (across nodes, on 8-GPU
  // nodes, (n-1)/n of it: one GPU per channel hands over to its NIC); each NIC starts floor(P/s).
  auto ring_channels = [&](double s) {
    if (!inter) return std::min(kMaxGraphChannels, whole(link_total / s));
    const double nvlink_per_channel = n > 8 ? s : s * (n - 1.0) / n;
    const int by_nvlink = nvlink_per_channel > 0 ? whole(link_total / nvlink_per_channel) : kMaxGraphChannels;
    return std::min({kMaxGraphChannels, by_nvlink, nics * whole(max_speed / s)});
  };
  // The first speed the search tries: at most P, and `need` channels of it within `total`.
  auto first_speed = [&](double need, double total) {
    for (std::size_t i = 0; i < speeds.size(); ++i)
      if (speeds[i] <= max_speed && speeds[i] * need <= total) return i;
    return last;
  };

  // Ring: the most channels x speed, lowering the speed while the next is above 0.49 of the best.
  int ring_c = 0;
  double ring_s = 0;
  for (std::size_t i = first_speed(1, link_total); i < speeds.size(); ++i) {
    const int c = ring_channels(speeds[i]);
    if (c * speeds[i] > ring_c * ring_s) {
      ring_c = c;
      ring_s = speeds[i];
    }
    if (ring_c == kMaxGraphChannels || ring_c * ring_s >= link_total) break;
    if (i < last && ring_c > 0 && speeds[i + 1] / ring_s <= 0.49) break;
  }
  if (ring_c == 0) return out;
  // ncclTopoDupChannels: doubled, the speed divided, unless it is slow already.
  if (!(ring_s < 25 || (ring_s < 50 && ring_c > 4))) {
    const int doubled = std::min(2 * ring_c, kMaxGraphChannels);
    ring_s /= (doubled + ring_c - 1) / ring_c;
    ring_c = doubled;
  }
  // Second pass: the fastest speed that still carries as many channels.
  for (double s : speeds)
    if (s > ring_s && s <= max_speed && ring_channels(s) >= ring_c) ring_s = s;
  out.ring = {ring_c, ring_s, ring_s};

  // Tree (as many channels as the ring): a chain inside the node, each GPU but the last sending s.
  const double tree_total = n > 1 ? link_total * n / (n - 1.0) : kInfinity;
  const double chain_share = inter && n <= 8 ? (n - 1.0) / n : 1.0;
  std::size_t i = first_speed(ring_c, tree_total);
  while (i < last && (speeds[i] * ring_c * chain_share > link_total + kSlack || (inter && speeds[i] > max_speed))) ++i;
  const double tree_inter = speeds[i];
  double tree_intra = tree_inter;
  while (inter && i > 0 && tree_inter >= speeds[i - 1] / 2 && speeds[i - 1] * ring_c * chain_share <= link_total) {
    --i;
    tree_intra = speeds[i];
  }
  out.tree = {ring_c, tree_intra, tree_inter};
  // Across 8-GPU nodes PXN leaves the NIC's reverse path on PCIe, which a balanced tree refuses.
  out.plain_tree = inter && t.gpus_per_domain <= 8;

  // NVLS: one head per GPU (per NIC across nodes), at most 32; each GPU carries s each way and
  // a head 2 s: (heads + 1) s within the links. bwInter is raised while below twice bwIntra.
  const int heads = std::min({detail::kMaxNvlsHeads, n, inter ? nics : n});
  if (heads >= 2) {
    double intra = 0;
    for (double s : speeds)
      if (s <= max_speed && (heads + 1) * s <= link_total + kSlack) {
        intra = s;
        break;
      }
    if (intra > 0) {
      double inter_s = 0, at_least_double = kInfinity;
      for (double s : speeds) {
        if (s < intra || s > max_speed) continue;
        inter_s = std::max(inter_s, s);
        if (s >= 2 * intra) at_least_double = std::min(at_least_double, s);
      }
      out.nvls = {heads, intra, at_least_double < kInfinity ? at_least_double : inter_s};
    }
  }
  return out;
}

double nccl_estimated_seconds(const Topology& t, CollectiveKind kind, const Group& g, NcclAlgorithm a, NcclProtocol p,
                              double bytes) {
  const detail::GroupLayout l = detail::analyse_group(t, g);
  return detail::nccl_estimated_seconds(t, l, nccl_search_graphs(t, l.max_per_domain, l.domains), a, p, kind, bytes);
}

}  // namespace moesim::platform
