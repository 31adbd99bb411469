#pragma once
// Memory per GPU by kind, for one pipeline rank (all ranks of a stage hold the same shard
// sizes), against the GPU's usable HBM, at the schedule's activation peak.
#include <array>
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/plan/saved_tensors.hpp"

namespace moesim::plan {

struct ParamShard {
  double dense_params = 0;   // attention, norms, router, dense FFN, shared experts, embeddings
  double expert_params = 0;  // routed experts held by this rank
  // Of dense_params, those FP8 recipes keep in BF16: embeddings, output head, norms, router.
  double bf16_only_params = 0;
};

struct MemoryBreakdown {
  int pp_rank = 0;
  ParamShard params;
  double weights_bytes = 0;       // BF16 parameters and/or their FP8 copies
  double gradients_bytes = 0;     // the data-parallel gradient buffer (FP32 or BF16)
  double optimizer_bytes = 0;     // distributed optimizer: FP32 master + Adam moments, sharded
  double activations_bytes = 0;   // saved for backward by the in-flight micro-batches
  double buffers_bytes = 0;       // EP dispatch/combine staging, runtime workspaces
  int inflight_chunks = 0;        // (micro-batch, chunk) pairs whose activations are held
  // activations_bytes by kind of tensor, indexed like kAllTensorKinds.
  std::array<double, std::size(kAllTensorKinds)> activations_by_kind{};
  double usable_bytes = 0;

  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes;
  }
  bool fits() const { return total_bytes() <= usable_bytes; }
};

// Parameters of one model chunk (virtual stage) on a GPU of pipeline rank `pp_rank`.
ParamShard chunk_params(const Scenario& s, const Layout& l, int pp_rank, int chunk);
// The blocks per-block sharding (layout.sharding fsdp) gathers one at a time, of one model chunk in
// forward order, as held by a GPU before data-parallel sharding: each transformer layer; the
// embedding joins the chunk's first block, MTP layers and the output head its last (TorchTitan
// wraps each block, and the final norm with the output head; the embedding's own unit is folded
// into the first block, an assumption worth a few MB). Their sum is chunk_params.
std::vector<ParamShard> sharded_blocks(const Scenario& s, const Layout& l, int pp_rank, int chunk);
// The parameters a GPU holds of `p` once sharded: dense over dp x cp, experts over edp (and each
// stage's over both copies under dualpipe).
double sharded_params(const ParamShard& p, const Layout& l);
// All chunks of a pipeline rank.
ParamShard param_shard(const Scenario& s, const Layout& l, int pp_rank);
// Activation bytes one micro-batch leaves saved for backward in one transformer layer.
double layer_activation_bytes(const Scenario& s, bool moe_layer);
// (micro-batch, chunk) pairs in flight on a pipeline rank at the peak of the schedule.
int inflight_chunks(const Layout& l, int pp_rank);
// When that peak is reached, in the schedule's terms: the forwards run so far on the rank.
std::string peak_moment(const Layout& l, int pp_rank);
MemoryBreakdown rank_memory(const Scenario& s, const Layout& l, int pp_rank);
std::vector<MemoryBreakdown> memory_per_stage(const Scenario& s, const Layout& l);
// The pipeline rank that needs the most memory.
const MemoryBreakdown& peak_rank(const std::vector<MemoryBreakdown>& memory);

}  // namespace moesim::plan
