#include "moesim/model/params.hpp"

#include "moesim/model/flops.hpp"

namespace moesim::model {

bool is_moe_layer(const ModelSpec& m, int index) {
  if (m.moe.experts == 0 || index < m.moe.first_dense_layers) return false;
  return (index - m.moe.first_dense_layers) % m.moe.moe_layer_freq == 0;
}

LayerParams layer_params(const ModelSpec& m, bool moe_layer) {
  const double h = m.hidden;
  LayerParams p;
  // Megatron's attention count already includes the latent norms (the "+1" terms).
  p.attention = attention_projection_macs(m);
  p.norms = 2 * h;
  if (moe_layer) {
    p.router = h * m.moe.experts;
    p.expert_each = 3 * h * m.moe.expert_ffn;            // SwiGLU: gate, up, down
    p.shared_experts = 3 * h * m.moe.shared_ffn;
  } else {
    p.dense_ffn = 3 * h * m.dense_ffn;
  }
  return p;
}

double mtp_extra_params(const ModelSpec& m) {
  const double h = m.hidden;
  return 2 * h * h + 3 * h;  // eh_proj (2h -> h) and three RMSNorms (enorm, hnorm, final)
}

ParamCounts param_counts(const ModelSpec& m, int mtp_layers) {
  ParamCounts c;
  const double h = m.hidden;
  c.embedding = static_cast<double>(m.vocab) * h;
  c.output_head = m.tied_embeddings ? 0 : c.embedding;
  auto add_layer = [&](bool moe, double& moe_total, double& moe_active) {
    LayerParams p = layer_params(m, moe);
    c.attention += p.attention;
    c.dense_ffn += p.dense_ffn;
    c.norms += p.norms;
    moe_total += p.router + p.expert_each * m.moe.experts + p.shared_experts;
    moe_active += p.router + p.expert_each * m.moe.top_k + p.shared_experts;
  };
  for (int i = 0; i < m.layers; ++i) add_layer(is_moe_layer(m, i), c.moe_total, c.moe_active);
  c.norms += h;  // final norm
  // MTP: one transformer layer (MoE when the model has experts) plus its projection and norms.
  for (int d = 0; d < mtp_layers; ++d) {
    LayerParams p = layer_params(m, m.moe.experts > 0);
    c.mtp += p.attention + p.norms + p.dense_ffn + p.router + p.expert_each * m.moe.experts +
             p.shared_experts + mtp_extra_params(m);
  }
  return c;
}

double ParamCounts::total() const {
  return embedding + output_head + attention + dense_ffn + moe_total + norms;
}
double ParamCounts::active() const {
  return embedding + output_head + attention + dense_ffn + moe_active + norms;
}

}  // namespace moesim::model
