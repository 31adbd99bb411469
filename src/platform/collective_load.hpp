#pragma once
// Private: per-member tier loads of each algorithm, shared by the closed forms and the runners.
#include "group_layout.hpp"

namespace moesim::platform::detail {

// Load of member `member` (index into the group) for one collective of `bytes` (see
// collective.hpp for what `bytes` means per kind).
TierLoad member_load(CollectiveKind kind, const GroupLayout& l, int member, double bytes);

// Effective per-rank bandwidth of each tier and its hop latency.
inline double nvlink_rate(const Topology& t) { return t.nvlink_bytes_per_s; }
inline double nic_rate(const Topology& t) {
  const double share = t.spine_share_bytes_per_s();
  return share < t.nic_bytes_per_s ? share : t.nic_bytes_per_s;
}

inline double tier_part_seconds(double bytes, int steps, double bytes_per_s, double hop_latency_s) {
  return steps > 0 ? bytes / bytes_per_s + steps * hop_latency_s : 0.0;
}
inline double nvlink_seconds(const Topology& t, const TierLoad& l) {
  return tier_part_seconds(l.nvlink_bytes, l.nvlink_steps, nvlink_rate(t), t.nvlink_latency_s);
}
inline double nic_seconds(const Topology& t, const TierLoad& l) {
  return tier_part_seconds(l.nic_bytes, l.nic_steps, nic_rate(t), t.scaleout_latency_s());
}

}  // namespace moesim::platform::detail
