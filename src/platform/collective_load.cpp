#include "collective_load.hpp"

#include <stdexcept>

namespace moesim::platform::detail {
namespace {

// Ring reduce-scatter (or all-gather) of a buffer of `bytes` per rank: in one domain a ring of
// n; across domains an in-domain ring of S, then a ring of the S/k shard across the domains.
TierLoad ring_half(const GroupLayout& l, int member, double bytes) {
  TierLoad load;
  const int n = l.size;
  const int k = l.members_in_domain_of(member);
  const int d = l.domains;
  load.tiers_sequential = true;
  if (d == 1) {
    load.nvlink_bytes = (n - 1) * bytes / n;
    load.nvlink_steps = n - 1;
    return load;
  }
  load.nvlink_bytes = (k - 1) * bytes / k;
  load.nvlink_steps = k - 1;
  load.nic_bytes = (d - 1) * (bytes / k) / d;
  load.nic_steps = d - 1;
  return load;
}

}  // namespace

TierLoad member_load(CollectiveKind kind, const GroupLayout& l, int member, double bytes) {
  if (bytes < 0) throw std::invalid_argument("collective: negative byte count");
  TierLoad load;
  switch (kind) {
    case CollectiveKind::all_to_all: {
      const int k = l.members_in_domain_of(member);
      load.nvlink_bytes = (k - 1) * bytes;
      load.nvlink_steps = k > 1 ? 1 : 0;
      load.nic_bytes = (l.size - k) * bytes;
      load.nic_steps = l.size > k ? 1 : 0;
      return load;
    }
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return ring_half(l, member, bytes);
    case CollectiveKind::all_reduce: {
      load = ring_half(l, member, bytes);
      load.nvlink_bytes *= 2;
      load.nvlink_steps *= 2;
      load.nic_bytes *= 2;
      load.nic_steps *= 2;
      return load;
    }
    case CollectiveKind::send_recv: {
      if (l.size != 2) throw std::invalid_argument("send_recv: the group must be {sender, receiver}");
      // Sender and receiver carry the same bytes on the same tier.
      if (l.domains == 1) {
        load.nvlink_bytes = bytes;
        load.nvlink_steps = 1;
      } else {
        load.nic_bytes = bytes;
        load.nic_steps = 1;
      }
      return load;
    }
  }
  throw std::invalid_argument("collective: unknown kind");
}

}  // namespace moesim::platform::detail
