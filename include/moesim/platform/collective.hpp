#pragma once
// Collectives on the platform, in the two fidelities of docs/method.md ("Platform and engine"), and their closed forms.
//
// Every collective is first *planned*: the algorithm NCCL would pick (nccl.hpp) gives, for each
// member, the bytes it moves through each tier (its NVLink port, its NIC), the rate its transfer
// reaches there (the protocol's efficiency, or a dispatcher's SM budget) and its latency. The
// plan is then either priced in closed form or *run* on the SimGrid platform, where concurrent
// plans share the ports and the spine. EP dispatchers (ep_dispatch.hpp) produce plans of the
// same shape.
//
// `bytes` is: all_to_all = bytes per (sender, receiver) pair; all_gather / reduce_scatter /
// all_reduce = the full buffer S per rank (nccl-tests' "size"); send_recv = message size.
//
// Tiers: NVLink = the GPU's port into its domain's NVSwitch; NIC = its scale-out NIC into the
// leaf of its rail (topology.hpp). Traffic to domains of the same leaf group stays under the leaf;
// the rest climbs the leaf's uplinks, shared by the GPUs of that leaf (each gets nic /
// oversubscription when all climb at once, as the symmetric peers of a folded representative
// do), then the spine.
#include <string_view>
#include <vector>

#include "moesim/platform/platform.hpp"

namespace moesim::platform {

enum class CollectiveKind { all_to_all, all_gather, reduce_scatter, all_reduce, send_recv };
std::string_view to_string(CollectiveKind k);

struct Group {
  std::vector<int> ranks;  // global ranks, in group order
};

// What one member moves and how fast: the plan of one rank for one collective.
//  - a tier with steps > 0 is used: its time is bytes / rate + steps · hop latency, where the rate
//    is the tier's achieved rate (0 = the port's) and the hop latency is the topology's
//    (nvlink_latency_s, or scaleout_latency_s() for the NIC);
//  - of the NIC's bytes, spine_bytes leave the leaf group: they also share the leaf's uplinks,
//    at most the spine share per GPU, so the NIC tier takes max(nic_bytes / rate, spine_bytes /
//    spine share) (the NIC carries both, the uplink share only the spine part);
//  - tiers run concurrently (the slower one counts) or one after the other;
//  - latency_s is added once: the library's own latency (NCCL's tuning model), beyond the hops.
struct TierLoad {
  double nvlink_bytes = 0;
  int nvlink_steps = 0;
  double nic_bytes = 0;
  int nic_steps = 0;
  double spine_bytes = 0;         // of nic_bytes, what leaves the leaf group
  bool crosses_spine = false;     // some of its NIC peers are in other leaf groups (hop latency)
  bool tiers_sequential = false;
  double nvlink_bytes_per_s = 0;  // achieved rate on the NVLink tier; 0 = the port's
  double nic_bytes_per_s = 0;     // achieved rate on the NIC tier; 0 = the NIC's spine share
  double latency_s = 0;
};

// The load on the busiest rank of the group (all ranks for symmetric placements).
// Throws std::invalid_argument for an empty group, unknown or repeated ranks, or a send_recv
// group that is not {sender, receiver}.
TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
// The load on member `rank` of the group (its domain's member count sets its tier split).
TierLoad tier_load(const Topology& t, CollectiveKind kind, const Group& g, double bytes, int rank);
// Seconds one rank's load takes on an idle platform.
double tier_seconds(const Topology& t, const TierLoad& load);
// Analytical duration of the collective on an idle platform (its busiest rank).
double closed_form_seconds(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
// "nvlink", "nic" or "spine" (the NIC tier when the spine share is below the NIC): the tier that
// bounds the collective; "none" when nothing moves (a group of one).
std::string_view bottleneck(const Topology& t, CollectiveKind kind, const Group& g, double bytes);
std::string_view bottleneck(const Topology& t, const TierLoad& load);

// Busiest-port bound of an all-to-all with arbitrary volumes: bytes_matrix is n x n, row-major,
// bytes_matrix[i * n + j] = bytes member i sends to member j (diagonal ignored). Per member and
// tier, max(sent, received) / bandwidth + hop latency; the slowest member and tier count. On a
// non-blocking fabric (oversubscription 1) this is what flow-level max-min gives
// (notes/simgrid.md §4.2); oversubscribed, each rank's bytes to other leaf groups are held to its
// spine share, as in the closed forms. Throws std::invalid_argument when the matrix is not n x n.
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

// Runs one member's plan from inside an actor, blocking that actor until its part is done.
//  - folded: the calling representative `self` moves its tier loads over its own ports
//    (loop routes), one activity per tier, each capped at the tier's achieved rate; peers are
//    not simulated. The hops beyond the first and latency_s are a sleep after the transfers,
//    so an idle platform gives exactly tier_seconds().
//  - full: every member of the group must call this (FIFO order per group and tag); each rank
//    exchanges its per-tier bytes with peers through mailboxes (at most one put and one get per
//    tier: NVLink bytes to the next member of its domain, NIC bytes to the member of the same
//    local index in the next spanned domain), keeping every port's byte count exact when every
//    spanned domain holds the same number of members (otherwise sends are exact and receives
//    approximate). The spine uplink is shared by the ranks that really use it, so a group that
//    leaves GPUs of its domains idle may beat the closed form under oversubscription. `tag`
//    disambiguates concurrent collectives of one group; mailboxes are named (tag, tier,
//    receiver) and kept for the whole run, so use one tag per concurrent stream (e.g.
//    "ep3/dispatch"), not one per collective instance.
// `load` is the member's own (tier_load(..., self)); members of asymmetric groups may pass
// different loads.
void run_load(Platform& p, const Group& g, const TierLoad& load, int self, std::string_view tag);

// What one member does in the full fidelity, as data: run_load runs it inside an actor, the
// engine's event core (src/engine/event_core.cpp) without one. Each tier sends its transfers
// (NVLink bytes leave through the member's own port and nobody receives them; NIC bytes go to a
// peer that posts `incoming` receives per route and matches them in FIFO order), waits for them
// and for its receives, then for `extra_latency_s` (its hops beyond the first). The tiers run one
// after the other or side by side; `library_latency_s` follows the last.
enum class FullRoute { nvlink = 0, leaf = 1, spine = 2 };
struct FullTransfer {
  FullRoute route = FullRoute::nvlink;
  int to_rank = -1;      // NIC routes: the receiving member's rank
  int to_member = -1;    // NIC routes: the receiving member's place in the group
  double bytes = 0;      // rounded to whole bytes, as SimGrid moves them
  double rate_cap = 0;   // bytes/s; 0: none
};
struct FullTier {
  std::vector<FullTransfer> sends;
  int incoming_leaf = 0;   // receives the member posts on the leaf route, and on the spine route
  int incoming_spine = 0;
  double extra_latency_s = 0;
};
struct FullMemberPart {
  int member = -1;  // the member's place in the group (g.ranks[member] == self)
  std::vector<FullTier> tiers;
  bool sequential = false;
  double library_latency_s = 0;
};
// Throws std::logic_error on a folded platform and std::invalid_argument if self is not a member.
FullMemberPart full_member_part(const Platform& p, const Group& g, const TierLoad& load, int self);

// Plans (as tier_load(..., self)) and runs one collective. For send_recv, g.ranks = {sender,
// receiver}; both call it (full), or the sender only (folded; a folded receiver returns at
// once). The folded sender sends to the receiver's host when it is a representative, else over
// its own loop route of the tier.
void run_collective(Platform& p, CollectiveKind kind, const Group& g, double bytes, int self,
                    std::string_view tag);

}  // namespace moesim::platform
