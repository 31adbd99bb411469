// Memory per GPU: parameter shards, optimizer states, saved activations and buffers.
#include "moesim/plan/memory.hpp"

#include <algorithm>
#include <set>

#include "moesim/model/ops.hpp"
#include "moesim/model/params.hpp"

namespace moesim::plan {

namespace {

constexpr double kBf16 = 2.0;
constexpr double kFp32 = 4.0;

// Bytes an operator saves for its backward pass.
double saved_bytes(const model::Op& op, const model::Shard& s, double hidden) {
  const bool low = op.low_precision && s.precision != Precision::bf16;
  switch (op.kind) {
    case model::OpKind::gemm:
    case model::OpKind::grouped_gemm: {
      // The weight gradient needs the GEMM input; Transformer Engine keeps it quantised in FP8
      // recipes. A sequence-parallel input (k == hidden) is saved as this rank's shard.
      double elements = op.m * op.k * op.groups;
      if (op.k == hidden && s.tp > 1) elements /= s.tp;
      return elements * (low ? quantized_bytes(s.precision) : kBf16);
    }
    case model::OpKind::attention: {
      // Flash attention keeps q, k, v, its output and the FP32 log-sum-exp per row.
      const double rows = op.attention_sequences * op.attention_seq_len * op.attention_heads;
      return rows * (2.0 * op.attention_qk_dim + 2.0 * op.attention_v_dim) * kBf16 + rows * kFp32;
    }
    case model::OpKind::memory:
      // Norms and activations keep their input (half of the bytes they move); permutes,
      // residual adds and casts keep nothing the GEMMs around them do not already hold.
      if (op.name.find("norm") != std::string::npos) return op.bytes / 2;
      if (op.name.find("swiglu") != std::string::npos) return op.bytes * 2.0 / 3.0;
      if (op.name.find("router_topk") != std::string::npos) return op.bytes / 6;
      return 0;
  }
  return 0;
}

double section_saved_bytes(const model::Section& sec, const Scenario& sc, const model::Shard& s) {
  double total = 0;
  for (const auto& op : sec.ops) {
    if (sc.recipe.recomputes(op.module)) continue;
    double bytes = saved_bytes(op, s, sc.model.hidden);
    // MLA's q, k and v come out of the up-projections: recomputing mla_up_proj rebuilds them for
    // the attention backward, which then keeps only its output and log-sum-exp.
    if (op.kind == model::OpKind::attention && sc.recipe.recomputes("mla_up_proj")) {
      const double rows = op.attention_sequences * op.attention_seq_len * op.attention_heads;
      bytes = rows * op.attention_v_dim * kBf16 + rows * kFp32;
    }
    total += bytes;
  }
  return total;
}

double dense_params_of_layer(const ModelSpec& m, bool moe, int tp) {
  model::LayerParams p = model::layer_params(m, moe);
  // Attention, dense FFN and shared experts are tensor-parallel; norms and router replicated.
  return (p.attention + p.dense_ffn + p.shared_experts) / tp + p.norms + p.router;
}

}  // namespace

double layer_activation_bytes(const Scenario& sc, bool moe_layer) {
  const model::Shard s = model::shard_for(sc);
  if (sc.recipe.recomputes("full"))
    return s.tokens() / s.tp * sc.model.hidden * kBf16;  // only the layer input is kept
  model::LayerProgram p = model::layer_program(sc.model, s, moe_layer);
  double total = 0;
  for (const model::Section* sec : {&p.attention, &p.router, &p.experts, &p.unpermute,
                                    &p.shared_experts, &p.dense_ffn})
    total += section_saved_bytes(*sec, sc, s);
  // A recomputed module still keeps its input checkpoint.
  if (!sc.recipe.recompute.empty()) total += s.tokens() / s.tp * sc.model.hidden * kBf16;
  return total;
}

ParamShard chunk_params(const Scenario& sc, const Layout& l, int pp_rank, int chunk) {
  const ModelSpec& m = sc.model;
  ParamShard shard;
  const double expert_layer = model::layer_params(m, true).expert_each * m.moe.experts / l.ep / l.etp;
  const VirtualStage& v = l.stage(pp_rank, chunk);
  for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
    const bool moe = model::is_moe_layer(m, i);
    shard.dense_params += dense_params_of_layer(m, moe, l.tp);
    if (moe) shard.expert_params += expert_layer;
  }
  const double embedding = static_cast<double>(m.vocab) * m.hidden / l.tp;
  if (v.embedding) shard.dense_params += embedding;
  if (v.output) shard.dense_params += embedding + m.hidden;  // output head (or tied copy), final norm
  for (int d = 0; d < v.mtp_layers; ++d) {
    const bool moe = m.moe.experts > 0;
    shard.dense_params += dense_params_of_layer(m, moe, l.tp) + model::mtp_extra_params(m) / l.tp;
    if (moe) shard.expert_params += expert_layer;
    if (!v.embedding && d == 0) shard.dense_params += embedding;  // MTP embeds with its own copy
  }
  return shard;
}

ParamShard param_shard(const Scenario& sc, const Layout& l, int pp_rank) {
  ParamShard total;
  for (int c = 0; c < l.vpp; ++c) {
    ParamShard p = chunk_params(sc, l, pp_rank, c);
    total.dense_params += p.dense_params;
    total.expert_params += p.expert_params;
  }
  return total;
}

int inflight_chunks(const Layout& l, int pp_rank) {
  const int total = l.microbatches * l.vpp;
  if (!l.interleaved) return std::min(l.pp - pp_rank, l.microbatches);
  // Megatron's interleaved schedule: warm-up forwards, then one more before the first backward.
  const int warmup = (l.pp - pp_rank - 1) * 2 + (l.vpp - 1) * l.pp;
  return std::min(warmup + 1, total);
}

MemoryBreakdown rank_memory(const Scenario& sc, const Layout& l, int pp_rank) {
  MemoryBreakdown mb;
  mb.pp_rank = pp_rank;
  mb.params = param_shard(sc, l, pp_rank);
  const double params = mb.params.dense_params + mb.params.expert_params;
  const bool low = sc.training.precision != Precision::bf16;

  // Weights: BF16 parameters; FP8 recipes also keep row- and column-wise quantised copies
  // (forward and backward layouts), which replace the BF16 copy when parameters are gathered
  // in FP8.
  mb.weights_bytes = params * kBf16;
  if (low) mb.weights_bytes = params * ((sc.recipe.fp8_param_gather ? 0 : kBf16) + 2 * quantized_bytes(sc.training.precision));
  // Megatron's DDP accumulates and reduces gradients in an FP32 buffer.
  mb.gradients_bytes = params * kFp32;
  // Distributed optimizer: FP32 master weights and two Adam moments, sharded over the
  // data-parallel group (dense) or the expert-data-parallel group (experts).
  const double moment = sc.recipe.adam_moment_dtype == "bf16" ? kBf16 : kFp32;
  const double per_param_state = kFp32 + 2 * moment;
  mb.optimizer_bytes = mb.params.dense_params * per_param_state / (l.dp * l.cp) +
                       mb.params.expert_params * per_param_state / l.edp;

  // Activations: each in-flight (micro-batch, chunk) holds its chunk's layers, in schedule
  // order (Megatron runs pp micro-batches of chunk 0, then of chunk 1, ...).
  mb.inflight_chunks = inflight_chunks(l, pp_rank);
  const ModelSpec& m = sc.model;
  const double moe_act = layer_activation_bytes(sc, true);
  const double dense_act = layer_activation_bytes(sc, false);
  const model::Shard s = model::shard_for(sc);
  for (int k = 0; k < mb.inflight_chunks; ++k) {
    const int chunk = l.interleaved ? (k / l.pp) % l.vpp : 0;
    const VirtualStage& v = l.stage(pp_rank, chunk);
    for (int i = v.first_layer; i < v.first_layer + v.layers; ++i)
      mb.activations_bytes += model::is_moe_layer(m, i) ? moe_act : dense_act;
    mb.activations_bytes += v.mtp_layers * (m.moe.experts > 0 ? moe_act : dense_act);
    if (v.output) mb.activations_bytes += s.tokens() * (m.vocab / l.tp) * kBf16 * (1 + v.mtp_layers);
  }

  // EP staging buffers (dispatch and combine) sized for the routed tokens of one micro-batch,
  // and runtime workspaces (CUDA context, cuBLAS/cuDNN, NCCL): an assumption of 3 GB.
  constexpr double kRuntimeWorkspaceBytes = 3e9;
  if (m.moe.experts > 0)
    mb.buffers_bytes += 2 * s.tokens() / s.tp * m.moe.top_k * m.hidden * kBf16;
  mb.buffers_bytes += kRuntimeWorkspaceBytes;
  mb.usable_bytes = sc.system.gpu.hbm_usable_bytes;
  return mb;
}

std::vector<MemoryBreakdown> memory_per_stage(const Scenario& s, const Layout& l) {
  std::vector<MemoryBreakdown> out;
  for (int p = 0; p < l.pp; ++p) out.push_back(rank_memory(s, l, p));
  return out;
}

}  // namespace moesim::plan
