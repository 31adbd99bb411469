#include "moesim/cost/section_cost.hpp"

#include <algorithm>

namespace moesim::cost {

ComputeCost& ComputeCost::operator+=(const ComputeCost& o) {
  // Max-plus composition: the GPU either is still busy with this segment when the next one's
  // kernels arrive, or waits for the CPU to issue them.
  pipelined_seconds = std::max(pipelined_seconds + o.gpu_seconds, host_seconds + o.pipelined_seconds);
  gpu_seconds += o.gpu_seconds;
  host_seconds += o.host_seconds;
  flop += o.flop;
  model_flop += o.model_flop;
  kernels += o.kernels;
  recompute_seconds += o.recompute_seconds;
  return *this;
}

bool graph_captured(const RecipeSpec& recipe, const std::string& section) {
  const std::string& scope = recipe.cuda_graphs;
  if (scope == "full_iteration") return true;
  if (scope == "none") return false;
  // Partial capture (attention, router, MoE preprocessing) leaves the expert GEMMs, whose
  // shapes depend on routing, outside the graph.
  const bool partial = section == "attention" || section == "router" || section == "embedding";
  if (scope == "partial") return partial;
  if (scope == "partial_shared_expert") return partial || section == "shared_experts";
  // Megatron's moe_router + moe_preprocess scopes without attn: the router, its preprocessing and
  // the shared expert that rides in the router's graph when it is not overlapped.
  if (scope == "router_shared_expert") return section == "router" || section == "shared_experts";
  return false;
}

double eager_host_per_kernel_s(const Scenario& s, const KernelCalibration& cal) {
  const double x86 = s.stack.host_overhead_per_kernel_s > 0 ? s.stack.host_overhead_per_kernel_s : cal.launch_eager_s;
  return x86 * s.system.host_op_time_ratio;
}

double graph_host_per_kernel_s(const Scenario& s, const KernelCalibration& cal) {
  return cal.launch_graph_s * s.system.host_op_time_ratio;
}

ComputeCost section_cost(const model::Section& section, model::Pass pass, const Scenario& s,
                         const KernelCalibration& cal, GradPart part) {
  ComputeCost c;
  const bool graphed = graph_captured(s.recipe, section.name);
  // Host CPU time per launch: replaying a graph, or the stack's eager launch path, on this
  // system's CPU.
  const double host_per_kernel = graphed ? graph_host_per_kernel_s(s, cal) : eager_host_per_kernel_s(s, cal);
  // A Transformer Engine module's own Python work per eager call (TE #2053: 62.6 us more than
  // torch's Linear per forward on GB200 before TE 2.12); a graph replays its kernels without it.
  const double te_module_host = graphed ? 0.0 : s.stack.te_module_host_s * s.system.host_op_time_ratio;
  // GPU idle between two dependent kernels even when the CPU is ahead: the launch latency, about
  // one graph-replay step for captured kernels and the stack's eager launch latency otherwise.
  const double eager_gap = s.stack.eager_launch_gap_s >= 0 ? s.stack.eager_launch_gap_s : cal.launch_eager_s;
  const double launch_gap = graphed ? cal.launch_graph_s : eager_gap;
  // `part`: the whole op, or for a GEMM's backward only its data- or weight-gradient GEMM.
  auto add = [&](const model::Op& op, model::Pass p, GradPart part, bool recompute) {
    const OpCost oc = op_cost(op, p, s.training.precision, s.system.gpu, cal);
    double op_seconds = oc.gpu_seconds;
    double fraction = 1.0;  // of the op's kernels and FLOPs
    if (part == GradPart::weight_only) op_seconds = oc.weight_gradient_seconds;
    if (part == GradPart::data_only) op_seconds = oc.gpu_seconds - oc.weight_gradient_seconds;
    if (part != GradPart::all) fraction = 0.5;  // one of the two equal-FLOP backward GEMMs
    if (oc.kernels == 0) return;  // nothing to launch (the backward of a residual add)
    // Programmatic dependent launch (MLM-G step 8, for the quantisation kernels) starts a
    // kernel's prologue under its predecessor's tail and hides its launch latency.
    const bool pdl = s.recipe.programmatic_dependent_launch && op.name.rfind("quantize", 0) == 0;
    const double gpu_gap = pdl ? 0.0 : launch_gap;
    const int kernels = std::max(1, static_cast<int>(oc.kernels * fraction + 0.5));
    const double seconds = op_seconds + kernels * gpu_gap;
    // The op's kernels, each issued by the CPU then run by the GPU, appended to the segment; a TE
    // module's call runs its Python before the first launch (a weight-gradient part is the
    // second half of a backward call already paid for).
    const double call_host = op.te_module && part != GradPart::weight_only ? te_module_host : 0.0;
    ComputeCost op_kernels;
    for (int i = 0; i < kernels; ++i) {
      ComputeCost one;
      one.gpu_seconds = seconds / kernels;
      one.host_seconds = host_per_kernel + (i == 0 ? call_host : 0.0);
      one.pipelined_seconds = one.host_seconds + one.gpu_seconds;
      op_kernels += one;
    }
    op_kernels.flop = oc.flop * fraction;
    op_kernels.model_flop = recompute ? 0 : oc.model_flop * fraction;
    op_kernels.kernels = kernels;
    op_kernels.recompute_seconds = recompute ? seconds : 0;
    c += op_kernels;
  };
  for (const model::Op& op : section.ops) {
    if (pass == model::Pass::forward) {
      add(op, model::Pass::forward, GradPart::all, false);
      continue;
    }
    const bool gemm = op.kind == model::OpKind::gemm || op.kind == model::OpKind::grouped_gemm;
    // Recomputed modules re-run their forward just before their backward.
    if (part != GradPart::weight_only && s.recipe.recomputes(op.module))
      add(op, model::Pass::forward, GradPart::all, true);
    if (gemm) add(op, model::Pass::backward, part, false);
    else if (part != GradPart::weight_only) add(op, model::Pass::backward, GradPart::all, false);
  }
  return c;
}

}  // namespace moesim::cost
