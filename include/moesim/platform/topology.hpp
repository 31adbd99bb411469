#pragma once
// The cluster as numbers: how many GPUs, how they group into NVLink domains, and the bandwidth
// and latency of each tier. Built from a SystemSpec; used by the plan (placement, bottlenecks),
// the closed forms and the SimGrid platform builder.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::platform {

// How NCCL performs on this system (nccl.hpp): measured fractions of each link its protocols
// reach, the CTAs (SMs) it runs on, and the GPU architecture that selects NCCL's own latency
// table. The defaults describe an ideal library: no NCCL algorithms but the ring and
// point-to-point, each at the full link rate with one hop latency per step.
enum class NcclAlgorithm { ring, tree, nvls, nvls_tree, pat, p2p };

struct NcclParams {
  bool modelled = false;               // false: the ideal library above
  bool blackwell = false;              // NCCL's tables: Hopper (sm90) or Blackwell (sm100)
  bool nvls = false;                   // NVLink SHARP (NVSwitch gen 3+): NVLS and NVLS-tree
  double nvlink_efficiency = 1.0;      // Simple protocol, ring and point-to-point, of the port
  double nvls_efficiency = 1.0;        // NVLS, of the port
  double net_efficiency = 1.0;         // Simple protocol over the NIC, of the NIC
  int channels = 0;                    // CTAs of a ring/tree/p2p collective
  int nvls_channels = 0;               // CTAs of an NVLS collective inside one NVLink domain
  int nvls_tree_channels = 0;          // CTAs of an NVLS-tree collective (across domains)
  double call_overhead_s = 0;          // fixed time of each collective beyond NCCL's latency model
  double p2p_ll_channel_bytes_per_s = 0;  // LL point-to-point data rate per channel; 0 = NCCL's LL model
  double p2p_simple_channel_bytes_per_s = 0;  // Simple point-to-point ceiling per channel (CTA); 0 = none
  double p2p_simple_warp_bytes_per_s = 0;     // Simple point-to-point rate per copying warp; 0 = none
  double p2p_ll_latency_s = 0;         // fixed time of one LL point-to-point transfer; 0 = NCCL's ring latency
  double p2p_simple_latency_s = 0;     // fixed time of one Simple point-to-point transfer; 0 = as above
  double p2p_host_call_s = 0;          // host time per ncclSend/ncclRecv of an all-to-all; 0 = never binds
  // NCCL's version as major x 100 + minor: how it cuts an NVLS all-reduce among its channels and
  // its heads' arity changed with 2.20, 2.21, 2.22 and 2.23. The configs' sources read 2.28.
  int version = 228;
  // NCCL_ALGO: only this algorithm is considered (nccl-tests runs that force one); empty = NCCL's
  // own choice. A collective it cannot run is an error, as in NCCL.
  std::optional<NcclAlgorithm> forced_algorithm;
};

struct Topology {
  int gpus = 0;
  int gpus_per_domain = 0;          // GPUs used per NVLink domain (<= the system's domain size)
  double gpu_flop_per_s = 0;        // dense peak in the run's precision
  int gpu_sm_count = 0;             // SMs per GPU (a collective's CTAs take their share)
  double nvlink_bytes_per_s = 0;    // per GPU port, per direction
  double nvlink_latency_s = 0;      // one hop GPU -> NVSwitch -> GPU
  double nic_bytes_per_s = 0;       // per GPU NIC, per direction
  double nic_latency_s = 0;         // per NIC end
  double switch_latency_s = 0;      // per scale-out switch hop
  double oversubscription = 1.0;    // leaf tier: downlink / uplink bandwidth
  // Rail-optimised leaves: each GPU's NIC sits on the leaf of its rail (its index inside its
  // domain); a leaf serves that rail of `domains_per_leaf` consecutive domains (a leaf group),
  // so traffic between them stays under the leaf, and only traffic between leaf groups climbs
  // the leaf's uplinks (downlinks / oversubscription) to the spines. 1: every domain alone.
  int domains_per_leaf = 1;
  // Fraction of the uplinks' capacity traffic between leaf groups gets: 1 under adaptive
  // routing; under ECMP the mean uplink load over the busiest's (ecmp_efficiency).
  double spine_routing_efficiency = 1.0;
  NcclParams nccl;

  // Which GPU each rank runs on (apply_placement()): GPU g is the (g mod gpus_per_domain)-th of
  // NVLink domain g / gpus_per_domain. Empty: rank r on GPU r, Megatron's ranks filling the
  // domains in order.
  std::vector<int> gpu_of_rank;

  // What-if faults (config::FabricFaults, apply_fabric_faults()): the NIC of GPU slow_nic_rank's
  // or every NIC of domain slow_nic_domain at slow_nic_speed of nic_bytes_per_s, and the uplinks
  // of leaf group slow_uplink_leaf_group at slow_uplink_speed of their capacity (-1: none).
  int slow_nic_rank = -1;
  int slow_nic_domain = -1;
  double slow_nic_speed = 1.0;
  int slow_uplink_leaf_group = -1;
  double slow_uplink_speed = 1.0;

  bool any_slow_nic() const { return slow_nic_rank >= 0 || slow_nic_domain >= 0; }
  int domains() const { return (gpus + gpus_per_domain - 1) / gpus_per_domain; }
  int gpu_of(int rank) const {
    return gpu_of_rank.empty() ? rank : gpu_of_rank[static_cast<std::size_t>(rank)];
  }
  double nic_speed_of(int rank) const {
    return rank == slow_nic_rank || domain_of(rank) == slow_nic_domain ? slow_nic_speed : 1.0;
  }
  double uplink_speed_of(int leaf_group) const {
    return leaf_group == slow_uplink_leaf_group ? slow_uplink_speed : 1.0;
  }
  int domain_of(int rank) const { return gpu_of(rank) / gpus_per_domain; }
  int rail_of(int rank) const { return gpu_of(rank) % gpus_per_domain; }
  int leaf_group_of_domain(int domain) const { return domain / domains_per_leaf; }
  int leaf_groups() const { return (domains() + domains_per_leaf - 1) / domains_per_leaf; }
  // Capacity of one leaf's uplinks, and the share of it one GPU gets when every GPU of its leaf
  // climbs at once.
  double leaf_uplink_bytes_per_s() const { return domains_per_leaf * spine_share_bytes_per_s(); }
  double spine_share_bytes_per_s() const { return nic_bytes_per_s / oversubscription * spine_routing_efficiency; }
  // One-way latency of a message between two GPUs of different domains: two NIC ends and the
  // three switch hops leaf, spine, leaf. Taken for every path between domains, also under one
  // leaf (two hops shorter, about half a microsecond): SimGrid's CM02 shares a link among flows
  // in inverse proportion to their route latency, so equal latencies keep the NIC's sharing
  // between traffic under the leaf and traffic to the spine fair, as the closed forms assume.
  double scaleout_latency_s() const { return 2 * nic_latency_s + 3 * switch_latency_s; }
};

// A topology value SimGrid would refuse or abort on (not finite, not positive, absurdly large),
// with the system key it comes from.
struct TopologyError : std::invalid_argument {
  TopologyError(const std::string& what, std::string key) : std::invalid_argument(what), system_key(std::move(key)) {}
  std::string system_key;  // e.g. "nic_gbits_per_s", "fabric.switch_latency_us"
};

// Every speed, bandwidth and latency the platform builder hands to SimGrid, derived ones
// included (spine share, domain uplink): finite, speeds and bandwidths > 0, latencies >= 0,
// all within what a double-precision simulation of a step can resolve. Throws TopologyError.
void check_topology(const Topology& t);

// Static ECMP hashing `flows` flows, each onto one of `uplinks` equal uplinks at random: the
// mean load over the expected load of the busiest uplink, which a synchronised collective waits
// for (1 when every uplink gets its share). Exact balls-into-bins while that takes about 1e7
// steps at most, the Poisson approximation (independent Poisson(flows / uplinks) loads) above.
double ecmp_efficiency(int flows, int uplinks);

// gpus_per_domain = 0 takes the system's whole domain. Checked with check_topology().
Topology make_topology(const SystemSpec& system, int gpus, int gpus_per_domain, Precision precision);

// The scenario's degraded links on `t` (its domains as the layout fills them). The scenario's
// reader checked the ranks, domains and speeds; throws std::invalid_argument for one outside `t`.
void apply_fabric_faults(Topology& t, const FabricFaults& faults);

// The scenario's placement (Scenario::placement) on `t`: whole nodes of `gpus_per_node`
// consecutive ranks moved together, "in_order" leaving every rank on its own GPU. Throws
// std::invalid_argument for an unknown name or nodes that do not tile the domains.
void apply_placement(Topology& t, const std::string& placement, int gpus_per_node, std::uint64_t seed);

// The scenario's cluster as it runs: its system, GPU count and layout.gpus_per_domain, with its
// placement and its degraded links applied.
Topology scenario_topology(const Scenario& s);

}  // namespace moesim::platform
