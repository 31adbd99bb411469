#pragma once
// NCCL's model of itself, the one it chooses by: the channels and per-channel bandwidths its
// topology search would find (ncclTopoCompute, NCCL-GRAPH), in closed form for NVSwitch systems,
// and the time its tuning model predicts from them (ncclTopoTuneModel, ncclTopoGetAlgoTime,
// NCCL-TUNE at v2.30.7). moesim chooses an algorithm and protocol by this estimate, as NCCL does,
// and prices the choice with its own model (nccl.hpp): the two disagree where NCCL's model is
// wrong, and nccl-tests measures NCCL's choice.
#include "moesim/platform/nccl.hpp"

namespace moesim::platform {

// One graph of ncclTopoCompute: its channels and NCCL's bandwidth per channel, GB/s, inside the
// node (bwIntra) and across nodes (bwInter). NVLS: channels = heads.
struct NcclGraph {
  int channels = 0;
  double intra_gbytes_per_s = 0;
  double inter_gbytes_per_s = 0;
};
struct NcclGraphs {
  NcclGraph ring, tree, nvls;  // nvls also serves NVLS-tree across nodes
  bool plain_tree = false;     // the tree's pattern is NCCL_TOPO_PATTERN_TREE (0.85 in the model)
};

// What NCCL's search finds for `ranks_per_domain` GPUs in each of `domains` NVLink domains (one
// NCCL node each; an NVL72 rack under multi-node NVLink is one node). NCCL's figures: 20.6 GB/s
// per NVLink 4 link, 40.1 per NVLink 5 link, 50 GB/s per 400 Gb/s NIC behind a PCIe Gen5 x16
// path (48 GB/s).
NcclGraphs nccl_search_graphs(const Topology& t, int ranks_per_domain, int domains);

// NCCL's predicted time of the collective (microseconds in NCCL, seconds here), or infinity where
// NCCL would not run that algorithm and protocol. `bytes` as plan_collective's.
double nccl_estimated_seconds(const Topology& t, CollectiveKind kind, const Group& g, NcclAlgorithm a,
                              NcclProtocol p, double bytes);

}  // namespace moesim::platform
