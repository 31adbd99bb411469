#pragma once
// NCCL's collective algorithms as they move data, and the choice NCCL makes among them.
//
// Each algorithm is described by what one member moves through its NVLink port and its NIC, the
// rate it reaches there and its latency (collective_load.cpp derives the bytes):
//  - ring (all-gather, reduce-scatter, all-reduce): one ring through every member per channel;
//    across d domains each ring enters and leaves a domain once, and the channels' rings leave
//    through different GPUs, so a member's NIC carries 1/k of its ring traffic (k members per
//    domain) and its NVLink port the rest, concurrently;
//  - tree (all-reduce across domains): a chain inside the domain, a double binary tree between
//    domains: each member's NIC carries 1/k of what the tree's busiest node sends (S over 2
//    domains, 1.5 S over 3, 2 S from 4 on: reduce up, broadcast down);
//  - NVLS (inside one NVSwitch domain): the switch reduces (multimem.ld_reduce) and multicasts
//    (multimem.st): an all-reduce moves S through each port, an all-gather or reduce-scatter
//    (n-1)/n S, in one step (a member's own slice does not load its port); its kernel's stages
//    (scatter, reduce, gather) pipeline a channel's share in iterations of heads x chunk, and the
//    pipeline's fill is paid on top (nccl_model.cpp);
//  - NVLS-tree (all-reduce across domains): NVLS inside, the double binary tree between domains
//    on the NICs of the domain's heads (one per GPU, at most 32);
//  - PAT (all-gather, reduce-scatter with one member per domain): the ring's bytes with a
//    logarithmic latency;
//  - p2p (all-to-all, send/recv): each peer pair directly, NVLink and NIC concurrently.
// Rates: the Simple protocol reaches the measured fraction of each link (NcclParams, from
// nccl-tests bus bandwidths); LL128 moves 120 of every 128 bytes (NCCL's model: 0.92 of
// Simple, at most 36.7 GB/s per channel on Hopper, 40 on Blackwell), LL half (0.5). NCCL's
// model adds 0.92 to the tree's all-reduce and 0.75 to PAT. Latencies are NCCL's own tuning
// model (src/graph/tuning.cc, v2.30.7: base + per-step NVLink / network latencies per algorithm
// and protocol). NCCL picks, per collective and size, the algorithm and protocol of least
// predicted time by its own model (ncclTopoGetAlgoTime); moesim picks by that model too
// (nccl_tuning.hpp) and prices the pick with these rates, latencies and fills.
// A collective holds its channels' CTAs (one SM each) while it runs.
#include <optional>
#include <string_view>

#include "moesim/platform/collective.hpp"

namespace moesim::platform {

enum class NcclProtocol { ll, ll128, simple };
std::string_view to_string(NcclAlgorithm a);
// The algorithms NCCL_ALGO can force (point-to-point is not a collective algorithm).
inline constexpr NcclAlgorithm kForceableNcclAlgorithms[] = {NcclAlgorithm::ring, NcclAlgorithm::tree,
                                                             NcclAlgorithm::nvls, NcclAlgorithm::nvls_tree,
                                                             NcclAlgorithm::pat};
// The algorithm of that name (ring, tree, nvls, nvls_tree, pat, p2p), as to_string writes it.
std::optional<NcclAlgorithm> nccl_algorithm_named(std::string_view name);
std::string_view to_string(NcclProtocol p);

struct CollectivePlan {
  NcclAlgorithm algorithm = NcclAlgorithm::p2p;
  NcclProtocol protocol = NcclProtocol::simple;
  int channels = 0;   // CTAs (SMs) it holds while it runs; 0 = none modelled
  TierLoad load;      // of the member planned
  double seconds = 0; // on an idle platform
};

// The plan of member `rank`; the algorithm and protocol are chosen for the whole group, as NCCL
// chooses (least time by NCCL's own model, nccl_tuning.hpp). An ideal library
// (Topology::nccl.modelled false) has only the ring and p2p, at link rate, with one hop latency
// per step, and takes the one of least time.
CollectivePlan plan_collective(const Topology& t, CollectiveKind kind, const Group& g, double bytes, int rank);
// The plan of the busiest member.
CollectivePlan plan_collective(const Topology& t, CollectiveKind kind, const Group& g, double bytes);

// plan_collective(p.topology(), kind, g, bytes, rank) with the group analysed once per platform
// (its group cache): the analysis is O(the group's size), and in full fidelity each of a
// data-parallel group's thousands of members plans its own part.
CollectivePlan plan_collective(const Platform& p, CollectiveKind kind, const Group& g, double bytes, int rank);

// nccl-tests' bus bandwidth of a collective of `ranks` members that took `seconds`: algorithm
// bandwidth (size / time, size = the per-rank buffer: S, or ranks x the per-pair bytes for an
// all-to-all) times 2(n-1)/n for an all-reduce, (n-1)/n for all-gather, reduce-scatter and
// all-to-all, 1 for send/recv.
double bus_bytes_per_s(CollectiveKind kind, int ranks, double bytes, double seconds);

}  // namespace moesim::platform
