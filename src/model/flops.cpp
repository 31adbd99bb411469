#include "moesim/model/flops.hpp"

#include "moesim/model/params.hpp"

namespace moesim::model {

double attention_projection_macs(const ModelSpec& m) {
  const double h = m.hidden;
  const AttentionSpec& a = m.attention;
  const double n = a.heads;
  if (a.kind == "mla") {
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double q_term = a.q_lora_rank > 0 ? a.q_lora_rank * (h + n * qk + 1) : h * n * qk;
    return q_term + a.kv_lora_rank * (h + n * (a.qk_nope_head_dim + a.v_head_dim) + 1) +
           h * a.qk_rope_head_dim + n * a.v_head_dim * h;
  }
  // GQA: q, k, v and output projections (Megatron's standard_self_attn_term without attention).
  const double q = static_cast<double>(a.head_dim) * a.heads;
  const double kv = static_cast<double>(a.head_dim) * a.kv_heads;
  return h * (q + 2 * kv) + q * h;
}

// Multiply-adds of causal core attention per token: QK^T and AV over half the S x S square.
static double core_attention_macs(const ModelSpec& m, int seq_len) {
  const AttentionSpec& a = m.attention;
  const double half_s = seq_len / 2.0;
  if (a.kind == "mla")
    return half_s * a.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim);
  return half_s * a.heads * 2.0 * a.head_dim;
}

FlopsPerToken model_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers) {
  // 6 = 2 FLOP per multiply-add x 3 passes (forward, data-gradient, weight-gradient).
  constexpr double kPasses = 6.0;
  const double h = m.hidden;
  int moe_layers = 0;
  for (int i = 0; i < m.layers; ++i) moe_layers += is_moe_layer(m, i) ? 1 : 0;
  const int dense_layers = m.layers - moe_layers;
  const bool mtp_is_moe = m.moe.experts > 0;
  const int attention_layers = m.layers + mtp_layers;

  FlopsPerToken f;
  f.attention_projections = kPasses * attention_layers * attention_projection_macs(m);
  f.core_attention = kPasses * attention_layers * core_attention_macs(m, seq_len);
  f.dense_ffn = kPasses * (dense_layers + (mtp_is_moe ? 0 : mtp_layers)) * h * 3.0 * m.dense_ffn;
  f.moe_ffn = kPasses * (moe_layers + (mtp_is_moe ? mtp_layers : 0)) * h * 3.0 *
              (static_cast<double>(m.moe.top_k) * m.moe.expert_ffn + m.moe.shared_ffn);
  f.mtp_extra = kPasses * mtp_layers * (2 * h * h + 3 * h);
  f.logits = kPasses * (1 + mtp_layers) * h * m.vocab;
  return f;
}

}  // namespace moesim::model
