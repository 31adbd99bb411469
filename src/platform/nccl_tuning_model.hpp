#pragma once
// Private: NCCL's tuning constants and latency model (NCCL-TUNE, v2.30.7), shared by moesim's
// pricing (nccl_model.cpp) and NCCL's own estimate that chooses (nccl_tuning.cpp).
#include "group_layout.hpp"
#include "moesim/platform/nccl_tuning.hpp"

namespace moesim::platform::detail {

// NCCL's latency model (ncclTopoTuneModel) for a group of n ranks on d domains, in seconds.
double nccl_latency_s(NcclAlgorithm a, NcclProtocol p, CollectiveKind kind, int n, int d);

// NCCL's caps on a protocol's bus bandwidth, GB/s, by its node-count column (1, 2, 3+ nodes):
// LL in all (on one node the GPU's row, across nodes the host's: Intel and Grace alike), the
// others per channel.
struct NcclTunerCaps {
  double ll_max = 0;
  double ring_ll128_per_channel = 0;
  double tree_per_channel = 0;
  double tree_ll128_per_channel = 0;
  double nvls_tree_per_channel = 0;
};
NcclTunerCaps nccl_tuner_caps(bool blackwell, int domains);

// nccl_estimated_seconds for an analysed group and its graphs (nccl_search_graphs for its
// members per domain and domains: computed once for all the candidates of a collective).
double nccl_estimated_seconds(const Topology& t, const GroupLayout& l, const NcclGraphs& graphs, NcclAlgorithm a,
                              NcclProtocol p, CollectiveKind kind, double bytes);

}  // namespace moesim::platform::detail
