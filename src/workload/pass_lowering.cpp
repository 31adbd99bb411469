#include "pass_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "moesim/model/params.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/plan/saved_tensors.hpp"

namespace moesim::workload {

using platform::CollectiveKind;

PassLowering::PassLowering(const Scenario& s, const plan::Layout& l, const cost::KernelCalibration& cal)
    : s_(s), l_(l), cal_(cal), shard_(model::shard_for(s)) {
  moe_ = model::layer_program(s.model, shard_, true);
  dense_ = model::layer_program(s.model, shard_, false);
  embedding_ = model::embedding_section(s.model, shard_);
  output_ = model::output_section(s.model, shard_);
  mtp_extra_ = model::mtp_extra_section(s.model, shard_);
  moe_offload_bytes_ = plan::offloaded_activation_bytes(s, true);
  dense_offload_bytes_ = plan::offloaded_activation_bytes(s, false);
}

void PassLowering::compute(std::vector<PassItem>& out, const model::Section& sec, bool forward,
                           const std::string& label, cost::GradPart part, bool beside) const {
  if (sec.ops.empty()) return;
  const model::Pass pass = forward ? model::Pass::forward : model::Pass::backward;
  cost::ComputeCost c = cost::section_cost(sec, pass, s_, cal_, part);
  // Consecutive compute joins the previous run: one segment between two communication points.
  if (!beside && !out.empty() && !out.back().is_comm && !out.back().beside_previous_comm && !out.back().closed) {
    out.back().cost += c;
    return;
  }
  PassItem item;
  item.cost = c;
  item.label = label;
  item.beside_previous_comm = beside;
  out.push_back(std::move(item));
}

void PassLowering::experts(std::vector<PassItem>& out, const model::Section& sec, bool forward, int layer,
                           const std::string& label, cost::GradPart part, bool beside) const {
  if (sec.ops.empty()) return;
  const model::Pass pass = forward ? model::Pass::forward : model::Pass::backward;
  PassItem item;
  item.cost = cost::section_cost(sec, pass, s_, cal_, part);
  item.label = label;
  item.beside_previous_comm = beside;
  item.layer = layer;
  item.routed = true;
  out.push_back(std::move(item));
}

void PassLowering::comm(std::vector<PassItem>& out, CollectiveKind kind, GroupRole group,
                        Activity activity, double bytes, const std::string& label, int layer) const {
  if (bytes <= 0) return;
  PassItem item;
  item.is_comm = true;
  item.collective = kind;
  item.group = group;
  item.activity = activity;
  item.bytes = bytes;
  item.label = label;
  item.layer = layer;
  out.push_back(std::move(item));
}

void PassLowering::ep_exchange(std::vector<PassItem>& out, const model::LayerProgram& p, Activity activity,
                               double token_bytes, bool combine_kernel, const std::string& label,
                               int layer) const {
  if (p.comm.ep_tokens <= 0 || l_.ep <= 1) return;
  PassItem item;
  item.is_comm = true;
  item.collective = CollectiveKind::all_to_all;
  item.group = GroupRole::ep;
  item.activity = activity;
  item.ep_tokens = p.comm.ep_tokens;
  item.ep_token_bytes = token_bytes;
  item.ep_combine_kernel = combine_kernel;
  item.label = label;
  item.layer = layer;
  out.push_back(std::move(item));
}

void PassLowering::layer_forward(int layer, bool moe, std::vector<PassItem>& out) const {
  const model::LayerProgram& p = moe ? moe_ : dense_;
  const std::string name = fmt::format("layer {}", layer);
  const bool tp = l_.tp > 1;
  if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " attention all-gather");
  compute(out, p.attention, true, name + " attention");
  if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " attention reduce-scatter");
  if (!moe) {
    if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " mlp all-gather");
    compute(out, p.dense_ffn, true, name + " mlp");
    if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " mlp reduce-scatter");
    return;
  }
  compute(out, p.router, true, name + " router");
  ep_exchange(out, p, Activity::ep_dispatch, p.comm.ep_dispatch_token_bytes, false, name + " dispatch", layer);
  experts(out, p.experts, true, layer, name + " experts");
  ep_exchange(out, p, Activity::ep_combine, p.comm.ep_combine_token_bytes, true, name + " combine", layer);
  compute(out, p.unpermute, true, name + " unpermute");
  compute(out, p.shared_experts, true, name + " shared experts");
}

void PassLowering::layer_backward(int layer, bool moe, cost::GradPart part, std::vector<PassItem>& out) const {
  const model::LayerProgram& p = moe ? moe_ : dense_;
  const std::string name = fmt::format("layer {}", layer);
  const std::string what = part == cost::GradPart::data_only ? " input-grad" : " backward";
  const bool tp = l_.tp > 1;
  if (!moe) {
    if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " mlp grad all-gather");
    compute(out, p.dense_ffn, false, name + " mlp" + what, part);
    if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " mlp grad reduce-scatter");
  } else {
    if (s_.recipe.recomputes("moe")) {
      // A checkpointed MoE layer (recompute "moe", or "full": the whole block) re-runs its forward
      // before its backward, and with it the forward's dispatch and combine (Megatron's and
      // TorchTitan's checkpoint wrappers replay the module, communication included); the
      // recomputed kernels are in the backward's compute below.
      ep_exchange(out, p, Activity::ep_dispatch, p.comm.ep_dispatch_token_bytes, false, name + " recompute dispatch", layer);
      ep_exchange(out, p, Activity::ep_combine, p.comm.ep_combine_token_bytes, true, name + " recompute combine", layer);
    }
    compute(out, p.shared_experts, false, name + " shared experts" + what, part);
    compute(out, p.unpermute, false, name + " unpermute" + what, part);
    // Gradients travel the combine's path backwards (the dispatch kernel), then the dispatch's
    // (the combine kernel); both in BF16.
    ep_exchange(out, p, Activity::ep_combine, p.comm.ep_combine_token_bytes, false, name + " combine backward", layer);
    if (s_.recipe.delay_wgrad && part == cost::GradPart::all) {
      // Megatron's delay_wgrad_compute: the expert weight gradients run while the dispatch's
      // backward all-to-all is in flight.
      experts(out, p.experts, false, layer, name + " experts dgrad", cost::GradPart::data_only);
      ep_exchange(out, p, Activity::ep_dispatch, p.comm.ep_combine_token_bytes, true, name + " dispatch backward", layer);
      experts(out, p.experts, false, layer, name + " experts wgrad", cost::GradPart::weight_only, true);
    } else {
      experts(out, p.experts, false, layer, name + " experts" + what, part);
      ep_exchange(out, p, Activity::ep_dispatch, p.comm.ep_combine_token_bytes, true, name + " dispatch backward", layer);
    }
    compute(out, p.router, false, name + " router" + what, part);
  }
  if (tp) comm(out, CollectiveKind::all_gather, GroupRole::tp, Activity::tp_comm, p.comm.tp_gather_bytes, name + " attention grad all-gather");
  compute(out, p.attention, false, name + " attention" + what, part);
  if (tp) comm(out, CollectiveKind::reduce_scatter, GroupRole::tp, Activity::tp_comm, p.comm.tp_scatter_bytes, name + " attention grad reduce-scatter");
}

// The weight-gradient GEMMs of one layer: no communication (each rank's experts and TP shards
// own their weights).
void PassLowering::layer_weight_grad(bool moe, std::vector<PassItem>& out) const {
  const model::LayerProgram& p = moe ? moe_ : dense_;
  for (const model::Section* sec : {&p.dense_ffn, &p.shared_experts, &p.unpermute, &p.experts, &p.router, &p.attention})
    compute(out, *sec, false, "weight gradients", cost::GradPart::weight_only);
}

void PassLowering::mtp_forward(std::vector<PassItem>& out) const {
  compute(out, mtp_extra_, true, "mtp projection");
  layer_forward(s_.model.layers, s_.model.moe.experts > 0, out);
  compute(out, output_, true, "mtp logits and loss");
}

void PassLowering::mtp_backward(cost::GradPart part, std::vector<PassItem>& out) const {
  compute(out, output_, false, "mtp logits backward", part);
  layer_backward(s_.model.layers, s_.model.moe.experts > 0, part, out);
  compute(out, mtp_extra_, false, "mtp projection backward", part);
}

// The per-block work beside one pass (PassItem::BlockTask): tags each item with its block and
// places the block's tasks. Per-block sharding: forward, blocks 0 and 1 gathered at the start and
// block b + 1 when block b starts (one ahead); backward, in reverse, gathered again the same way
// when resharded after the forward, and each block's gradients reduced once its backward is
// issued. Activation offloading: each block's offloaded activations copied to host memory once
// its forward is issued, and back the same way as the gathers in the backward. Without either it
// does nothing.
class PassLowering::Blocks {
 public:
  Blocks(const PassLowering& low, std::vector<PassItem>& out, int pp_rank, int chunk, bool forward)
      : low_(low), out_(out), forward_(forward) {
    const plan::VirtualStage& v = low.l_.stage(pp_rank, chunk);
    if (low.l_.fsdp) shards_ = plan::sharded_blocks(low.s_, low.l_, pp_rank, chunk);
    if (low.moe_offload_bytes_ > 0 || low.dense_offload_bytes_ > 0) {
      const auto layer_bytes = [&](bool moe) { return moe ? low.moe_offload_bytes_ : low.dense_offload_bytes_; };
      // One block per layer (at least one), MTP layers with the last, as sharded_blocks has them.
      offload_bytes_.assign(static_cast<std::size_t>(std::max(1, v.layers)), 0.0);
      for (int i = 0; i < v.layers; ++i)
        offload_bytes_[static_cast<std::size_t>(i)] = layer_bytes(model::is_moe_layer(low.s_.model, v.first_layer + i));
      offload_bytes_.back() += v.mtp_layers * layer_bytes(low.s_.model.moe.experts > 0);
    }
    n_ = static_cast<int>(std::max(shards_.size(), offload_bytes_.size()));
  }
  ~Blocks() { close(); }
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;

  // Items from here on belong to block b (blocks are entered in the pass's order).
  void enter(int b) {
    if (n_ == 0 || b == current_) return;
    close();
    const int ahead = b + (forward_ ? 1 : -1);
    const bool first = current_ < 0;
    // What a block needs before it runs, asked for one block ahead.
    const auto needs = [&](auto&& add) {
      if (first) add(b);
      if (ahead >= 0 && ahead < n_) add(ahead);
    };
    if (!shards_.empty() && (forward_ || low_.l_.reshard_after_forward))
      needs([&](int k) { collectives(k, PassItem::BlockTask::gather); });
    if (!forward_ && !offload_bytes_.empty()) needs([&](int k) { copy(k, PassItem::BlockTask::reload); });
    current_ = b;
    from_ = out_.size();
  }
  int last() const { return n_ - 1; }

 private:
  void close() {
    if (current_ < 0 || out_.size() == from_) return;
    for (std::size_t i = from_; i < out_.size(); ++i) out_[i].block = current_;
    out_.back().closed = true;
    if (!forward_ && !shards_.empty()) collectives(current_, PassItem::BlockTask::reduce);
    if (forward_ && !offload_bytes_.empty()) copy(current_, PassItem::BlockTask::offload);
    from_ = out_.size();
  }
  // The block's parameter all-gathers (or gradient reduce-scatters): dense over dp x cp in the
  // parameters' (gradients') type, routed experts over edp. Under HSDP over the shard groups,
  // each reduce-scatter followed by an all-reduce of the shard over its replicas.
  void collectives(int b, PassItem::BlockTask what) {
    const plan::ParamShard& p = shards_[static_cast<std::size_t>(b)];
    const plan::Layout& l = low_.l_;
    const bool gather = what == PassItem::BlockTask::gather;
    const double bytes_per_param = gather ? param_gather_bytes_per_param(low_.s_) : grad_reduce_bytes_per_param(low_.s_);
    const auto kind = gather ? CollectiveKind::all_gather : CollectiveKind::reduce_scatter;
    const Activity activity = gather ? Activity::dp_param_gather : Activity::dp_grad_sync;
    const char* label = gather ? "parameter all-gather" : "gradient reduce-scatter";
    const bool hsdp = l.dp_replicate > 1;
    if (l.dense_shards() > 1 && p.dense_params > 0)
      push(b, what, kind, hsdp ? GroupRole::dp_shard : GroupRole::dp, activity, p.dense_params * bytes_per_param,
           fmt::format("dense {}", label));
    if (l.expert_shards() > 1 && p.expert_params > 0)
      push(b, what, kind, hsdp ? GroupRole::edp_shard : GroupRole::edp, activity, p.expert_params * bytes_per_param,
           fmt::format("expert {}", label));
    if (!hsdp || gather) return;
    // The shard's gradients averaged over the replicas (FSDP2's HSDP all-reduce).
    const auto replicas = [&](GroupRole group, double shard_params, const char* part) {
      push(b, what, CollectiveKind::all_reduce, group, Activity::dp_grad_sync, shard_params * bytes_per_param,
           fmt::format("{} gradient all-reduce over replicas", part));
    };
    if (p.dense_params > 0) replicas(GroupRole::dp_replicate, p.dense_params / l.dense_shards(), "dense");
    if (p.expert_params > 0) replicas(GroupRole::edp_replicate, p.expert_params / l.expert_shards(), "expert");
  }
  // The block's offloaded activations to host memory, or back (over the host link: no group).
  void copy(int b, PassItem::BlockTask what) {
    const double bytes = offload_bytes_[static_cast<std::size_t>(b)];
    push(b, what, CollectiveKind::send_recv, GroupRole::dp, Activity::host_copy, bytes,
         fmt::format("activations {} host memory", what == PassItem::BlockTask::offload ? "to" : "back from"));
  }
  // One of the block's tasks, a communication item of the pass tagged as the block's.
  void push(int b, PassItem::BlockTask what, CollectiveKind kind, GroupRole group, Activity activity, double bytes,
            const std::string& label) {
    const std::size_t before = out_.size();
    low_.comm(out_, kind, group, activity, bytes, fmt::format("block {} {}", b, label));
    if (out_.size() == before) return;  // nothing to move
    out_.back().block_task = what;
    out_.back().block = b;
  }

  const PassLowering& low_;
  std::vector<PassItem>& out_;
  bool forward_;
  std::vector<plan::ParamShard> shards_;  // per-block sharding: each block's parameters
  std::vector<double> offload_bytes_;     // activation offloading: each block's bytes
  int n_ = 0;                             // blocks of the chunk; 0 = no per-block work
  int current_ = -1;
  std::size_t from_ = 0;
};

std::vector<PassItem> PassLowering::lower(int pp_rank, int chunk, plan::Pass pass) const {
  const plan::VirtualStage& v = l_.stage(pp_rank, chunk);
  const bool moe_model = s_.model.moe.experts > 0;
  std::vector<PassItem> out;
  switch (pass) {
    case plan::Pass::forward: {
      Blocks blocks(*this, out, pp_rank, chunk, true);
      blocks.enter(0);
      if (v.embedding) compute(out, embedding_, true, "embedding");
      for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
        blocks.enter(i - v.first_layer);
        layer_forward(i, model::is_moe_layer(s_.model, i), out);
      }
      blocks.enter(blocks.last());
      for (int d = 0; d < v.mtp_layers; ++d) mtp_forward(out);
      if (v.output) compute(out, output_, true, "logits and loss");
      break;
    }
    case plan::Pass::backward:
    case plan::Pass::input_grad: {
      const cost::GradPart part = pass == plan::Pass::backward ? cost::GradPart::all : cost::GradPart::data_only;
      Blocks blocks(*this, out, pp_rank, chunk, false);
      blocks.enter(blocks.last());
      if (v.output) compute(out, output_, false, "logits backward", part);
      for (int d = 0; d < v.mtp_layers; ++d) mtp_backward(part, out);
      for (int i = v.first_layer + v.layers - 1; i >= v.first_layer; --i) {
        blocks.enter(i - v.first_layer);
        layer_backward(i, model::is_moe_layer(s_.model, i), part, out);
      }
      blocks.enter(0);
      if (v.embedding) compute(out, embedding_, false, "embedding backward", part);
      break;
    }
    case plan::Pass::weight_grad:
      // Everything joins one compute segment: W has no communication point.
      if (v.output) compute(out, output_, false, "weight gradients", cost::GradPart::weight_only);
      for (int d = 0; d < v.mtp_layers; ++d) {
        compute(out, output_, false, "weight gradients", cost::GradPart::weight_only);
        layer_weight_grad(moe_model, out);
        compute(out, mtp_extra_, false, "weight gradients", cost::GradPart::weight_only);
      }
      for (int i = v.first_layer + v.layers - 1; i >= v.first_layer; --i)
        layer_weight_grad(model::is_moe_layer(s_.model, i), out);
      if (v.embedding) compute(out, embedding_, false, "weight gradients", cost::GradPart::weight_only);
      break;
  }
  return out;
}

}  // namespace moesim::workload
