#pragma once
// Parameter counts from the architecture: per layer kind, and totals (all experts) vs active
// (top-k routed + shared experts per token).
#include "moesim/config/specs.hpp"

namespace moesim::model {

struct LayerParams {
  double attention = 0;      // projections + their norms
  double dense_ffn = 0;      // 0 on MoE layers
  double router = 0;
  double expert_each = 0;    // one routed expert
  double shared_experts = 0;
  double norms = 0;          // pre-attention and pre-FFN RMSNorm
};

struct ParamCounts {
  double embedding = 0;      // input embedding
  double output_head = 0;    // 0 when tied
  double attention = 0;      // all main layers
  double dense_ffn = 0;
  double moe_total = 0;      // routers + all routed experts + shared experts
  double moe_active = 0;     // routers + top-k routed + shared experts
  double norms = 0;
  double mtp = 0;            // MTP modules (excluding the embedding and head they share)
  double total() const;      // without MTP
  double active() const;     // without MTP
};

LayerParams layer_params(const ModelSpec& m, bool moe_layer);
ParamCounts param_counts(const ModelSpec& m, int mtp_layers);
// True when layer `index` (0-based, main layers) has a MoE FFN.
bool is_moe_layer(const ModelSpec& m, int index);
// MTP module extra parameters: eh_proj (2h x h) and its norms.
double mtp_extra_params(const ModelSpec& m);

}  // namespace moesim::model
