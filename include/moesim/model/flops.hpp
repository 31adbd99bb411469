#pragma once
// Model FLOPs in Megatron-LM's convention (training.py num_floating_point_operations; see
// MLM-F in docs/sources.md): every GEMM counts forward + data-gradient + weight-gradient
// (factor 3) at 2 FLOP per multiply-add; causal core attention counts half the S x S square;
// MTP layers count when the run has them; recompute, router, norms and element-wise work count
// nothing. This is what published "model TFLOP/s per GPU" figures divide by.
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::model {

struct FlopsPerToken {
  double attention_projections = 0;  // MLA or GQA projections, main + MTP layers
  double core_attention = 0;         // QK^T and AV, causal
  double dense_ffn = 0;              // layers with a dense FFN
  double moe_ffn = 0;                // routed top-k + shared experts
  double mtp_extra = 0;              // MTP eh_proj and norms
  double logits = 0;                 // output head, main + MTP heads
  double total() const {
    return attention_projections + core_attention + dense_ffn + moe_ffn + mtp_extra + logits;
  }
};

FlopsPerToken model_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers);

// Multiply-adds of one layer's attention projections per token, norms' "+1" terms included
// as Megatron counts them (DeepSeek-V3: 187,107,328).
double attention_projection_macs(const ModelSpec& m);

// The formulas frameworks log their TFLOP/s by (a stack's flops_formula), per token of a
// sequence of seq_len: "megatron" (above, total()), "torchtitan" (6 x the active parameters,
// lm_head, router and norms included, input embedding not, plus 6 x layers x heads x (qk + v) x
// seq_len: attention not halved for causality, MTP layers' parameters only; torchtitan
// models/utils.py get_moe_model_nparams_and_flops), "maxtext" (3 x the forward GEMMs as written,
// router and logits included, norms not, plus causal attention; MTP layers as MoE layers;
// maxtext_utils.py calculate_tflops_training_per_device, DEEPSEEK branch). Sources: TT-F and MT-F
// in docs/sources.md.
double framework_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers, const std::string& formula);
const std::vector<std::string>& flops_formula_names();

}  // namespace moesim::model
