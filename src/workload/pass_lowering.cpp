#include "pass_lowering.hpp"

#include <fmt/format.h>

#include "moesim/model/params.hpp"

namespace moesim::workload {

using platform::CollectiveKind;

PassLowering::PassLowering(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal)
    : s_(s), l_(l), cal_(cal), shard_(model::shard_for(s)) {
  moe_ = model::layer_program(s.model, shard_, true);
  dense_ = model::layer_program(s.model, shard_, false);
  embedding_ = model::embedding_section(s.model, shard_);
  output_ = model::output_section(s.model, shard_);
  mtp_extra_ = model::mtp_extra_section(s.model, shard_);
}

void PassLowering::compute(std::vector<PassItem>& out, const model::Section& sec, Phase phase,
                           const std::string& label, cost::GradPart part, bool beside) const {
  if (sec.ops.empty()) return;
  const model::Pass pass = phase == Phase::forward ? model::Pass::forward : model::Pass::backward;
  cost::ComputeCost c = cost::section_cost(sec, pass, s_, cal_, part);
  // Consecutive compute joins the previous run: one segment between two communication points.
  if (!beside && !out.empty() && !out.back().is_comm && !out.back().beside_previous_comm) {
    out.back().cost += c;
    return;
  }
  PassItem item;
  item.cost = c;
  item.label = label;
  item.beside_previous_comm = beside;
  out.push_back(std::move(item));
}

void PassLowering::comm(std::vector<PassItem>& out, CollectiveKind kind, GroupRole group,
                        Activity activity, double bytes, const std::string& label) const {
  if (bytes <= 0) return;
  if (group == GroupRole::ep) {
    // The dispatcher reaches only part of the link bandwidth: it holds the port that much longer.
    // The backward of the combine runs the dispatch kernel and vice versa.
    const bool dispatch_kernel = (activity == Activity::ep_dispatch) == (label.find("backward") == std::string::npos);
    const double combine = s_.stack.combine_bw_efficiency > 0 ? s_.stack.combine_bw_efficiency
                                                              : s_.stack.dispatcher_bw_efficiency;
    bytes /= dispatch_kernel ? s_.stack.dispatcher_bw_efficiency : combine;
  }
  PassItem item;
  item.is_comm = true;
  item.collective = kind;
  item.group = group;
  item.activity = activity;
  item.bytes = bytes;
  item.label = label;
  out.push_back(std::move(item));
}

void PassLowering::layer_forward(int layer, bool moe, std::vector<PassItem>& out) const {
  const model::LayerProgram& p = moe ? moe_ : dense_;
  const std::string name = fmt::format("layer {}", layer);
  const bool tp = l_.tp > 1;
  if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " attention all-gather");
  compute(out, p.attention, Phase::forward, name + " attention");
  if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " attention reduce-scatter");
  if (!moe) {
    if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " mlp all-gather");
    compute(out, p.dense_ffn, Phase::forward, name + " mlp");
    if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " mlp reduce-scatter");
    return;
  }
  compute(out, p.router, Phase::forward, name + " router");
  comm(out, CollectiveKind::all_to_all, GroupRole::ep, Activity::ep_dispatch, p.comm.ep_dispatch_bytes_per_peer, name + " dispatch");
  compute(out, p.experts, Phase::forward, name + " experts");
  comm(out, CollectiveKind::all_to_all, GroupRole::ep, Activity::ep_combine, p.comm.ep_combine_bytes_per_peer, name + " combine");
  compute(out, p.unpermute, Phase::forward, name + " unpermute");
  compute(out, p.shared_experts, Phase::forward, name + " shared experts");
}

void PassLowering::layer_backward(int layer, bool moe, std::vector<PassItem>& out) const {
  const model::LayerProgram& p = moe ? moe_ : dense_;
  const std::string name = fmt::format("layer {}", layer);
  const bool tp = l_.tp > 1;
  if (!moe) {
    if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " mlp grad all-gather");
    compute(out, p.dense_ffn, Phase::backward, name + " mlp backward");
    if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " mlp grad reduce-scatter");
  } else {
    compute(out, p.shared_experts, Phase::backward, name + " shared experts backward");
    compute(out, p.unpermute, Phase::backward, name + " unpermute backward");
    // Gradients travel the combine's path backwards, then the dispatch's; both in BF16.
    comm(out, CollectiveKind::all_to_all, GroupRole::ep, Activity::ep_combine, p.comm.ep_combine_bytes_per_peer, name + " combine backward");
    if (s_.recipe.delay_wgrad) {
      // Megatron's delay_wgrad_compute: the expert weight gradients run while the dispatch's
      // backward all-to-all is in flight.
      compute(out, p.experts, Phase::backward, name + " experts dgrad", cost::GradPart::data_only);
      comm(out, CollectiveKind::all_to_all, GroupRole::ep, Activity::ep_dispatch, p.comm.ep_combine_bytes_per_peer, name + " dispatch backward");
      compute(out, p.experts, Phase::backward, name + " experts wgrad", cost::GradPart::weight_only, true);
    } else {
      compute(out, p.experts, Phase::backward, name + " experts backward");
      comm(out, CollectiveKind::all_to_all, GroupRole::ep, Activity::ep_dispatch, p.comm.ep_combine_bytes_per_peer, name + " dispatch backward");
    }
    compute(out, p.router, Phase::backward, name + " router backward");
  }
  if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " attention grad all-gather");
  compute(out, p.attention, Phase::backward, name + " attention backward");
  if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " attention grad reduce-scatter");
}

void PassLowering::mtp_forward(std::vector<PassItem>& out) const {
  compute(out, mtp_extra_, Phase::forward, "mtp projection");
  layer_forward(s_.model.layers, s_.model.moe.experts > 0, out);
  compute(out, output_, Phase::forward, "mtp logits and loss");
}

void PassLowering::mtp_backward(std::vector<PassItem>& out) const {
  compute(out, output_, Phase::backward, "mtp logits backward");
  layer_backward(s_.model.layers, s_.model.moe.experts > 0, out);
  compute(out, mtp_extra_, Phase::backward, "mtp projection backward");
}

std::vector<PassItem> PassLowering::lower(int pp_rank, int chunk, Phase phase) const {
  const plan::VirtualStage& v = l_.stage(pp_rank, chunk);
  std::vector<PassItem> out;
  if (phase == Phase::forward) {
    if (v.embedding) compute(out, embedding_, phase, "embedding");
    for (int i = v.first_layer; i < v.first_layer + v.layers; ++i)
      layer_forward(i, model::is_moe_layer(s_.model, i), out);
    for (int d = 0; d < v.mtp_layers; ++d) mtp_forward(out);
    if (v.output) compute(out, output_, phase, "logits and loss");
  } else {
    if (v.output) compute(out, output_, phase, "logits backward");
    for (int d = 0; d < v.mtp_layers; ++d) mtp_backward(out);
    for (int i = v.first_layer + v.layers - 1; i >= v.first_layer; --i)
      layer_backward(i, model::is_moe_layer(s_.model, i), out);
    if (v.embedding) compute(out, embedding_, phase, "embedding backward");
  }
  return out;
}

}  // namespace moesim::workload
