#include <algorithm>

#include "schema.hpp"

namespace moesim::config {

void describe_stack(Reader& r, StackSpec& s) {
  r.text(key("name", "display name, e.g. \"Megatron-Bridge 26.06\""), s.name);
  r.choice(key("dispatcher", "MoE token dispatcher: alltoall (NCCL), deepep, hybridep").optional(), s.dispatcher,
           {"alltoall", "deepep", "hybridep"});
  r.number(key("dispatcher_bw_efficiency", "achieved / link bandwidth of the dispatcher's transfers").above(0).at_most(1),
           s.dispatcher_bw_efficiency);
  r.number(key("combine_bw_efficiency", "achieved / link bandwidth of the combine (0: as the dispatch)")
               .optional().at_least(0).at_most(1),
           s.combine_bw_efficiency);
  r.boolean(key("fp8_dispatch", "tokens dispatched in FP8 (quantised once before the all-to-all)").optional(),
            s.fp8_dispatch);
  r.integer(key("dispatcher_sms", "SMs the dispatcher occupies while it runs (0: none modelled)").at_least(0),
            s.dispatcher_sms);
  r.boolean(key("ep_overlap", "EP all-to-all of one micro-batch overlapped with another's compute "
                              "(overlap_moe_expert_parallel_comm)").optional(),
            s.ep_overlap);
  r.boolean(key("delay_wgrad", "weight gradients deferred to hide dispatch/combine").optional(), s.delay_wgrad);
  r.choice(key("cuda_graphs", "what CUDA graphs capture").optional(), s.cuda_graphs,
           {"none", "partial", "partial_shared_expert", "full_iteration"});
  r.choices(key("recompute", "modules recomputed in the backward pass").optional(), s.recompute,
            {"mla_up_proj", "core_attn", "moe_act", "mlp", "layernorm", "moe", "shared_experts", "full"});
  r.boolean(key("fused_permute", "permutation fused with the scale allocation").optional(), s.fused_permute);
  r.boolean(key("cross_entropy_fusion", "cross-entropy fused into one kernel over BF16 logits "
                                        "(cross_entropy_loss_fusion)").optional(),
            s.cross_entropy_fusion);
  r.boolean(key("fused_swizzle", "MXFP8 scale swizzle fused into the quantisation kernel").optional(),
            s.fused_swizzle);
  r.boolean(key("router_fusion", "router top-k and softmax/sigmoid fused").optional(), s.router_fusion);
  r.boolean(key("fused_quantization", "quantisation fused into norm and activation kernels").optional(),
            s.fused_quantization);
  r.boolean(key("fp8_attention", "core attention in FP8").optional(), s.fp8_attention);
  r.boolean(key("fp8_param_gather", "parameters all-gathered in FP8").optional(), s.fp8_param_gather);
  r.boolean(key("programmatic_dependent_launch", "a kernel's launch overlaps its predecessor's tail").optional(),
            s.programmatic_dependent_launch);
  r.number(key("host_overhead_per_kernel_us", "host time per kernel launched eagerly (not graph-captured)")
               .in("us", 1e-6).at_least(0),
           s.host_overhead_per_kernel_s);
  r.number(key("graph_launch_per_kernel_us", "host time per kernel replayed from a CUDA graph").in("us", 1e-6).at_least(0),
           s.graph_launch_per_kernel_s);
  r.number(key("eager_launch_gap_us", "GPU idle between two eagerly launched dependent kernels (launch "
                                     "latency); -1: the calibration's eager launch time")
               .in("us", 1e-6)
               .optional()
               .at_least(-1),
           s.eager_launch_gap_s);
  r.boolean(key("overlap_grad_reduce", "data-parallel gradient reduce-scatter overlapped with the backward pass").optional(),
            s.overlap_grad_reduce);
  r.boolean(key("overlap_param_gather", "data-parallel parameter all-gather overlapped with the forward pass").optional(),
            s.overlap_param_gather);
  r.choice(key("adam_moment_dtype", "storage type of Adam's two moments").optional(), s.adam_moment_dtype,
           {"fp32", "bf16"});
  r.sources(sources_key(), s.sources);

  const bool full = std::find(s.recompute.begin(), s.recompute.end(), "full") != s.recompute.end();
  r.rule("recompute", !full || s.recompute.size() == 1, "\"full\" recomputes everything: list it alone");
}

}  // namespace moesim::config
