// What Megatron-Core and Transformer Engine keep for the backward pass, per micro-batch and GPU.
// Code read (NVIDIA/Megatron-LM d98e8a6, NVIDIA/TransformerEngine d0067d0, August 2026):
//   TE Linear / LayerNormLinear / GroupedLinear save the GEMM input for the weight gradient:
//     quantised column-wise only in FP8 recipes (module/linear.py, layernorm_linear.py
//     "update_usage(rowwise_usage=False)", grouped_linear.py), the BF16 tensor itself otherwise;
//     LayerNormLinear also keeps the norm's input (inputmat) and rsigma.
//   TE fused attention saves q, k, v, the output and FP32 softmax statistics (backends.py
//     FusedAttnFunc); FP8 attention keeps q, k, v quantised (MXFP8: row- and column-wise, the
//     QKV quantizer asks for both in utils.get_attention_quantizers) and the output in BF16.
//   Megatron sets the output projection to save its original (BF16) input in FP8 recipes, which
//     is the tensor attention already holds (multi_latent_attention.py, attention.py,
//     set_save_original_input; MLM-G §2.2.2).
//   Output-discarding recompute (tensor_parallel.CheckpointWithoutOutput): mla_up_proj keeps the
//     latents and frees q, k, v (multi_latent_attention.py); moe_act keeps fc1's output and frees
//     the activation's, with fc2 saving its BF16 input in FP8 recipes (moe/experts.py);
//     layernorm frees the norm outputs (transformer_layer.py). mlp, moe, shared_experts and
//     core_attn checkpoint whole modules, keeping only their inputs (transformer_config.py).
#include "moesim/plan/saved_tensors.hpp"

#include <algorithm>

#include "moesim/model/ops.hpp"

namespace moesim::plan {

namespace {

// The tokens and splits of one micro-batch on one GPU, and the recipe's choices.
struct Shape {
  const Scenario& sc;
  double tokens = 0;        // micro_batch * seq_len / cp
  double seq_tokens = 0;    // tokens / tp: the sequence-parallel share of the residual stream
  int tp = 1;
  bool low_precision = false;
  double gemm_in = kBf16Bytes;   // bytes per element of a saved GEMM input copy

  explicit Shape(const Scenario& s) : sc(s) {
    const model::Shard shard = model::shard_for(s);
    tokens = shard.tokens();
    tp = s.layout.tp;
    seq_tokens = tokens / tp;
    low_precision = s.training.precision != Precision::bf16;
    gemm_in = quantized_bytes(s.training.precision);  // TE's column-wise copy for the wgrad
  }
  bool recomputes(const char* module) const { return sc.recipe.recomputes(module); }
  // Flash attention's q, k, v: BF16, or FP8 copies when attention runs in FP8.
  double attention_qkv_bytes() const {
    if (!(sc.recipe.fp8_attention && low_precision) || recomputes("core_attn")) return kBf16Bytes;
    return sc.training.precision == Precision::mxfp8 ? 2 * gemm_in : gemm_in;
  }
};

void add(std::vector<SavedTensor>& out, std::string name, TensorKind kind, double elements, double bytes) {
  out.push_back({std::move(name), kind, elements, bytes});
}

// Core attention over `heads` query heads of width qk_dim, keys at kv_heads, values of v_dim.
void attention_core(const Shape& s, double heads, double kv_heads, double qk_dim, double v_dim,
                    bool qkv_recomputed, std::vector<SavedTensor>& out) {
  if (!qkv_recomputed)
    add(out, "attention q, k, v", TensorKind::attention_qkv,
        s.tokens * (heads * qk_dim + kv_heads * (qk_dim + v_dim)), s.attention_qkv_bytes());
  // The output is saved once: by attention and, as its original input, by the projection.
  add(out, "attention output (output projection input)", TensorKind::attention_output, s.tokens * heads * v_dim, kBf16Bytes);
  if (!s.recomputes("core_attn"))
    add(out, "attention log-sum-exp (FP32)", TensorKind::attention_output, s.tokens * heads, kFp32Bytes);
}

void mla_attention(const Shape& s, std::vector<SavedTensor>& out) {
  const ModelSpec& m = s.sc.model;
  const AttentionSpec& a = m.attention;
  const double h = m.hidden;
  const bool up_recomputed = s.recomputes("mla_up_proj");
  // input_layernorm is a separate TENorm ahead of the two down-projections.
  add(out, "layer input (input_layernorm)", TensorKind::residual, s.seq_tokens * h, kBf16Bytes);
  if (!s.recomputes("layernorm")) {
    // Both down-projections read the norm output: one BF16 tensor, or one quantised copy each
    // unless the norm itself emits the MXFP8 tensor (fused quantisation, MLM-G step 12).
    const double copies = s.low_precision && !s.sc.recipe.fused_quantization ? 2 : 1;
    add(out, "q/kv down-projection input", TensorKind::gemm_input, copies * s.seq_tokens * h,
        s.low_precision ? s.gemm_in : kBf16Bytes);
  }
  // The latents are the up-projections' inputs (TELayerNormColumnParallelLinear keeps its
  // input) and mla_up_proj's checkpoint inputs: kept either way. The kv latent is a view of the
  // down-projection output together with the rope key.
  if (a.q_lora_rank > 0)
    add(out, "q latent", TensorKind::mla_latent, s.seq_tokens * a.q_lora_rank, kBf16Bytes);
  add(out, "kv latent and rope key", TensorKind::mla_latent, s.seq_tokens * (a.kv_lora_rank + a.qk_rope_head_dim), kBf16Bytes);
  if (!up_recomputed) {
    const double normed = a.kv_lora_rank + a.q_lora_rank;  // the fused q/kv norms' outputs
    add(out, "q/kv up-projection inputs (normed latents)", TensorKind::gemm_input, s.seq_tokens * normed,
        s.low_precision ? s.gemm_in : kBf16Bytes);
    if (a.q_lora_rank == 0 && s.low_precision)  // no q latent: q_proj reads the norm output
      add(out, "q projection input", TensorKind::gemm_input, s.seq_tokens * h, s.gemm_in);
  }
  const double heads = static_cast<double>(a.heads) / s.tp;
  attention_core(s, heads, heads, a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim, up_recomputed, out);
}

void gqa_attention(const Shape& s, std::vector<SavedTensor>& out) {
  const ModelSpec& m = s.sc.model;
  const AttentionSpec& a = m.attention;
  const double h = m.hidden;
  // The norm is fused into the QKV projection (TELayerNormColumnParallelLinear): it keeps the
  // layer input and the normed GEMM input.
  add(out, "layer input (fused input norm)", TensorKind::residual, s.seq_tokens * h, kBf16Bytes);
  add(out, "QKV projection input", TensorKind::gemm_input, s.seq_tokens * h, s.low_precision ? s.gemm_in : kBf16Bytes);
  // Keys and values exist at the KV head count: GQA shares each across a group of query heads.
  const double heads = static_cast<double>(a.heads) / s.tp;
  const double kv_heads = std::max(1.0, static_cast<double>(a.kv_heads) / s.tp);
  attention_core(s, heads, kv_heads, a.head_dim, a.head_dim, false, out);
}

// fc1's output and fc2's input of a SwiGLU MLP with intermediate size `ffn` over `rows` rows.
void swiglu_mlp(const Shape& s, const std::string& what, double rows, double ffn, bool act_recomputed,
                std::vector<SavedTensor>& out, bool input_offloaded = false) {
  // activation_func_fp8_input_store casts the input the activation saves to e4m3
  // (fusions/fused_bias_swiglu.py); a recomputed activation saves nothing itself, and its
  // checkpoint keeps fc1's BF16 output (moe/experts.py CheckpointWithoutOutput).
  const bool fp8_input = s.sc.recipe.activation_fp8_input_store && !act_recomputed;
  // An offloaded fc1 output waits in host memory (recipe.offload; offloaded_activation_bytes).
  if (!(input_offloaded && !act_recomputed))
    add(out, what + " fc1 output (SwiGLU input)", TensorKind::ffn_activation, rows * 2 * ffn, fp8_input ? 1.0 : kBf16Bytes);
  // Recomputing the activation frees its output; in FP8 recipes fc2 is set to save that BF16
  // output rather than its own quantised copy, so nothing of it stays.
  if (!act_recomputed)
    add(out, what + " fc2 input (SwiGLU output)", TensorKind::gemm_input, rows * ffn, s.low_precision ? s.gemm_in : kBf16Bytes);
}

void dense_ffn(const Shape& s, std::vector<SavedTensor>& out) {
  const ModelSpec& m = s.sc.model;
  const double h = m.hidden;
  // pre_mlp_layernorm is fused into fc1 (TELayerNormColumnParallelLinear).
  add(out, "MLP input (fused pre-MLP norm)", TensorKind::residual, s.seq_tokens * h, kBf16Bytes);
  if (s.recomputes("mlp")) return;  // checkpointed: only the input above stays
  add(out, "MLP fc1 input", TensorKind::gemm_input, s.seq_tokens * h, s.low_precision ? s.gemm_in : kBf16Bytes);
  swiglu_mlp(s, "MLP", s.tokens, static_cast<double>(m.dense_ffn) / s.tp, false, out);
}

void moe_ffn(const Shape& s, std::vector<SavedTensor>& out) {
  const ModelSpec& m = s.sc.model;
  const MoeSpec& e = m.moe;
  const double h = m.hidden;
  add(out, "MoE block input (pre_mlp_layernorm)", TensorKind::residual, s.seq_tokens * h, kBf16Bytes);
  if (s.recomputes("moe")) {  // the whole MoE layer is checkpointed on the norm output
    add(out, "MoE layer input (checkpointed)", TensorKind::residual, s.seq_tokens * h, kBf16Bytes);
    return;
  }
  // The router's gating GEMM keeps its BF16 input, the norm output (moe_utils.py
  // RouterGatingLinearFunction); BF16 shared experts read the same tensor.
  const bool norm_recomputed = s.recomputes("layernorm");
  if (!norm_recomputed) add(out, "router input (norm output)", TensorKind::gemm_input, s.seq_tokens * h, kBf16Bytes);
  const double rows = s.seq_tokens * e.top_k;  // token-expert rows on this rank, balanced routing
  add(out, "router scores and routing probabilities (FP32)", TensorKind::router,
      s.seq_tokens * e.experts + rows, kFp32Bytes);
  if (e.shared_ffn > 0 && !s.recomputes("shared_experts")) {
    if (s.low_precision && !norm_recomputed)
      add(out, "shared expert fc1 input", TensorKind::gemm_input, s.seq_tokens * h, s.gemm_in);
    swiglu_mlp(s, "shared expert", s.tokens, static_cast<double>(e.shared_ffn) / s.tp, false, out);
  }
  // Dispatched tokens: BF16, or the quantised copy the grouped GEMM saves.
  add(out, "expert fc1 input (dispatched tokens)", TensorKind::gemm_input, rows * h, s.low_precision ? s.gemm_in : kBf16Bytes);
  swiglu_mlp(s, "expert", rows, static_cast<double>(e.expert_ffn) / s.sc.layout.etp, s.recomputes("moe_act"), out,
             s.sc.recipe.offloads("moe_act"));
}

}  // namespace

std::string_view to_string(TensorKind k) {
  switch (k) {
    case TensorKind::residual: return "residual stream and checkpoints";
    case TensorKind::gemm_input: return "GEMM inputs";
    case TensorKind::mla_latent: return "MLA latents";
    case TensorKind::attention_qkv: return "attention q, k, v";
    case TensorKind::attention_output: return "attention output and LSE";
    case TensorKind::ffn_activation: return "SwiGLU inputs";
    case TensorKind::router: return "router scores";
    case TensorKind::logits: return "logits";
  }
  return "?";
}

std::vector<SavedTensor> layer_saved_tensors(const Scenario& sc, bool moe_layer) {
  const Shape s(sc);
  std::vector<SavedTensor> out;
  if (sc.recipe.recomputes("full")) {  // Megatron's full recompute checkpoints each layer's input
    add(out, "layer input (checkpointed)", TensorKind::residual, s.seq_tokens * sc.model.hidden, kBf16Bytes);
    return out;
  }
  if (sc.model.attention.kind == "mla") mla_attention(s, out);
  else gqa_attention(s, out);
  if (moe_layer) moe_ffn(s, out);
  else dense_ffn(s, out);
  return out;
}

std::vector<SavedTensor> mtp_saved_tensors(const Scenario& sc) {
  const Shape s(sc);
  const double h = sc.model.hidden;
  std::vector<SavedTensor> out;
  add(out, "MTP embedding and hidden norm inputs", TensorKind::residual, 2 * s.seq_tokens * h, kBf16Bytes);
  add(out, "MTP eh_proj input", TensorKind::gemm_input, 2 * s.seq_tokens * h, s.low_precision ? s.gemm_in : kBf16Bytes);
  return out;
}

std::vector<SavedTensor> output_saved_tensors(const Scenario& sc) {
  const Shape s(sc);
  const double h = sc.model.hidden;
  std::vector<SavedTensor> out;
  add(out, "final norm input", TensorKind::residual, s.seq_tokens * h, kBf16Bytes);
  // The output layer is a plain BF16 ColumnParallelLinear even in FP8 recipes.
  add(out, "output layer input", TensorKind::gemm_input, s.seq_tokens * h, kBf16Bytes);
  // Transformer Engine's cross-entropy (cross_entropy_fusion_impl "te") writes the gradient
  // into the BF16 logits during the forward and keeps that; Megatron's own versions cast the
  // logits to FP32 and keep the FP32 softmax (tensor_parallel/cross_entropy.py).
  add(out, "logits (cross-entropy)", TensorKind::logits, s.tokens * sc.model.vocab / s.tp,
      sc.recipe.cross_entropy_fusion ? kBf16Bytes : kFp32Bytes);
  return out;
}

double offloaded_activation_bytes(const Scenario& sc, bool moe_layer) {
  if (sc.recipe.offload.empty()) return 0;
  Scenario kept = sc;
  kept.recipe.offload.clear();
  return total_bytes(layer_saved_tensors(kept, moe_layer)) - total_bytes(layer_saved_tensors(sc, moe_layer));
}

double total_bytes(const std::vector<SavedTensor>& tensors) {
  double total = 0;
  for (const auto& t : tensors) total += t.bytes();
  return total;
}

}  // namespace moesim::plan
