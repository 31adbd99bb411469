#pragma once
// What one transformer layer (or the embedding / output head / MTP module) executes for one
// micro-batch on one GPU, as operators with shapes, grouped into sections separated by the
// points where the layer communicates (TP gather/scatter, EP dispatch/combine).
//
// Shapes follow Megatron's sharding: TP splits attention heads and FFN columns (sequence
// parallel: the token dimension is gathered before and scattered after each TP region); EP
// places experts/ep on each rank, ETP splits an expert's FFN. Under balanced routing every
// expert receives tokens_per_rank * top_k * ep / experts tokens.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::model {

enum class OpKind {
  gemm,          // out[m, n] = a[m, k] * b[k, n]
  grouped_gemm,  // `groups` independent GEMMs of the same (m, k, n), one kernel
  attention,     // causal flash attention core
  memory,        // HBM-bound kernel: norms, activations, permutes, quantisation, residuals
};

enum class Pass { forward, backward };

struct Op {
  std::string name;
  OpKind kind = OpKind::memory;
  double m = 0, k = 0, n = 0;  // GEMM dimensions (per group for grouped GEMMs)
  int groups = 1;
  double attention_sequences = 0;  // attention: sequences in the micro-batch
  double attention_seq_len = 0;    // attention: queries per sequence
  int attention_heads = 0;         // attention: heads on this rank
  int attention_qk_dim = 0;
  int attention_v_dim = 0;
  double bytes = 0;                // memory kernels: HBM bytes read + written in the forward
  double backward_bytes = 0;       // memory kernels: the same in the backward (0: no backward work)
  double bandwidth_scale = 1.0;    // memory kernels: achieved bandwidth relative to a good kernel
  bool low_precision = true;       // GEMM runs in the run's precision (else BF16)
  bool model_flops = true;         // counted by Megatron's convention
  int kernels = 1;                 // kernel launches in the forward pass
  int backward_kernels = 2;        // memory kernels and attention: launches in the backward
  bool te_module = false;          // a Transformer Engine module's GEMM (its call costs host time)
  std::string module;              // recompute module it belongs to (mla_up_proj, moe_act, ...)

  double forward_flop() const;     // arithmetic FLOP of the forward pass
};

// Communication a layer needs, per GPU per micro-batch. The EP exchange is described by what
// it carries (tokens and the size of one token copy); how many copies cross which link is the
// dispatcher's mechanism (platform/ep_dispatch.hpp, with the routing of model/routing.hpp).
struct LayerComm {
  double tp_gather_bytes = 0;     // sequence-parallel all-gather of the layer input (full buffer)
  double tp_scatter_bytes = 0;    // reduce-scatter of the layer output (full buffer)
  double ep_tokens = 0;           // tokens this rank routes (sequence-parallel share)
  double ep_dispatch_token_bytes = 0;  // one token copy in the forward dispatch (FP8 + scales or BF16)
  double ep_combine_token_bytes = 0;   // one copy in the combine and in both backward exchanges (BF16)
};

struct Section {
  std::string name;  // "attention", "router", "experts", "shared_experts", "dense_ffn", ...
  std::vector<Op> ops;
};

// The sections of a layer in execution order. A MoE layer is:
//   attention | router (+permute) | [dispatch] | experts | [combine] | unpermute
// with shared_experts independent of dispatch/combine (it may run beside them).
struct LayerProgram {
  bool moe = false;
  Section attention;
  Section router;           // MoE: router, top-k, permute (before dispatch)
  Section experts;          // MoE: local experts' grouped GEMMs and activation
  Section unpermute;        // MoE: unpermute and weighted sum (after combine)
  Section shared_experts;   // MoE: shared expert(s)
  Section dense_ffn;        // dense layers
  LayerComm comm;
};

struct Shard {
  int tp = 1, ep = 1, etp = 1, cp = 1;
  int micro_batch = 1;      // sequences
  int seq_len = 4096;
  Precision precision = Precision::bf16;  // the run's GEMM precision and quantisation recipe
  std::string dispatcher = "alltoall";  // alltoall sends one copy per (token, expert) pair;
                                        // deepep / hybridep one per (token, destination rank)
  bool fp8_dispatch = false;            // dispatch payload in FP8 (+ scales)
  bool fused_permute = false;
  bool fused_swizzle = false;
  bool cross_entropy_fusion = false;
  bool router_fusion = false;
  bool fused_quantization = false;
  bool fp8_attention = false;
  bool per_expert_launches = false;     // the grouped GEMMs and their quantisations launch once per local expert
  bool gemm_swizzles_activations = false;  // MXFP8: the GEMM swizzles both operands' scales (TE < 2.12), not only the weight's
  double tokens() const { return static_cast<double>(micro_batch) * seq_len / cp; }
};

// The shard of one GPU under the scenario's layout and stack.
Shard shard_for(const Scenario& s);

LayerProgram layer_program(const ModelSpec& m, const Shard& s, bool moe_layer);
Section embedding_section(const ModelSpec& m, const Shard& s);
Section output_section(const ModelSpec& m, const Shard& s);  // final norm, logits, loss
Section mtp_extra_section(const ModelSpec& m, const Shard& s);  // MTP norms and eh_proj

}  // namespace moesim::model
