#include "moesim/model/flops.hpp"

#include <stdexcept>

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

static int moe_layer_count(const ModelSpec& m) {
  int moe_layers = 0;
  for (int i = 0; i < m.layers; ++i) moe_layers += is_moe_layer(m, i) ? 1 : 0;
  return moe_layers;
}

// QK^T and AV per token and layer over the whole S x S square (multiply-adds / S): heads x (qk + v).
static double attention_head_dims(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  if (a.kind == "mla") return static_cast<double>(a.heads) * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim);
  return a.heads * 2.0 * a.head_dim;
}

FlopsPerToken model_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers) {
  // 6 = 2 FLOP per multiply-add x 3 passes (forward, data-gradient, weight-gradient).
  constexpr double kPasses = 6.0;
  const double h = m.hidden;
  const int moe_layers = moe_layer_count(m);
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

namespace {

// TorchTitan: 6 N + 6 L heads (qk + v) S, N the parameters a token passes through: each layer's
// attention (its q/kv norms with it) and two RMSNorms, dense FFNs, per MoE layer the router gate,
// the shared experts and top_k of the routed ones, the output head and final norm; the input
// embedding excluded. MTP layers (mtp.py) add their block, three norms and eh_proj, no attention.
double torchtitan_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers) {
  const double h = m.hidden;
  const int moe_layers = moe_layer_count(m);
  const double moe_block = h * m.moe.experts + 3 * h * (m.moe.shared_ffn + static_cast<double>(m.moe.top_k) * m.moe.expert_ffn);
  const double layer = attention_projection_macs(m) + 2 * h;
  double n = m.layers * layer + (m.layers - moe_layers) * 3 * h * m.dense_ffn + moe_layers * moe_block +
             (m.tied_embeddings ? 0 : h * m.vocab) + h;
  const double mtp_ffn = m.moe.experts > 0 ? moe_block : 3 * h * m.dense_ffn;
  n += mtp_layers * (layer + mtp_ffn + 3 * h + 2 * h * h);
  return 6 * n + 6.0 * m.layers * attention_head_dims(m) * seq_len;
}

// MaxText: 3 x (forward GEMM FLOPs + causal attention), the attention projections as written (no
// norm terms), the router gate and the logits counted; MTP layers count as MoE layers with
// attention, without their projection or logits.
double maxtext_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers) {
  const double h = m.hidden;
  const int moe_layers = moe_layer_count(m);
  const AttentionSpec& a = m.attention;
  double projections = attention_projection_macs(m);
  if (a.kind == "mla") projections -= (a.q_lora_rank > 0 ? a.q_lora_rank : 0) + a.kv_lora_rank;  // Megatron's norm "+1"
  const auto ffn = [h](double f) { return 6 * h * f; };  // SwiGLU: gate, up and down, 2 FLOP per multiply-add
  const double moe_layer = 2 * h * m.moe.experts + ffn(m.moe.shared_ffn) + m.moe.top_k * ffn(m.moe.expert_ffn);
  const double mtp_ffn = m.moe.experts > 0 ? moe_layer : ffn(m.dense_ffn);
  const double weights = (m.layers - moe_layers) * ffn(m.dense_ffn) + moe_layers * moe_layer +
                         (m.layers + mtp_layers) * 2 * projections + 2 * h * m.vocab + mtp_layers * mtp_ffn;
  const double causal_attention = 2.0 * seq_len * attention_head_dims(m) / 2;
  return 3 * weights + 3 * causal_attention * (m.layers + mtp_layers);
}

}  // namespace

const std::vector<std::string>& flops_formula_names() {
  static const std::vector<std::string> names = {"megatron", "torchtitan", "maxtext"};
  return names;
}

double framework_flops_per_token(const ModelSpec& m, int seq_len, int mtp_layers, const std::string& formula) {
  if (formula == "megatron") return model_flops_per_token(m, seq_len, mtp_layers).total();
  if (formula == "torchtitan") return torchtitan_flops_per_token(m, seq_len, mtp_layers);
  if (formula == "maxtext") return maxtext_flops_per_token(m, seq_len, mtp_layers);
  throw std::invalid_argument("unknown FLOP formula \"" + formula + "\" (megatron, torchtitan, maxtext)");
}

}  // namespace moesim::model
