// Memory per GPU: parameter shards, gradient buffer, optimizer states, the activations of the
// micro-batches in flight at the schedule's peak, and buffers.
//
// Weights, gradients and optimizer follow Megatron-Core's DDP and distributed optimizer
// (distributed/param_and_grad_buffer.py, optimizer/distrib_optimizer.py): the gradient buffer is
// FP32 unless gradients are reduced in BF16 (--grad-reduce-in-bf16; Megatron-Bridge's perf
// recipes set grad_reduce_in_fp32 = False); FP32 master weights and the Adam moments are sharded
// over data parallel x context parallel for dense parameters and over expert-data parallel for
// experts. FP8 recipes keep, for every quantised GEMM weight, Transformer Engine's row- and
// column-wise copies (forward and data-gradient GEMMs), beside the BF16 weight unless
// parameters live in FP8 (--fp8-param-gather; for MXFP8 with the gradient buffer reused for the
// gather, reuse_grad_buf_for_mxfp8_param_ag).
#include "moesim/plan/memory.hpp"

#include <algorithm>

#include "moesim/model/ops.hpp"
#include "moesim/model/params.hpp"
#include "moesim/plan/schedule.hpp"

namespace moesim::plan {

namespace {

// Attention, dense FFN and shared experts are tensor-parallel; norms and router replicated
// (and kept in BF16 by FP8 recipes).
ParamShard layer_shard(const ModelSpec& m, bool moe, int tp) {
  const model::LayerParams p = model::layer_params(m, moe);
  ParamShard s;
  s.bf16_only_params = p.norms + p.router;
  s.dense_params = (p.attention + p.dense_ffn + p.shared_experts) / tp + s.bf16_only_params;
  return s;
}

void add_to(ParamShard& total, const ParamShard& p) {
  total.dense_params += p.dense_params;
  total.expert_params += p.expert_params;
  total.bf16_only_params += p.bf16_only_params;
}

// The saved tensors of each part of a chunk, by kind, for one micro-batch.
struct ChunkParts {
  using ByKind = std::array<double, std::size(kAllTensorKinds)>;
  ByKind moe_layer{}, dense_layer{}, output{}, mtp_extra{};

  explicit ChunkParts(const Scenario& s) {
    fill(moe_layer, layer_saved_tensors(s, true));
    fill(dense_layer, layer_saved_tensors(s, false));
    fill(output, output_saved_tensors(s));
    fill(mtp_extra, mtp_saved_tensors(s));
  }
  static void fill(ByKind& into, const std::vector<SavedTensor>& tensors) {
    for (const auto& t : tensors) into[static_cast<size_t>(t.kind)] += t.bytes();
  }
  static void add(ByKind& into, const ByKind& part, double times = 1) {
    for (size_t i = 0; i < into.size(); ++i) into[i] += times * part[i];
  }
};

// Per-block sharding (FSDP2, XLA): the FP32 sharded parameters are the optimizer's master weights
// (counted with its states); what is held unsharded is the gathered blocks in flight (the block
// running and the one prefetched: FSDP2 keeps two all-gather outputs alive, XLA double-buffers its
// pipelined gathers), or every block from its forward to its backward when not resharded, with
// FP8 recipes' quantised copies of the gathered weights; gradients are sharded, besides one
// block's unsharded gradients waiting for their reduce-scatter.
void fsdp_weights_and_gradients(const Scenario& sc, const Layout& l, MemoryBreakdown& mb, double grad_bytes) {
  ParamShard largest;
  for (int c = 0; c < l.chunks; ++c)
    for (const ParamShard& b : sharded_blocks(sc, l, mb.pp_rank, c))
      if (b.dense_params + b.expert_params > largest.dense_params + largest.expert_params) largest = b;
  const Precision precision = sc.training.precision;
  const bool fp8_gather = sc.recipe.fp8_param_gather && precision != Precision::bf16;
  const double gathered_bytes = fp8_gather ? 1.0 : kBf16Bytes;
  ParamShard held = mb.params;
  if (l.reshard_after_forward) {
    held = largest;
    held.dense_params *= 2;
    held.expert_params *= 2;
    held.bf16_only_params *= 2;
  }
  const double held_params = held.dense_params + held.expert_params;
  mb.weights_bytes = held_params * gathered_bytes;
  if (precision != Precision::bf16 && !fp8_gather)
    mb.weights_bytes += (held_params - held.bf16_only_params) * 2 * quantized_bytes(precision);
  mb.gradients_bytes = (sharded_params(mb.params, l) + largest.dense_params + largest.expert_params) * grad_bytes;
}

}  // namespace

double layer_activation_bytes(const Scenario& sc, bool moe_layer) {
  return total_bytes(layer_saved_tensors(sc, moe_layer));
}

namespace {

bool holds_embedding(const Layout& l, int pp_rank) {
  for (int c = 0; c < l.chunks; ++c)
    if (l.stage(pp_rank, c).embedding) return true;
  return false;
}

}  // namespace

std::vector<ParamShard> sharded_blocks(const Scenario& sc, const Layout& l, int pp_rank, int chunk) {
  const ModelSpec& m = sc.model;
  const double expert_layer = model::layer_params(m, true).expert_each * m.moe.experts / l.ep / l.etp;
  const VirtualStage& v = l.stage(pp_rank, chunk);
  std::vector<ParamShard> blocks;
  for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
    const bool moe = model::is_moe_layer(m, i);
    blocks.push_back(layer_shard(m, moe, l.tp));
    if (moe) blocks.back().expert_params += expert_layer;
  }
  if (blocks.empty()) blocks.emplace_back();  // a stage of embedding or head alone
  // What is not a transformer layer of the chunk: the embedding (first block), the MTP layers
  // and the output head (last): chunk_params less the layers' own parameters.
  ParamShard rest = chunk_params(sc, l, pp_rank, chunk);
  for (const ParamShard& b : blocks) {
    rest.dense_params -= b.dense_params;
    rest.expert_params -= b.expert_params;
    rest.bf16_only_params -= b.bf16_only_params;
  }
  const double embedding = v.embedding ? static_cast<double>(m.vocab) * m.hidden / l.tp : 0;
  add_to(blocks.front(), ParamShard{embedding, 0, embedding});
  add_to(blocks.back(), ParamShard{rest.dense_params - embedding, rest.expert_params, rest.bf16_only_params - embedding});
  return blocks;
}

double sharded_params(const ParamShard& p, const Layout& l) {
  return (p.dense_params / l.dense_shards() + p.expert_params / l.expert_shards()) / l.param_copies;
}

ParamShard chunk_params(const Scenario& sc, const Layout& l, int pp_rank, int chunk) {
  const ModelSpec& m = sc.model;
  ParamShard shard;
  const double expert_layer = model::layer_params(m, true).expert_each * m.moe.experts / l.ep / l.etp;
  const VirtualStage& v = l.stage(pp_rank, chunk);
  for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
    const bool moe = model::is_moe_layer(m, i);
    add_to(shard, layer_shard(m, moe, l.tp));
    if (moe) shard.expert_params += expert_layer;
  }
  // Embeddings and the output head stay in BF16 in FP8 recipes.
  const double embedding = static_cast<double>(m.vocab) * m.hidden / l.tp;
  auto add_bf16 = [&](double params) {
    shard.dense_params += params;
    shard.bf16_only_params += params;
  };
  if (v.embedding) add_bf16(embedding);
  if (v.output) add_bf16(embedding + m.hidden);  // output head (or tied copy), final norm
  for (int d = 0; d < v.mtp_layers; ++d) {
    const bool moe = m.moe.experts > 0;
    add_to(shard, layer_shard(m, moe, l.tp));
    const double mtp_norms = 3.0 * m.hidden;  // enorm, hnorm, final norm of model::mtp_extra_params
    shard.dense_params += (model::mtp_extra_params(m) - mtp_norms) / l.tp;
    add_bf16(mtp_norms);
    if (moe) shard.expert_params += expert_layer;
    // MTP embeds with its own copy, unless its rank holds the embedding (DeepSeek-V3 shares it
    // when DualPipe puts the first and last stages on one rank, DSV3 §3.2.3).
    if (!holds_embedding(l, pp_rank) && d == 0) add_bf16(embedding);
  }
  return shard;
}

ParamShard param_shard(const Scenario& sc, const Layout& l, int pp_rank) {
  ParamShard total;
  for (int c = 0; c < l.chunks; ++c) add_to(total, chunk_params(sc, l, pp_rank, c));
  return total;
}

int inflight_chunks(const Layout& l, int pp_rank) { return inflight_peak(l, pp_rank, {}).total(); }

std::string peak_moment(const Layout& l, int pp_rank) {
  const int n = inflight_chunks(l, pp_rank);
  const int forwards_total = l.microbatches * l.chunks;
  if (n >= forwards_total)
    return "after all " + std::to_string(n) + " forwards, before the first backward (no steady state)";
  return "end of warm-up: after " + std::to_string(n) + (n == 1 ? " forward" : " forwards") +
         ", before the first backward";
}

MemoryBreakdown rank_memory(const Scenario& sc, const Layout& l, int pp_rank) {
  MemoryBreakdown mb;
  mb.pp_rank = pp_rank;
  mb.params = param_shard(sc, l, pp_rank);
  const double params = mb.params.dense_params + mb.params.expert_params;
  const Precision precision = sc.training.precision;

  if (precision == Precision::bf16) {
    mb.weights_bytes = params * kBf16Bytes;
  } else {
    const double quantised = params - mb.params.bf16_only_params;
    const double copies = 2 * quantized_bytes(precision);  // row- and column-wise
    mb.weights_bytes = mb.params.bf16_only_params * kBf16Bytes +
                       quantised * ((sc.recipe.fp8_param_gather ? 0 : kBf16Bytes) + copies);
  }
  const double grad_bytes = sc.recipe.main_grad_dtype == "bf16" ? kBf16Bytes : kFp32Bytes;
  mb.gradients_bytes = params * grad_bytes;
  if (l.fsdp) fsdp_weights_and_gradients(sc, l, mb, grad_bytes);
  const double moment = sc.recipe.adam_moment_dtype == "bf16" ? kBf16Bytes : kFp32Bytes;
  const double per_param_state = kFp32Bytes + 2 * moment;
  // (Dualpipe: each stage's states are sharded over the data-parallel ranks of both copies.)
  mb.optimizer_bytes = (mb.params.dense_params * per_param_state / l.dense_shards() +
                        mb.params.expert_params * per_param_state / l.expert_shards()) / l.param_copies;

  // Activations: each (micro-batch, chunk) pair the schedule holds at its peak keeps what its
  // chunk's layers saved.
  const ModelSpec& m = sc.model;
  const ChunkParts parts(sc);
  // What one (micro-batch, chunk) pair of each chunk keeps, by kind: its layers; each MTP depth
  // (its norms and projection, a transformer layer, its own logits); the output head.
  std::vector<ChunkParts::ByKind> chunk_kinds(static_cast<size_t>(l.chunks));
  std::vector<double> chunk_bytes(static_cast<size_t>(l.chunks), 0.0);
  for (int c = 0; c < l.chunks; ++c) {
    ChunkParts::ByKind& kinds = chunk_kinds[static_cast<size_t>(c)];
    kinds.fill(0.0);
    const VirtualStage& v = l.stage(pp_rank, c);
    for (int i = v.first_layer; i < v.first_layer + v.layers; ++i)
      ChunkParts::add(kinds, model::is_moe_layer(m, i) ? parts.moe_layer : parts.dense_layer);
    ChunkParts::add(kinds, parts.mtp_extra, v.mtp_layers);
    ChunkParts::add(kinds, m.moe.experts > 0 ? parts.moe_layer : parts.dense_layer, v.mtp_layers);
    ChunkParts::add(kinds, parts.output, v.mtp_layers + (v.output ? 1 : 0));
    for (double b : kinds) chunk_bytes[static_cast<size_t>(c)] += b;
  }
  // The peak of bytes, which with unequal chunks may hold a different mix than the peak count.
  const InflightPeak peak = inflight_peak(l, pp_rank, chunk_bytes);
  mb.inflight_chunks = inflight_chunks(l, pp_rank);
  for (int c = 0; c < l.chunks; ++c)
    ChunkParts::add(mb.activations_by_kind, chunk_kinds[static_cast<size_t>(c)], peak.per_chunk[static_cast<size_t>(c)]);
  for (double b : mb.activations_by_kind) mb.activations_bytes += b;

  // EP staging buffers (dispatch and combine) sized for the routed tokens of one micro-batch,
  // and runtime workspaces (CUDA context, cuBLAS/cuDNN, NCCL): an assumption of 3 GB.
  constexpr double kRuntimeWorkspaceBytes = 3e9;
  const model::Shard s = model::shard_for(sc);
  if (m.moe.experts > 0)
    mb.buffers_bytes += 2 * s.tokens() / s.tp * m.moe.top_k * m.hidden * kBf16Bytes;
  mb.buffers_bytes += kRuntimeWorkspaceBytes;
  mb.usable_bytes = sc.system.gpu.hbm_usable_bytes;
  return mb;
}

std::vector<MemoryBreakdown> memory_per_stage(const Scenario& s, const Layout& l) {
  std::vector<MemoryBreakdown> out;
  for (int p = 0; p < l.pp; ++p) out.push_back(rank_memory(s, l, p));
  return out;
}

const MemoryBreakdown& peak_rank(const std::vector<MemoryBreakdown>& memory) {
  return *std::max_element(memory.begin(), memory.end(), [](const auto& a, const auto& b) {
    return a.total_bytes() < b.total_bytes();
  });
}

}  // namespace moesim::plan
