#pragma once
// Private: per-member tier loads of each algorithm, shared by the closed forms, the NCCL planner
// and the runners.
#include <algorithm>

#include "group_layout.hpp"
#include "moesim/platform/nccl.hpp"

namespace moesim::platform::detail {

// NCCL_MAX_NVLS_ARITY (NCCL src/include/device.h): NVLS has one head per GPU of a node, at most
// this many (the NVLS graph's channels, search.cc), and each head drives its own NIC.
constexpr int kMaxNvlsHeads = 32;

// NVLS heads of a domain of `ranks` GPUs under NCCL `nccl_version` (major x 100 + minor): the
// arity was 8 until 2.21 raised it to kMaxNvlsHeads. On 8-GPU nodes both give 8.
constexpr int nvls_heads(int ranks, int nccl_version) {
  return std::min(ranks, nccl_version < 221 ? 8 : kMaxNvlsHeads);
}

// What the busiest node of NCCL's double binary tree over `nodes` nodes sends (and receives) per
// byte of the collective (ncclGetDtree, src/graph/trees.cc). Each tree carries half of the data;
// a node sends it once to its parent and once to each child. With 2 nodes each is the root of
// one tree and the leaf of the other (1); with 3 the trees are chains and one node is the middle
// of one (1.5); from 4 on some node has two children in one tree and a parent in both (2).
double double_binary_tree_peak_sends(int nodes);

// Bytes member `member` moves through each tier under `algorithm` for one collective of `bytes`
// (see collective.hpp for what `bytes` means per kind), and the algorithm's latency-bound steps
// on each used tier (ring: its n-1 or 2(n-1) steps; the others one). Rates and latency_s are
// left at their defaults. `nccl_version` sets NVLS's heads (nvls_heads). Throws
// std::invalid_argument for a negative byte count or an algorithm that does not implement `kind`.
TierLoad algorithm_load(NcclAlgorithm algorithm, CollectiveKind kind, const GroupLayout& l, int member,
                        double bytes, int nccl_version);

// Sets the part of a member's NIC bytes that leaves its leaf group: `fraction` of them.
inline void split_spine(TierLoad& load, double fraction) {
  load.spine_bytes = load.nic_bytes * fraction;
  load.crosses_spine = fraction > 0;
}

// Effective per-rank rate of each tier: the plan's achieved rate, at most the port's; the part
// that leaves the leaf group at most the spine share.
inline double port_nvlink_rate(const Topology& t) { return t.nvlink_bytes_per_s; }
inline double port_nic_rate(const Topology& t) { return t.nic_bytes_per_s; }
inline double spine_rate(const Topology& t) { return std::min(t.spine_share_bytes_per_s(), t.nic_bytes_per_s); }
inline double nvlink_rate(const Topology& t, const TierLoad& l) {
  return l.nvlink_bytes_per_s > 0 ? std::min(l.nvlink_bytes_per_s, port_nvlink_rate(t)) : port_nvlink_rate(t);
}
inline double nic_rate(const Topology& t, const TierLoad& l) {
  return l.nic_bytes_per_s > 0 ? std::min(l.nic_bytes_per_s, port_nic_rate(t)) : port_nic_rate(t);
}
inline double nic_hop_latency_s(const Topology& t) { return t.scaleout_latency_s(); }

inline double tier_part_seconds(double bytes, int steps, double bytes_per_s, double hop_latency_s) {
  return steps > 0 ? bytes / bytes_per_s + steps * hop_latency_s : 0.0;
}
inline double nvlink_seconds(const Topology& t, const TierLoad& l) {
  return tier_part_seconds(l.nvlink_bytes, l.nvlink_steps, nvlink_rate(t, l), t.nvlink_latency_s);
}
// The NIC carries all its bytes; the leaf's uplink share only the spine part (max-min: the NIC
// stays full until both parts are done).
inline double nic_seconds(const Topology& t, const TierLoad& l) {
  if (l.nic_steps <= 0) return 0.0;
  return std::max(l.nic_bytes / nic_rate(t, l), l.spine_bytes / spine_rate(t)) + l.nic_steps * nic_hop_latency_s(t);
}

}  // namespace moesim::platform::detail
