// A software stack (a release: what it supports and how fast its parts are) and a recipe (what
// one run turns on). A stack file carries its release's default recipe; a scenario's "recipe"
// overrides it key by key.
#include <fmt/format.h>

#include <algorithm>

#include "moesim/config/choices.hpp"
#include "moesim/model/flops.hpp"
#include "schema.hpp"
#include "text.hpp"

namespace moesim::config {

namespace {

const std::vector<std::string> kDispatchers = {"alltoall", "deepep", "hybridep"};
// Megatron's capture scopes in moesim's words: partial = attn + moe_router + moe_preprocess with the
// shared expert overlapped (outside the graph); partial_shared_expert = the same with the shared
// expert captured in the router's graph; router_shared_expert = moe_router + moe_preprocess alone.
const std::vector<std::string> kGraphScopes = {"none", "partial", "partial_shared_expert", "router_shared_expert",
                                               "full_iteration"};

std::vector<std::string> switch_names() {
  std::vector<std::string> names;
  for (const auto& [name, on] : RecipeSpec{}.switches()) names.push_back(name);
  return names;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

void describe_support(Reader& r, StackSupport& s) {
  r.choices(key("dispatchers", "MoE token dispatchers the release implements"), s.dispatchers, kDispatchers);
  r.choices(key("cuda_graphs", "CUDA graph capture scopes the release offers"), s.cuda_graphs, kGraphScopes);
  r.choices(key("switches", "recipe switches the release has (each a key of \"recipe\" that can be true)")
                .optional(),
            s.switches, switch_names());
  r.choices(key("sharding", "data-parallel sharding strategies the release offers (layout.sharding): optimizer "
                            "(distributed optimizer, ZeRO-1), fsdp (per-block ZeRO-3); absent = optimizer")
                .optional(),
            s.sharding, {"optimizer", "fsdp"});
  r.choices(key("offload", "modules whose saved activations the release can keep in host memory (recipe.offload); "
                           "absent = none").optional(),
            s.offload, {"moe_act"});
}

void describe_kernel(Reader& r, EpKernelSpec& k) {
  r.number(efficiency_key("nvlink_efficiency", "fraction of the NVLink port the kernel reaches when the link binds"),
           k.nvlink_efficiency);
  r.number(key("sm_gbytes_per_s", "NVLink bytes one of the kernel's SMs moves per second when its SMs bind, "
                                  "where no per-copy law applies (across NVLink domains, or sm_copy_ns_per_peer 0: "
                                  "inside one domain the per-copy law is the SM limit instead); 0 = they never bind")
               .in("GB/s", 1e9)
               .at_least(0)
               .at_most(1e4),
           k.sm_bytes_per_s);
  r.number(key("sm_copy_ns_per_peer", "SM time of each copy the kernel issues (token, probabilities, scales) "
                                      "per NVLink peer it writes to, inside one NVLink domain, where it replaces "
                                      "sm_gbytes_per_s; 0 = not modelled")
               .in("ns", 1e-9)
               .at_least(0)
               .at_most(1e4)
               .optional(),
           k.sm_copy_seconds_per_peer);
  r.number(key("forward_sm_gbytes_per_s", "NVLink bytes one of the kernel's SMs forwards per second inside a "
                                          "destination domain of an exchange across domains (RDMA, then NVLink), "
                                          "when its forwarding warps bind; 0 = they never bind")
               .in("GB/s", 1e9)
               .at_least(0)
               .at_most(1e4)
               .optional(),
           k.forward_sm_bytes_per_s);
  r.number(efficiency_key("rdma_efficiency", "fraction of the NIC the kernel's RDMA copies reach"),
           k.rdma_efficiency);
  r.number(efficiency_key("torch_api_share", "the share of the kernel-only bandwidth the library's end-to-end "
                                             "Python call reaches (its \"Torch API\" benchmark: allocation, "
                                             "preprocessing, host sync and buffer copies included); used by stacks "
                                             "whose hybridep_call is torch_api; 1 (the default) = the kernel alone")
               .optional(),
           k.torch_api_share);
}

}  // namespace

void describe_dispatcher(Reader& r, EpDispatcherSpec& d) {
  r.text(key("name", "display name of the kernels, e.g. \"DeepEP normal kernels (V1)\""), d.name);
  r.object(key("dispatch", "the dispatch kernel (also the combine's backward)"),
           [&](Reader& k) { describe_kernel(k, d.dispatch); });
  r.object(key("combine", "the combine kernel (also the dispatch's backward)"),
           [&](Reader& k) { describe_kernel(k, d.combine); });
  r.sources(sources_key(), d.sources);
}

const std::vector<std::string>& recompute_modules() {
  static const std::vector<std::string> modules = {"mla_up_proj", "core_attn", "moe_act", "mlp",
                                                   "layernorm",   "moe",       "shared_experts", "full"};
  return modules;
}

void describe_recipe(Reader& r, RecipeSpec& s) {
  r.choice(key("dispatcher", "MoE token dispatcher: alltoall (NCCL), deepep, hybridep").optional(), s.dispatcher,
           kDispatchers);
  r.boolean(key("fp8_dispatch", "tokens dispatched in FP8 (quantised once before the all-to-all)").optional(),
            s.fp8_dispatch);
  r.integer(key("dispatcher_sms", "SMs the dispatcher occupies while it runs (0: none modelled)").optional().at_least(0),
            s.dispatcher_sms);
  r.boolean(key("ep_overlap", "EP all-to-all of one micro-batch overlapped with another's compute "
                              "(overlap_moe_expert_parallel_comm)").optional(),
            s.ep_overlap);
  r.boolean(key("delay_wgrad", "weight gradients deferred to hide dispatch/combine (delay_wgrad_compute)").optional(),
            s.delay_wgrad);
  r.choice(key("cuda_graphs", "what CUDA graphs capture: partial = attention, router and MoE preprocessing "
                              "(Megatron's attn, moe_router, moe_preprocess, the shared expert overlapped outside); "
                              "partial_shared_expert = the same with the shared expert; router_shared_expert = router, "
                              "preprocessing and shared expert, attention eager; full_iteration = the whole step")
               .optional(),
           s.cuda_graphs, kGraphScopes);
  r.choices(key("recompute", "modules recomputed in the backward pass").optional(), s.recompute, recompute_modules());
  r.boolean(key("fused_permute", "MLM-G step 1: TE PR 1927's permute kernel and the bulk MXFP8 scale allocation").optional(),
            s.fused_permute);
  r.boolean(key("cross_entropy_fusion", "cross-entropy fused into one kernel over BF16 logits "
                                        "(cross_entropy_loss_fusion)").optional(),
            s.cross_entropy_fusion);
  r.boolean(key("fused_swizzle", "MXFP8 scale swizzle fused into the quantisation kernel").optional(),
            s.fused_swizzle);
  r.boolean(key("router_fusion", "router top-k and softmax/sigmoid fused (moe_router_fusion)").optional(),
            s.router_fusion);
  r.boolean(key("fused_quantization", "quantisation fused into norm and activation kernels").optional(),
            s.fused_quantization);
  r.boolean(key("activation_fp8_input_store",
                "SwiGLU saves its input for the backward pass in FP8, 1 byte per element "
                "(activation_func_fp8_input_store; no effect where the activation is recomputed)")
                .optional(),
            s.activation_fp8_input_store);
  r.boolean(key("fp8_attention", "core attention in FP8").optional(), s.fp8_attention);
  r.boolean(key("fp8_param_gather", "parameters all-gathered in FP8").optional(), s.fp8_param_gather);
  r.boolean(key("programmatic_dependent_launch", "a kernel's launch overlaps its predecessor's tail").optional(),
            s.programmatic_dependent_launch);
  r.boolean(key("overlap_grad_reduce", "data-parallel gradient reduce-scatter overlapped with the backward pass").optional(),
            s.overlap_grad_reduce);
  r.boolean(key("overlap_param_gather", "data-parallel parameter all-gather overlapped with the forward pass").optional(),
            s.overlap_param_gather);
  r.choice(key("adam_moment_dtype", "storage type of Adam's two moments").optional(), s.adam_moment_dtype,
           {"fp32", "bf16"});
  r.boolean(key("force_balanced_routing", "every EP rank receives exactly the mean number of routed tokens "
                                          "(moe_router_force_load_balancing, the benchmarks' setting)")
                .optional(),
            s.force_balanced_routing);
  r.number(key("capacity_factor", "tokens an expert accepts, as a multiple of its mean load; the rest are dropped "
                                  "(moe_expert_capacity_factor); 0 = dropless")
               .optional()
               .at_least(0)
               .at_most(64),
           s.capacity_factor);
  r.rule("capacity_factor", s.capacity_factor == 0 || s.capacity_factor >= 1,
         "0 (dropless) or at least 1 (an expert accepts at least its mean load)");
  r.choice(key("main_grad_dtype", "type of the data-parallel gradient buffer, accumulated and reduced in it "
                                  "(Megatron: fp32 unless --grad-reduce-in-bf16)").optional(),
           s.main_grad_dtype, {"fp32", "bf16"});
  r.choices(key("offload", "modules whose saved activations wait for the backward in host memory, copied out "
                           "after each layer's forward and back one layer ahead of its backward over the system's "
                           "host link: moe_act (the experts' fc1 output, MaxText's moe_mlpwi_0/1 offload)")
                .optional(),
            s.offload, {"moe_act"});

  const bool full = contains(s.recompute, "full");
  r.rule("recompute", !full || s.recompute.size() == 1, "\"full\" recomputes everything: list it alone");
}

void check_recipe_supported(Reader& r, const std::string& where, const RecipeSpec& recipe, const StackSpec& stack) {
  const std::string prefix = where.empty() ? "" : where + ".";
  r.rule(prefix + "dispatcher", contains(stack.supports.dispatchers, recipe.dispatcher),
         "a dispatcher listed in the stack's supports.dispatchers",
         fmt::format("stack \"{}\" implements {}, not {}", stack.name, join(stack.supports.dispatchers),
                     recipe.dispatcher));
  r.rule(prefix + "cuda_graphs", contains(stack.supports.cuda_graphs, recipe.cuda_graphs),
         "a CUDA graph scope listed in the stack's supports.cuda_graphs",
         fmt::format("stack \"{}\" offers {}, not {}", stack.name, join(stack.supports.cuda_graphs),
                     recipe.cuda_graphs));
  for (const auto& module : recipe.offload)
    r.rule(prefix + "offload", contains(stack.supports.offload, module),
           "modules listed in the stack's supports.offload",
           fmt::format("stack \"{}\" cannot offload {}", stack.name, module));
  for (const auto& [name, on] : recipe.switches())
    r.rule(prefix + name, !on || contains(stack.supports.switches, name),
           "false, or a switch listed in the stack's supports.switches",
           fmt::format("stack \"{}\" does not have {}", stack.name, name));
}

void describe_stack(Reader& r, StackSpec& s) {
  r.text(key("name", "display name of the release, e.g. \"Megatron-Bridge 26.06\""), s.name);
  r.object(key("supports", "what the release can run: the recipe values it offers"),
           [&](Reader& x) { describe_support(x, s.supports); });
  r.reference(key("deepep", "the DeepEP normal kernels the release ships, as DeepEP's own benchmarks measure them: "
                            "a name in configs/dispatchers/, or {\"base\": <name>, ...overrides}"),
              "dispatchers", s.deepep_name, [&](Reader& x) { describe_dispatcher(x, s.deepep); });
  r.reference(key("hybridep", "the HybridEP kernels the release ships, as their own benchmarks measure them: "
                              "a name in configs/dispatchers/, or {\"base\": <name>, ...overrides}"),
              "dispatchers", s.hybridep_name, [&](Reader& x) { describe_dispatcher(x, s.hybridep); });
  r.number(key("host_overhead_per_kernel_us", "host time per kernel launched eagerly (not graph-captured)")
               .in("us", 1e-6).at_least(0).at_most(1e4),
           s.host_overhead_per_kernel_s);
  r.number(key("graph_launch_per_kernel_us", "host time per kernel replayed from a CUDA graph").in("us", 1e-6)
               .at_least(0).at_most(1e4),
           s.graph_launch_per_kernel_s);
  r.number(key("eager_launch_gap_us", "GPU idle between two eagerly launched dependent kernels (launch "
                                     "latency); exactly -1 (the default): the kernel calibration's eager launch time")
               .in("us", 1e-6)
               .optional()
               .at_least(0)
               .at_most(1e4)
               .or_exactly(-1),
           s.eager_launch_gap_s);
  r.number(key("te_module_host_us", "Transformer Engine's own host time per eager call of one of its GEMM modules "
                                   "(Linear, GroupedLinear), beyond its kernels' launches, on the x86 host of "
                                   "host_overhead_per_kernel_us (the system's host_op_time_ratio scales it); 0 (the "
                                   "default) = none beyond the launches")
               .in("us", 1e-6)
               .optional()
               .at_least(0)
               .at_most(1e4),
           s.te_module_host_s);
  r.choice(key("hybridep_call", "how the release calls HybridEP: kernel (the kernels alone; the default) or torch_api "
                                "(its blocking Python call, at the dispatcher's torch_api_share of the kernel bandwidth)")
               .optional(),
           s.hybridep_call, {"kernel", "torch_api"});
  r.text(key("cudnn_version", "the cuDNN the release ships (major.minor[.patch], e.g. 9.18.0): attention is priced "
                              "as that version ran it where configs/calibration/kernels.json measured it "
                              "(cudnn_bf16_time_ratios); absent = the calibrated version")
             .optional(),
         s.cudnn_version);
  r.rule("cudnn_version", s.cudnn_version.empty() || parse_major_minor(s.cudnn_version), "a version major.minor[.patch]",
         s.cudnn_version);
  r.choice(key("grouped_linear", "how the release's Transformer Engine runs the experts' GroupedLinear: grouped (one "
                                 "quantisation and one grouped GEMM launch for all local experts; the default) or "
                                 "per_expert (one of each per local expert)")
               .optional(),
           s.grouped_linear, {"grouped", "per_expert"});
  r.choice(key("mxfp8_gemm_swizzle", "which MXFP8 block scales the release's Transformer Engine swizzles for cuBLAS "
                                     "before each GEMM, one kernel each: weights (the weight's; activations and "
                                     "gradients are quantised GEMM-ready from TE 2.12; the default) or operands "
                                     "(both operands', TE 2.11 and before)")
               .optional(),
           s.mxfp8_gemm_swizzle, {"weights", "operands"});
  r.choice(key("flops_formula", "the formula the framework logs its model TFLOP/s by, shown beside Megatron's "
                                "convention: megatron (the default), torchtitan (6 x active parameters plus "
                                "attention not halved for causality) or maxtext (its calculate_tflops_training_per_"
                                "device: router and logits counted, causal attention)")
               .optional(),
           s.flops_formula, model::flops_formula_names());
  r.object(key("recipe", "the release's default recipe (its DeepSeek-V3 perf recipe); a scenario's \"recipe\" "
                         "overrides it key by key"),
           [&](Reader& x) {
             describe_recipe(x, s.recipe);
             check_recipe_supported(x, "", s.recipe, s);
           });
  r.sources(sources_key(), s.sources);
}

}  // namespace moesim::config
