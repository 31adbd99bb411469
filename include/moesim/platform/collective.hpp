#pragma once
// Collectives on the platform, in the two fidelities of DESIGN.md §2, and their closed forms.
//
// Placement of a group is read from the topology: ranks in the same NVLink domain talk over
// NVLink, others over NIC + spine. Algorithms (documented assumptions, NCCL-like):
//  - all_to_all: every rank sends `bytes` to every peer; NVLink and NIC parts run concurrently;
//  - all_gather / reduce_scatter: ring of n inside a domain ((n-1)/n * S, n-1 latency steps);
//    across domains hierarchical: in-domain ring of S, then cross-domain ring of S/k;
//  - all_reduce: reduce_scatter then all_gather (2(n-1)/n * S, 2(n-1) steps in a domain);
//  - send_recv: point to point, NVLink when both ends share a domain, NIC otherwise.
// `bytes` is: all_to_all = bytes per (sender, receiver) pair; collectives = full buffer S per
// rank; send_recv = message size.
#include <string_view>
#include <vector>

#include "moesim/platform/platform.hpp"

namespace moesim::platform {

enum class CollectiveKind { all_to_all, all_gather, reduce_scatter, all_reduce, send_recv };
std::string_view to_string(CollectiveKind k);

struct Group {
  std::vector<int> ranks;  // global ranks, in group order
};

// Bytes one rank moves through each tier and the number of latency-bound steps on it.
struct TierLoad {
  double nvlink_bytes = 0;
  int nvlink_steps = 0;
  double nic_bytes = 0;
  int nic_steps = 0;
  bool tiers_sequential = false;  // hierarchical algorithms: NVLink phase, then NIC phase
};

// The load on the busiest rank of the group (all ranks for symmetric placements).
TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
// Analytical duration of the collective on an idle platform.
double closed_form_seconds(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
// "nvlink", "nic" or "spine": the tier that bounds the collective.
std::string_view bottleneck(const Topology& t, CollectiveKind kind, const Group& g, double bytes);

// Run one collective from inside an actor, blocking that actor until this rank's part is done.
//  - folded: the calling representative `self` moves its tier loads over its own ports
//    (loop routes), one activity per tier; peers are not simulated.
//  - full: every member of the group must call this with the same arguments (FIFO order per
//    group); each rank exchanges its per-tier bytes with peers through mailboxes, keeping every
//    port's byte count exact. `tag` disambiguates concurrent collectives of one group.
// For send_recv, g.ranks = {sender, receiver}; both call it (full), or the sender only (folded).
void run_collective(Platform& p, CollectiveKind kind, const Group& g, double bytes, int self,
                    std::string_view tag);

}  // namespace moesim::platform
