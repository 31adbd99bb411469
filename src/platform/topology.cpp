#include "moesim/platform/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace moesim::platform {

Topology make_topology(const SystemSpec& system, int gpus, int gpus_per_domain, Precision precision) {
  if (gpus <= 0) throw std::invalid_argument("make_topology: gpus must be positive, got " + std::to_string(gpus));
  if (system.domain_gpus <= 0)
    throw std::invalid_argument("make_topology: system '" + system.name + "' has no NVLink domain size");
  if (gpus_per_domain == 0) gpus_per_domain = system.domain_gpus;
  if (gpus_per_domain < 0 || gpus_per_domain > system.domain_gpus)
    throw std::invalid_argument("make_topology: gpus_per_domain " + std::to_string(gpus_per_domain) +
                                " outside 1.." + std::to_string(system.domain_gpus));
  if (system.nvlink_bytes_per_s <= 0 || system.nic_bytes_per_s <= 0)
    throw std::invalid_argument("make_topology: system '" + system.name + "' needs NVLink and NIC bandwidths");

  Topology t;
  t.gpus = gpus;
  t.gpus_per_domain = gpus_per_domain;
  t.gpu_flop_per_s = system.gpu.peak_flop_per_s(precision);
  t.gpu_sm_count = system.gpu.sm_count;
  t.nvlink_bytes_per_s = system.nvlink_bytes_per_s;
  t.nvlink_latency_s = system.nvlink_latency_s;
  t.nic_bytes_per_s = system.nic_bytes_per_s;
  t.nic_latency_s = system.nic_latency_s;
  t.switch_latency_s = system.fabric.switch_latency_s;
  // A ratio below 1 would mean a spine faster than the NICs feeding it: the NIC bounds anyway.
  t.oversubscription = system.fabric.oversubscription >= 1.0 ? system.fabric.oversubscription : 1.0;
  // A leaf's ports serve one rail of as many domains (each domain has one GPU per rail).
  t.domains_per_leaf = system.fabric.gpus_per_leaf >= 1 ? system.fabric.gpus_per_leaf : 1;
  const NcclSpec& n = system.nccl;
  if (system.fabric.routing == "ecmp") {
    // A leaf's NIC ports and its uplinks (ports of the same speed): its flows hash onto those.
    const int flows_per_nic = system.fabric.ecmp_flows_per_nic > 0
                                  ? system.fabric.ecmp_flows_per_nic
                                  : std::max(1, (n.channels + system.domain_gpus - 1) / system.domain_gpus);
    const int uplinks = std::max(1, static_cast<int>(std::lround(t.domains_per_leaf / t.oversubscription)));
    t.spine_routing_efficiency = ecmp_efficiency(flows_per_nic * t.domains_per_leaf, uplinks);
  }
  t.nccl.modelled = true;
  t.nccl.blackwell = n.arch == "blackwell";
  t.nccl.nvls = n.nvls_efficiency > 0;
  t.nccl.nvlink_efficiency = n.nvlink_efficiency;
  t.nccl.nvls_efficiency = n.nvls_efficiency > 0 ? n.nvls_efficiency : 1.0;
  t.nccl.net_efficiency = n.net_efficiency;
  t.nccl.channels = n.channels;
  t.nccl.nvls_channels = n.nvls_channels;
  t.nccl.nvls_tree_channels = n.nvls_tree_channels > 0 ? n.nvls_tree_channels : n.nvls_channels;
  t.nccl.call_overhead_s = n.call_overhead_us * 1e-6;
  t.nccl.p2p_ll_channel_bytes_per_s = n.p2p_ll_channel_gbytes_per_s * 1e9;
  t.nccl.p2p_simple_channel_bytes_per_s = n.p2p_simple_channel_gbytes_per_s * 1e9;
  t.nccl.p2p_simple_warp_bytes_per_s = n.p2p_simple_warp_gbytes_per_s * 1e9;
  t.nccl.p2p_ll_latency_s = n.p2p_ll_latency_us * 1e-6;
  t.nccl.p2p_simple_latency_s = n.p2p_simple_latency_us * 1e-6;
  t.nccl.p2p_host_call_s = n.p2p_host_call_us * 1e-6;
  check_topology(t);
  return t;
}

void apply_fabric_faults(Topology& t, const FabricFaults& faults) {
  if (faults.nic_rank >= 0 || faults.nic_domain >= 0) {
    if (faults.nic_rank >= t.gpus || faults.nic_domain >= t.domains() || !(faults.nic_speed > 0 && faults.nic_speed <= 1))
      throw std::invalid_argument(fmt::format("fabric_faults: NIC of rank {} or domain {} (speed {}) outside {} GPUs",
                                              faults.nic_rank, faults.nic_domain, faults.nic_speed, t.gpus));
    t.slow_nic_rank = faults.nic_rank;
    t.slow_nic_domain = faults.nic_domain;
    t.slow_nic_speed = faults.nic_speed;
  }
  if (faults.uplink_leaf_group >= 0) {
    if (faults.uplink_leaf_group >= t.leaf_groups() || !(faults.uplink_speed > 0 && faults.uplink_speed <= 1))
      throw std::invalid_argument(fmt::format("fabric_faults: leaf group {} (speed {}) outside the {} leaf groups",
                                              faults.uplink_leaf_group, faults.uplink_speed, t.leaf_groups()));
    t.slow_uplink_leaf_group = faults.uplink_leaf_group;
    t.slow_uplink_speed = faults.uplink_speed;
  }
}

void apply_placement(Topology& t, const std::string& placement, int gpus_per_node, std::uint64_t seed) {
  if (placement == "in_order") {
    t.gpu_of_rank.clear();
    return;
  }
  if (gpus_per_node <= 0 || t.gpus_per_domain % gpus_per_node != 0 || t.gpus % gpus_per_node != 0)
    throw std::invalid_argument(fmt::format("placement {}: nodes of {} GPUs do not tile {} GPUs in domains of {}",
                                            placement, gpus_per_node, t.gpus, t.gpus_per_domain));
  // Node slots in the order the job's nodes take them: node k of the job (ranks k x
  // gpus_per_node onwards) lands on slot node_slot[k], the (slot mod nodes per domain)-th node
  // of domain slot / nodes per domain.
  const int nodes = t.gpus / gpus_per_node;
  const int nodes_per_domain = t.gpus_per_domain / gpus_per_node;
  std::vector<int> node_slot;
  node_slot.reserve(static_cast<std::size_t>(nodes));
  if (placement == "round_robin_nodes") {
    // Cycle over the domains: each takes its next node in turn (a partial last domain drops out
    // of the cycle once full).
    for (int position = 0; position < nodes_per_domain; ++position)
      for (int d = 0; d < t.domains(); ++d)
        if (const int slot = d * nodes_per_domain + position; slot < nodes) node_slot.push_back(slot);
  } else if (placement == "random_nodes") {
    for (int k = 0; k < nodes; ++k) node_slot.push_back(k);
    // Fisher-Yates on mt19937_64, whose sequence the standard fixes: the same seed, the same
    // placement on every platform (std::shuffle's distribution is the library's own).
    std::mt19937_64 rng(seed);
    for (int i = nodes - 1; i > 0; --i)
      std::swap(node_slot[static_cast<std::size_t>(i)],
                node_slot[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(i + 1))]);
  } else {
    throw std::invalid_argument("placement: unknown placement '" + placement +
                                "'; expected in_order, round_robin_nodes or random_nodes");
  }
  t.gpu_of_rank.assign(static_cast<std::size_t>(t.gpus), 0);
  for (int rank = 0; rank < t.gpus; ++rank)
    t.gpu_of_rank[static_cast<std::size_t>(rank)] =
        node_slot[static_cast<std::size_t>(rank / gpus_per_node)] * gpus_per_node + rank % gpus_per_node;
}

Topology scenario_topology(const Scenario& s) {
  Topology t = make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision);
  apply_placement(t, s.placement, s.system.node_gpus(), static_cast<std::uint64_t>(s.seed));
  apply_fabric_faults(t, s.fabric_faults);
  return t;
}

void check_topology(const Topology& t) {
  // Bounds far outside any machine but inside what SimGrid's double arithmetic handles: rates
  // up to 1e24 per second (tests idealise free links at 1e18 per GPU), latencies up to a
  // second (a step is seconds long).
  constexpr double kMaxRate = 1e24, kMaxLatency_s = 1.0;
  const auto rate = [&](double v, const char* what, const char* key) {
    if (!(std::isfinite(v) && v > 0 && v <= kMaxRate))
      throw TopologyError(fmt::format("{} is {} per second; expected a finite value in (0, {:g}]", what, v, kMaxRate),
                          key);
  };
  const auto latency = [&](double v, const char* what, const char* key) {
    if (!(std::isfinite(v) && v >= 0 && v <= kMaxLatency_s))
      throw TopologyError(fmt::format("{} is {} s; expected a finite value in [0, {:g}] s", what, v, kMaxLatency_s), key);
  };
  rate(t.gpu_flop_per_s, "the GPU's dense peak (FLOP)", "gpu");
  rate(t.nvlink_bytes_per_s, "the NVLink bandwidth (bytes)", "nvlink_gbytes_per_s_per_direction");
  rate(t.nic_bytes_per_s, "the NIC bandwidth (bytes)", "nic_gbits_per_s");
  rate(t.spine_share_bytes_per_s(), "a GPU's share of the spine (bytes)", "fabric.oversubscription");
  rate(t.spine_share_bytes_per_s() * t.gpus_per_domain, "a domain's uplink (bytes)", "nic_gbits_per_s");
  latency(t.nvlink_latency_s, "the NVLink latency", "nvlink_latency_us");
  latency(t.nic_latency_s, "the NIC latency", "nic_latency_us");
  latency(t.switch_latency_s, "the switch latency", "fabric.switch_latency_us");
  latency(t.scaleout_latency_s(), "the scale-out latency (2 NICs, 3 switch hops)", "nic_latency_us");
}

}  // namespace moesim::platform
