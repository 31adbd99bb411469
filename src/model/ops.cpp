#include "moesim/model/ops.hpp"

#include <cmath>

namespace moesim::model {

namespace {

// MXFP8 carries one 8-bit scale per 32 elements (OCP MX specification).
constexpr double kMxScaleBytesPerElement = 1.0 / 32.0;

Op gemm(std::string name, double m, double k, double n, std::string module, bool low_precision = true) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::gemm;
  op.te_module = true;  // Megatron builds its linear layers from TE's; the router and logits say otherwise
  op.m = m;
  op.k = k;
  op.n = n;
  op.module = std::move(module);
  op.low_precision = low_precision;
  return op;
}

// An HBM-bound kernel. Its backward, by default, moves the same bytes (the gradient through a
// permute, cast, RoPE, lookup or loss) in twice the launches; kernels whose backward differs say so.
Op memory(std::string name, double bytes, std::string module, int kernels = 1) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::memory;
  op.bytes = bytes;
  op.backward_bytes = bytes;
  op.module = std::move(module);
  op.model_flops = false;
  op.kernels = kernels;
  op.backward_kernels = 2 * kernels;
  return op;
}

// Between the bulk scale allocation (MLM-G step 1, `fused_permute`) and the fused swizzle (step
// 8), a GroupedLinear's split quantisation zero-fills one buffer for all its experts' MXFP8 scales
// (TE v2.6 cast.cpp) instead of two per tensor.
bool bulk_zeroed_scales(const Shard& s) {
  return s.precision == Precision::mxfp8 && s.fused_permute && !s.fused_swizzle;
}

enum class QuantAfter { norm, other };

// Quantising a BF16 activation of `elements` before a GEMM, in the run's recipe. Transformer
// Engine writes a row-wise copy (for this GEMM) and a column-wise one (saved for the weight
// gradient) from the same read; the backward quantises the incoming gradient the same way.
//  - fp8 (per-tensor current scaling): an amax pass, then the scaled cast: two reads.
//  - fp8_blockwise: one pass, FP32 scales per 1x128 block.
//  - mxfp8: one pass, E8M0 scales per 32 elements (the GEMM swizzles them: add_gemm_scale_swizzles).
//    Before the fused swizzle (MLM-G §2.1.3, TE PR 2019, history step 8) it zero-fills the row-
//    and column-wise scale buffers first: two torch.zeros kernels per tensor (TE v2.4-v2.6
//    quantizer.cpp, `at::zeros` for each scale_inv). The bulk allocation (MLM-G §2.1.2, TE PRs
//    1793/1934/2134, step 1) serves a GroupedLinear's split quantisation from one buffer, so
//    the experts' scales take one torch.zeros for the whole group (TE v2.6 cast.cpp), added by
//    the caller (`grouped`); other tensors keep their two until the fused swizzle zero-pads.
//    After a norm the whole cast disappears into the norm with cuDNN's fused norm+quantise.
//  - nvfp4: an amax pass for the per-tensor FP32 scale, then one pass writing E2M1 values with
//    E4M3 scales per 16 elements; the column-wise copy goes through a 16x16 random Hadamard
//    transform and gradients are stochastically rounded inside the same cast kernel.
void add_quantize(std::vector<Op>& ops, const Shard& s, std::string name, double elements,
                  const std::string& module, QuantAfter after = QuantAfter::other, bool grouped = false) {
  const Precision p = s.precision;
  if (p == Precision::bf16) return;
  const double cast = elements * (kBf16Bytes + 2 * quantized_bytes(p));
  const double amax = elements * kBf16Bytes;
  switch (p) {
    case Precision::fp8:
    case Precision::nvfp4: ops.push_back(memory(std::move(name), amax + cast, module, 2)); break;
    case Precision::fp8_blockwise: ops.push_back(memory(std::move(name), cast, module, 1)); break;
    case Precision::mxfp8: {
      if (after == QuantAfter::norm && s.fused_quantization) return;
      const bool zero_filled_alone = !s.fused_swizzle && !(grouped && bulk_zeroed_scales(s));
      const int kernels = 1 + (zero_filled_alone ? 2 : 0);
      ops.push_back(memory(std::move(name), cast, module, kernels));
      break;
    }
    case Precision::bf16: break;
  }
}

// cuBLAS takes MXFP8 block scales in its own tiled layout, which a kernel of its own writes
// before the GEMM (the scale swizzle). Before TE 2.12 the GEMM swizzles both operands' scales, one
// kernel each (TE v2.9 gemm.cpp: swizzle_scaling_factors for A and for B); from TE 2.12 (PR 2486)
// activations and gradients are quantised with GEMM-ready scales and only the weight's are
// swizzled (TE v2.12 linear.py sets optimize_for_gemm on the input and gradient quantisers).
// A GroupedLinear swizzles each local expert's scales until the multi-tensor swizzle (TE PR
// 2019, MLM-G §2.1.3: `fused_swizzle`), then once per call for all of them. The swizzle is
// recomputed with its GEMM; its backward swizzles for the data- and weight-gradient GEMMs.
void add_gemm_scale_swizzles(Section& sec, const Shard& s) {
  if (s.precision != Precision::mxfp8) return;
  const int operands = s.gemm_swizzles_activations ? 2 : 1;
  std::vector<Op> ops;
  for (Op& op : sec.ops) {
    const bool grouped = op.kind == OpKind::grouped_gemm;
    if ((op.kind == OpKind::gemm || grouped) && op.low_precision) {
      const bool per_expert = grouped && s.per_expert_launches && !s.fused_swizzle;
      const double scaled_elements = ((s.gemm_swizzles_activations ? op.m * op.k : 0.0) + op.k * op.n) * op.groups;
      ops.push_back(memory(op.name + "_scale_swizzle", 2 * scaled_elements * kMxScaleBytesPerElement, op.module,
                           operands * (per_expert ? op.groups : 1)));
    }
    ops.push_back(std::move(op));
  }
  sec.ops = std::move(ops);
}

// RMSNorm over `elements`: read and write BF16 (the weight is negligible); the backward reads
// the input and the incoming gradient and writes the outgoing one.
Op rmsnorm(std::string name, double elements, std::string module) {
  Op op = memory(std::move(name), elements * 2 * kBf16Bytes, std::move(module));
  op.backward_bytes = elements * 3 * kBf16Bytes;
  return op;
}

// Residual add: read two BF16 tensors, write one. Its backward hands the same gradient to both
// branches: no kernel.
Op residual(std::string name, double elements) {
  Op op = memory(std::move(name), elements * 3 * kBf16Bytes, "residual");
  op.backward_bytes = 0;
  op.backward_kernels = 0;
  return op;
}

// SwiGLU: read gate and up (2F), write F; the backward reads gate, up and the gradient (3F) and
// writes the gate and up gradients (2F).
Op swiglu(std::string name, double tokens, double ffn, std::string module) {
  Op op = memory(std::move(name), tokens * 3 * ffn * kBf16Bytes, std::move(module));
  op.backward_bytes = tokens * 5 * ffn * kBf16Bytes;
  return op;
}

// Causal flash attention over this rank's heads, then the output projection and residual.
void attention_core_and_output(const ModelSpec& m, const Shard& s, int heads, int qk_dim, int v_dim,
                               std::vector<Op>& ops) {
  const double T = s.tokens();
  Op core;
  core.name = "core_attention";
  core.kind = OpKind::attention;
  core.attention_sequences = s.micro_batch;
  core.attention_seq_len = static_cast<double>(s.seq_len) / s.cp;
  core.attention_heads = heads;
  core.attention_qk_dim = qk_dim;
  core.attention_v_dim = v_dim;
  core.low_precision = s.fp8_attention;
  core.module = "core_attn";
  ops.push_back(core);
  add_quantize(ops, s, "quantize_attention_out", T * heads * v_dim, "core_attn");
  ops.push_back(gemm("attention_out_proj", T, static_cast<double>(heads) * v_dim, m.hidden, "attn_proj"));
  ops.push_back(residual("attention_residual", T / s.tp * m.hidden));
}

void mla_attention(const ModelSpec& m, const Shard& s, Section& sec) {
  const AttentionSpec& a = m.attention;
  const double T = s.tokens();
  const double h = m.hidden;
  const int heads = a.heads / s.tp;
  const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  auto& ops = sec.ops;
  ops.push_back(rmsnorm("input_norm", T / s.tp * h, "layernorm"));
  add_quantize(ops, s, "quantize_input", T * h, "layernorm", QuantAfter::norm);
  if (a.q_lora_rank > 0) {
    ops.push_back(gemm("mla_q_down", T, h, a.q_lora_rank, "mla_down_proj"));
    ops.push_back(rmsnorm("mla_q_norm", T * a.q_lora_rank, "mla_up_proj"));
    add_quantize(ops, s, "quantize_q_latent", T * a.q_lora_rank, "mla_up_proj", QuantAfter::norm);
    ops.push_back(gemm("mla_q_up", T, a.q_lora_rank, heads * qk, "mla_up_proj"));
  } else {
    ops.push_back(gemm("mla_q", T, h, heads * qk, "mla_up_proj"));
  }
  ops.push_back(gemm("mla_kv_down", T, h, a.kv_lora_rank + a.qk_rope_head_dim, "mla_down_proj"));
  ops.push_back(rmsnorm("mla_kv_norm", T * a.kv_lora_rank, "mla_up_proj"));
  add_quantize(ops, s, "quantize_kv_latent", T * a.kv_lora_rank, "mla_up_proj", QuantAfter::norm);
  ops.push_back(gemm("mla_kv_up", T, a.kv_lora_rank, heads * (a.qk_nope_head_dim + a.v_head_dim),
                     "mla_up_proj"));
  // RoPE on q and k and the concatenation of the nope/rope parts: read and write q and k.
  ops.push_back(memory("mla_rope_concat", T * heads * qk * 2 * 2 * kBf16Bytes, "mla_up_proj", 2));
  attention_core_and_output(m, s, heads, static_cast<int>(qk), a.v_head_dim, ops);
}

void gqa_attention(const ModelSpec& m, const Shard& s, Section& sec) {
  const AttentionSpec& a = m.attention;
  const double T = s.tokens();
  const double h = m.hidden;
  const int heads = a.heads / s.tp;
  const double kv_heads = std::max(1.0, static_cast<double>(a.kv_heads) / s.tp);
  auto& ops = sec.ops;
  ops.push_back(rmsnorm("input_norm", T / s.tp * h, "layernorm"));
  add_quantize(ops, s, "quantize_input", T * h, "layernorm", QuantAfter::norm);
  ops.push_back(gemm("qkv_proj", T, h, (heads + 2 * kv_heads) * a.head_dim, "qkv_proj"));
  ops.push_back(memory("rope", T * (heads + kv_heads) * a.head_dim * 2 * kBf16Bytes, "qkv_proj"));
  attention_core_and_output(m, s, heads, a.head_dim, a.head_dim, ops);
}

void swiglu_ffn(const std::string& prefix, double tokens, double hidden, double ffn, const Shard& s,
                const std::string& module, std::vector<Op>& ops) {
  add_quantize(ops, s, "quantize_" + prefix + "_in", tokens * hidden, module, QuantAfter::norm);
  ops.push_back(gemm(prefix + "_gate_up", tokens, hidden, 2 * ffn, module));
  ops.push_back(swiglu(prefix + "_swiglu", tokens, ffn, module == "mlp" ? "mlp" : "moe_act"));
  add_quantize(ops, s, "quantize_" + prefix + "_act", tokens * ffn, module);
  ops.push_back(gemm(prefix + "_down", tokens, ffn, hidden, module));
}

}  // namespace

double Op::forward_flop() const {
  switch (kind) {
    case OpKind::gemm: return 2 * m * k * n;
    case OpKind::grouped_gemm: return 2 * m * k * n * groups;
    case OpKind::attention:
      // Causal: half of the S x S score matrix for QK^T and for AV.
      return 2 * attention_sequences * attention_heads * attention_seq_len * attention_seq_len / 2 *
             (attention_qk_dim + attention_v_dim);
    case OpKind::memory: return 0;
  }
  return 0;
}

Shard shard_for(const Scenario& sc) {
  Shard s;
  s.tp = sc.layout.tp;
  s.ep = sc.layout.ep;
  s.etp = sc.layout.etp;
  s.cp = sc.layout.cp;
  s.micro_batch = sc.training.micro_batch;
  s.seq_len = sc.training.seq_len;
  s.precision = sc.training.precision;
  s.dispatcher = sc.recipe.dispatcher;
  s.fp8_dispatch = sc.recipe.fp8_dispatch && sc.training.precision != Precision::bf16;
  s.fused_permute = sc.recipe.fused_permute;
  s.fused_swizzle = sc.recipe.fused_swizzle;
  s.cross_entropy_fusion = sc.recipe.cross_entropy_fusion;
  s.router_fusion = sc.recipe.router_fusion;
  s.fused_quantization = sc.recipe.fused_quantization;
  // Transformer Engine's NVFP4 recipe leaves attention unquantised (fp8_dpa = False).
  s.fp8_attention = sc.recipe.fp8_attention && is_fp8_family(sc.training.precision);
  s.per_expert_launches = sc.stack.grouped_linear == "per_expert";
  s.gemm_swizzles_activations = sc.stack.mxfp8_gemm_swizzle == "operands";
  return s;
}

// The layer's ops as its modules issue them; layer_program adds the GEMMs' scale swizzles.
static LayerProgram layer_ops(const ModelSpec& m, const Shard& s, bool moe_layer) {
  LayerProgram p;
  p.moe = moe_layer;
  const double T = s.tokens();
  const double h = m.hidden;
  p.attention.name = "attention";
  if (m.attention.kind == "mla") mla_attention(m, s, p.attention);
  else gqa_attention(m, s, p.attention);
  if (s.tp > 1) {
    // Sequence parallelism: gather the normed input before the column-parallel GEMMs and
    // reduce-scatter after the row-parallel ones, once for attention and once for the FFN.
    p.comm.tp_gather_bytes = T * h * kBf16Bytes;
    p.comm.tp_scatter_bytes = T * h * kBf16Bytes;
  }

  if (!moe_layer) {
    p.dense_ffn.name = "dense_ffn";
    p.dense_ffn.ops.push_back(rmsnorm("pre_mlp_norm", T / s.tp * h, "layernorm"));
    swiglu_ffn("mlp", T, h, static_cast<double>(m.dense_ffn) / s.tp, s, "mlp", p.dense_ffn.ops);
    p.dense_ffn.ops.push_back(residual("mlp_residual", T / s.tp * h));
    return p;
  }

  const MoeSpec& e = m.moe;
  const double routed_tokens = T / s.tp;  // sequence-parallel tokens of this rank
  p.router.name = "router";
  p.router.ops.push_back(rmsnorm("pre_mlp_norm", routed_tokens * h, "layernorm"));
  Op router = gemm("router", routed_tokens, h, e.experts, "router", false);
  router.model_flops = false;
  router.te_module = false;  // Megatron's router computes its logits with torch's linear
  p.router.ops.push_back(router);
  // Sigmoid scores, group-limited top-k, normalisation, aux-loss statistics over FP32 scores.
  // MLM-G §2.1.4/§2.2.1: the router issued 72 kernels (forward and backward), 31 once fused, and
  // router plus dispatch preprocessing 17 with the flex (DeepEP/HybridEP) dispatcher; our
  // backward issues twice the forward's kernels, hence 24, 10 and 6 forward kernels.
  const double score_bytes = routed_tokens * e.experts * kFp32Bytes;
  const bool flex = s.dispatcher != "alltoall";
  const int router_kernels = !s.router_fusion ? 24 : flex ? 6 : 10;
  p.router.ops.push_back(memory(s.router_fusion ? "router_topk_fused" : "router_topk",
                                (s.router_fusion ? 2 : 6) * score_bytes, "router", router_kernels));
  if (!flex) {
    // Megatron's all-to-all dispatcher: token counts per expert and rank, the split sizes, and
    // the device-to-host copy the NCCL all-to-all needs (MLM-G §2).
    p.router.ops.push_back(memory("alltoall_preprocess", routed_tokens * e.experts * kFp32Bytes, "moe", 8));
  }
  const double permuted = routed_tokens * e.top_k * h;  // token-expert rows after permutation
  const double dispatch_elem_bytes =
      s.fp8_dispatch ? 1.0 + kMxScaleBytesPerElement : kBf16Bytes;
  // FP8 dispatch quantises each token once, before it is copied to its experts.
  if (s.fp8_dispatch) add_quantize(p.router.ops, s, "quantize_dispatch", routed_tokens * h, "moe");
  // Permutation reads each token once and writes one row per (token, expert), in one fused
  // kernel (--moe-permute-fusion, already in MLM-G's baseline, §1 item 4).
  const double token_bytes = routed_tokens * h * dispatch_elem_bytes;
  const double row_bytes = permuted * dispatch_elem_bytes;
  Op permute = memory("permute", token_bytes + row_bytes, "moe", 1);
  // MLM-G §2.1.1: the permute kernel before TE PR 1927 (`fused_permute` false) was "clearly
  // abnormal", PR 1927 gave "up to a 10x unit speedup"; an assumption, bounded by step 1's 7 %
  // end to end: the average kernel about 3x slower, 1/3 of the bandwidth (the unpermute too).
  const double permute_bandwidth_scale = s.fused_permute ? 1.0 : 1.0 / 3;
  permute.bandwidth_scale = permute_bandwidth_scale;
  p.router.ops.push_back(permute);
  p.comm.ep_tokens = routed_tokens;
  p.comm.ep_dispatch_token_bytes = h * dispatch_elem_bytes;
  p.comm.ep_combine_token_bytes = h * kBf16Bytes;

  // Local experts: E/ep experts, each receiving tokens * k * ep / E rows under balanced routing.
  p.experts.name = "experts";
  const int local_experts = e.experts / s.ep;
  const double rows_per_expert = routed_tokens * e.top_k * s.ep / e.experts;
  const double ffn = static_cast<double>(e.expert_ffn) / s.etp;
  const double rows = rows_per_expert * local_experts;
  // The NCCL all-to-all dispatcher sorts the received chunks by local expert, and back before
  // the combine ("one global and one local permute before and after EP communication").
  if (!flex) p.experts.ops.push_back(memory("sort_chunks", 2 * rows * h * dispatch_elem_bytes, "moe", 2));
  // Tokens dispatched in FP8 arrive quantised; BF16 ones are cast before the expert GEMM.
  // Transformer Engine's GroupedLinear before 2.13 quantises each local expert's rows and runs
  // each expert's GEMM as launches of their own (split_quantize, one cuBLAS call per GEMM on its
  // streams; TE1499); from 2.13/2.14 one grouped quantisation and one grouped GEMM serve them all.
  const int launches_per_group = s.per_expert_launches ? local_experts : 1;
  // After the per-expert launches, the group's one torch.zeros of its bulk scale buffer (between
  // the bulk allocation and the fused swizzle; add_quantize): row- and column-wise E8M0 scales.
  const auto per_expert = [&](std::size_t first, double quantized_elements) {
    for (std::size_t i = first; i < p.experts.ops.size(); ++i) {
      p.experts.ops[i].kernels *= launches_per_group;
      p.experts.ops[i].backward_kernels *= launches_per_group;
    }
    if (bulk_zeroed_scales(s) && quantized_elements > 0)
      p.experts.ops.push_back(memory("zero_scale_buffer", 2 * quantized_elements * kMxScaleBytesPerElement, "moe", 1));
  };
  std::size_t first_op = p.experts.ops.size();
  if (!s.fp8_dispatch) add_quantize(p.experts.ops, s, "quantize_expert_in", rows * h, "moe", QuantAfter::other, true);
  Op gate_up = gemm("expert_gate_up", rows_per_expert, h, 2 * ffn, "moe");
  gate_up.kind = OpKind::grouped_gemm;
  gate_up.groups = local_experts;
  p.experts.ops.push_back(gate_up);
  per_expert(first_op, s.fp8_dispatch ? 0.0 : rows * h);
  p.experts.ops.push_back(swiglu("expert_swiglu", rows, ffn, "moe_act"));
  first_op = p.experts.ops.size();
  add_quantize(p.experts.ops, s, "quantize_expert_act", rows * ffn, "moe_act", QuantAfter::other, true);
  Op down = gemm("expert_down", rows_per_expert, ffn, h, "moe");
  down.kind = OpKind::grouped_gemm;
  down.groups = local_experts;
  p.experts.ops.push_back(down);
  per_expert(first_op, rows * ffn);
  if (!flex) p.experts.ops.push_back(memory("unsort_chunks", 2 * rows * h * kBf16Bytes, "moe", 2));

  p.unpermute.name = "unpermute";
  // Unpermutation reads the (token, expert) rows and writes the probability-weighted sum per
  // token, fused as the permute is.
  const double combined_rows = permuted * kBf16Bytes;
  const double combined_tokens = routed_tokens * h * kBf16Bytes;
  Op unpermute = memory("unpermute", combined_rows + combined_tokens, "moe", 1);
  unpermute.bandwidth_scale = permute_bandwidth_scale;
  p.unpermute.ops.push_back(unpermute);
  p.unpermute.ops.push_back(residual("moe_residual", routed_tokens * h));

  if (e.shared_ffn > 0) {
    p.shared_experts.name = "shared_experts";
    swiglu_ffn("shared", T, h, static_cast<double>(e.shared_ffn) / s.tp, s, "shared_experts",
               p.shared_experts.ops);
  }
  return p;
}

LayerProgram layer_program(const ModelSpec& m, const Shard& s, bool moe_layer) {
  LayerProgram p = layer_ops(m, s, moe_layer);
  for (Section* sec : {&p.attention, &p.router, &p.experts, &p.unpermute, &p.shared_experts, &p.dense_ffn})
    add_gemm_scale_swizzles(*sec, s);
  return p;
}

Section embedding_section(const ModelSpec& m, const Shard& s) {
  Section sec{"embedding", {}};
  // Lookup: write the BF16 embeddings of this rank's tokens (vocab-parallel, then reduced).
  sec.ops.push_back(memory("embedding_lookup", s.tokens() * m.hidden * 2 * kBf16Bytes, "embedding"));
  return sec;
}

Section output_section(const ModelSpec& m, const Shard& s) {
  Section sec{"output", {}};
  const double T = s.tokens();
  sec.ops.push_back(rmsnorm("final_norm", T / s.tp * m.hidden, "layernorm"));
  // Megatron's output layer is a plain ColumnParallelLinear: it runs in BF16 even in FP8 recipes.
  Op logits_gemm = gemm("logits", T, m.hidden, static_cast<double>(m.vocab) / s.tp, "output", false);
  logits_gemm.te_module = false;  // Megatron's own ColumnParallelLinear (output_layer), not TE's
  sec.ops.push_back(logits_gemm);
  // Vocab-parallel cross-entropy over BF16 logits: unfused, PyTorch casts them to FP32 and
  // makes max, exp-sum and gather passes; fused (Megatron's cross_entropy_loss_fusion) reads
  // the BF16 logits twice in one kernel.
  const double logits = T * m.vocab / s.tp;
  sec.ops.push_back(s.cross_entropy_fusion
                        ? memory("cross_entropy_fused", logits * 2 * kBf16Bytes, "loss", 1)
                        : memory("cross_entropy", logits * (kBf16Bytes + 4 * kFp32Bytes), "loss", 5));
  return sec;
}

Section mtp_extra_section(const ModelSpec& m, const Shard& s) {
  Section sec{"mtp", {}};
  const double T = s.tokens();
  const double h = m.hidden;
  sec.ops.push_back(rmsnorm("mtp_enorm", T / s.tp * h, "mtp"));
  sec.ops.push_back(rmsnorm("mtp_hnorm", T / s.tp * h, "mtp"));
  add_quantize(sec.ops, s, "quantize_mtp_in", T * 2 * h, "mtp", QuantAfter::norm);
  sec.ops.push_back(gemm("mtp_eh_proj", T, 2 * h, h / s.tp, "mtp"));
  add_gemm_scale_swizzles(sec, s);
  sec.ops.push_back(embedding_section(m, s).ops.front());  // MTP embeds the shifted tokens
  return sec;
}

}  // namespace moesim::model
