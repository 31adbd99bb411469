#pragma once
// Collectives on the platform, in the two fidelities of docs/method.md ("Platform and engine"), and their closed forms.
//
// Placement of a group is read from the topology: ranks in the same NVLink domain talk over
// NVLink, others over NIC + spine. Algorithms (documented assumptions, NCCL-like):
//  - all_to_all: every rank sends `bytes` to every peer; NVLink and NIC parts run concurrently;
//    a rank whose domain holds k members moves (k-1)·M over NVLink and (n-k)·M over its NIC;
//  - all_gather / reduce_scatter: ring of n inside a domain ((n-1)/n * S, n-1 latency steps);
//    across domains hierarchical: in-domain ring of S ((k-1)/k * S, k-1 steps), then a
//    cross-domain ring of the S/k shard over the d domains ((d-1)/d * S/k, d-1 steps);
//  - all_reduce: reduce_scatter then all_gather (2(n-1)/n * S, 2(n-1) steps in a domain);
//  - send_recv: point to point, NVLink when both ends share a domain, NIC otherwise.
// `bytes` is: all_to_all = bytes per (sender, receiver) pair; collectives = full buffer S per
// rank; send_recv = message size.
//
// Bandwidths: NVLink tier = nvlink_bytes_per_s per direction; NIC tier = the spine share
// nic / oversubscription (every GPU of a domain is assumed to use the spine at once, as the
// symmetric peers of a folded representative do). Hop latencies: nvlink_latency_s and
// Topology::scaleout_latency_s(). A tier with s steps costs bytes / bandwidth + s · hop latency.
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
// Throws std::invalid_argument for an empty group, unknown or repeated ranks, or a send_recv
// group that is not {sender, receiver}.
TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
// The load on member `rank` of the group (its domain's member count sets its tier split).
TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes, int rank);
// Seconds one rank's load takes on an idle platform (tiers added when sequential, else max).
double tier_seconds(const Topology& t, const TierLoad& load);
// Analytical duration of the collective on an idle platform (its busiest rank).
double closed_form_seconds(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
// "nvlink", "nic" or "spine" (the NIC tier when oversubscription > 1): the tier that bounds the
// collective; "none" when nothing moves (a group of one).
std::string_view bottleneck(const Topology& t, CollectiveKind kind, const Group& g, double bytes);

// Busiest-port bound of an all-to-all with arbitrary volumes: bytes_matrix is n x n, row-major,
// bytes_matrix[i * n + j] = bytes member i sends to member j (diagonal ignored). Per member and
// tier, max(sent, received) / bandwidth + hop latency; the slowest member and tier count. On a
// non-blocking fabric (oversubscription 1) this is what flow-level max-min gives
// (notes/simgrid.md §4.2); oversubscribed, each rank is held to its spine share, as in the
// closed forms. Throws std::invalid_argument when the matrix is not n x n.
double all_to_all_v_seconds(const Topology& t, const Group& g, const std::vector<double>& bytes_matrix);

// Where a group sits, for `moesim plan`.
struct GroupPlacement {
  int size = 0;
  int domains_spanned = 0;
  int min_ranks_per_domain = 0;
  int max_ranks_per_domain = 0;
  // The slowest tier its traffic crosses: "nvlink" inside one domain, else "nic" (or "spine"
  // when oversubscribed); "none" for a group of one.
  std::string_view bottleneck_tier;
};
GroupPlacement placement(const Topology& t, const Group& g);

// Run one collective from inside an actor, blocking that actor until this rank's part is done.
//  - folded: the calling representative `self` moves its tier loads over its own ports
//    (loop routes), one activity per tier; peers are not simulated. Steps beyond the first on a
//    tier are one sleep of (steps - 1) hop latencies after that tier's transfer, so an idle
//    platform gives exactly closed_form_seconds.
//  - full: every member of the group must call this with the same arguments (FIFO order per
//    group); each rank exchanges its per-tier bytes with peers through mailboxes (at most one
//    put and one get per tier: NVLink bytes to the next member of its domain, NIC bytes to the
//    member of the same local index in the next spanned domain), keeping every port's byte
//    count exact when every spanned domain holds the same number of members (otherwise sends
//    are exact and receives approximate). The spine uplink is shared by the ranks that really
//    use it, so a group that leaves GPUs of its domains idle may beat the closed form under
//    oversubscription. `tag` disambiguates concurrent collectives of one group; mailboxes are
//    named (tag, tier, receiver) and kept for the whole run, so use one tag per concurrent
//    stream (e.g. "ep3/dispatch"), not one per collective instance.
// For send_recv, g.ranks = {sender, receiver}; both call it (full), or the sender only (folded;
// a folded receiver returns at once). The folded sender sends to the receiver's host when it is
// a representative, else over its own loop route of the tier.
void run_collective(Platform& p, CollectiveKind kind, const Group& g, double bytes, int self,
                    std::string_view tag);

}  // namespace moesim::platform
