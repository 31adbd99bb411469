#pragma once
// The tensors one micro-batch leaves saved for the backward pass on one GPU, module by module,
// as Megatron-Core and Transformer Engine keep them: which tensor, at which precision, and which
// ones a recompute choice drops (docs/method.md, "Memory", cites the code for each).
#include <string>
#include <string_view>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::plan {

// What a saved tensor is, for the peak report.
enum class TensorKind {
  residual,          // residual stream: norm inputs, checkpointed layer and module inputs
  gemm_input,        // inputs kept for the weight gradients (BF16, or FP8 copies)
  mla_latent,        // MLA's compressed q and kv (the up-projections' inputs)
  attention_qkv,     // flash attention's q, k, v
  attention_output,  // attention output (also the output projection's input) and log-sum-exp
  ffn_activation,    // SwiGLU inputs (fc1 outputs) of experts, shared experts, dense MLP
  router,            // router scores and the routing probabilities
  logits,            // the loss's saved logits (or their gradient, computed in the forward)
};
std::string_view to_string(TensorKind k);
inline constexpr TensorKind kAllTensorKinds[] = {
    TensorKind::residual,         TensorKind::gemm_input,     TensorKind::mla_latent, TensorKind::attention_qkv,
    TensorKind::attention_output, TensorKind::ffn_activation, TensorKind::router,     TensorKind::logits};

struct SavedTensor {
  std::string name;
  TensorKind kind = TensorKind::residual;
  double elements = 0;
  double bytes_per_element = 0;
  double bytes() const { return elements * bytes_per_element; }
};

// One transformer layer (dense FFN or MoE) under the scenario's precision and recompute list.
std::vector<SavedTensor> layer_saved_tensors(const Scenario& s, bool moe_layer);
// What one micro-batch's layer keeps in host memory instead (recipe.offload), in bytes: copied
// out after the layer's forward and back before its backward.
double offloaded_activation_bytes(const Scenario& s, bool moe_layer);
// The MTP module's own tensors (its norms and eh_proj), besides its layer and output head.
std::vector<SavedTensor> mtp_saved_tensors(const Scenario& s);
// Final norm, output layer and cross-entropy.
std::vector<SavedTensor> output_saved_tensors(const Scenario& s);

double total_bytes(const std::vector<SavedTensor>& tensors);

}  // namespace moesim::plan
