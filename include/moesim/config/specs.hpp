#pragma once
// The configuration as plain values: what configs/ and a scenario say, validated, in SI units
// (seconds, bytes, FLOP, FLOP/s, bytes/s). Every later stage reads these and nothing else.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moesim/config/precision.hpp"

namespace moesim {

// configs/hardware/<name>.json
struct GpuSpec {
  std::string name;                       // e.g. "GB300"
  // Datasheet figures: the dense (no 2:4 sparsity) peaks at the boost clock. They are the MFU
  // denominators; kernels run at the sustained clock below, not at these.
  double bf16_flop_per_s = 0;
  double fp8_flop_per_s = 0;              // also every FP8 flavour (tensorwise, blockwise, MXFP8)
  double fp4_flop_per_s = 0;              // NVFP4; 0 when the GPU has no FP4 tensor cores
  double hbm_bytes = 0;                   // physical capacity
  double hbm_usable_bytes = 0;            // what training can allocate (driver/context reserve off)
  double hbm_bytes_per_s = 0;             // peak HBM bandwidth
  int sm_count = 0;
  double tdp_w = 0;
  // What the kernel model runs on (src/cost): the architecture selects the software
  // efficiencies of configs/calibration/kernels.json; the rest are hardware rates per SM.
  std::string architecture = "hopper";    // hopper, blackwell, blackwell_ultra
  double tensor_flop_per_clock_per_sm_bf16 = 0;  // dense
  double tensor_flop_per_clock_per_sm_fp8 = 0;
  double tensor_flop_per_clock_per_sm_fp4 = 0;
  double exp2_per_clock_per_sm = 0;       // special-function unit (MUFU.EX2) throughput
  double smem_bytes_per_clock_per_sm = 0; // shared-memory bandwidth
  // The SM clock a large GEMM sustains at the power limit, per tensor-core family: below the
  // boost clock because a tensor-core-bound GPU runs at its power limit.
  double sustained_clock_hz_bf16 = 0;
  double sustained_clock_hz_fp8 = 0;
  double sustained_clock_hz_fp4 = 0;
  double idle_w = 0;                      // powered, no kernel running
  double communication_w = 0;             // only communication kernels and links busy
  std::map<std::string, std::string> sources;  // JSON key -> provenance ("*": the whole file)

  double peak_flop_per_s(Precision p) const;         // datasheet, for MFU
  double tensor_flop_per_clock_per_sm(Precision p) const;  // by tensor-core family
  double sustained_clock_hz(Precision p) const;             // by tensor-core family
  // SMs x per-SM rate x sustained clock: the tensor-core rate a perfect mainloop would reach.
  double sustained_flop_per_s(Precision p) const;

  bool operator==(const GpuSpec&) const = default;
};

// Scale-out network: a two-tier fat tree. Each NVLink domain's NICs hang off its own leaves
// (rail-optimised inside the domain); traffic between domains crosses the spine tier, whose
// capacity per leaf is its downlink capacity divided by the oversubscription ratio.
struct FabricSpec {
  std::string topology = "rail_optimized_fat_tree";
  int gpus_per_leaf = 0;                  // NIC ports per leaf switch (radix / 2 at 1:1)
  double oversubscription = 1.0;          // leaf downlink : uplink bandwidth ratio (>= 1)
  double switch_latency_s = 0;            // per switch hop
  std::string routing = "adaptive";       // how leaves spread flows over their uplinks: adaptive or ecmp
  int ecmp_flows_per_nic = 0;             // ecmp: flows each NIC sends up at once; 0 = NCCL's channels per NIC

  bool operator==(const FabricSpec&) const = default;
};

// How NCCL performs on a system: measured fractions of the links (nccl-tests bus bandwidths) and
// the CTAs it runs on (see platform/nccl.hpp).
struct NcclSpec {
  std::string arch = "hopper";            // NCCL's latency/bandwidth tables: hopper or blackwell
  double nvlink_efficiency = 1.0;         // ring/p2p Simple protocol, fraction of the NVLink port
  double nvls_efficiency = 0;             // NVLS (NVLink SHARP), fraction of the port; 0 = no NVLS
  double net_efficiency = 1.0;            // Simple protocol over the NIC, fraction of the NIC
  int channels = 16;                      // CTAs (one SM each) of a ring/tree/p2p collective
  int nvls_channels = 16;                 // CTAs of an NVLS collective inside one NVLink domain
  int nvls_tree_channels = 0;             // CTAs of NVLS-tree (across domains); 0 = nvls_channels
  double call_overhead_us = 0;            // fixed time of each collective beyond NCCL's latency model
  double p2p_ll_channel_gbytes_per_s = 0; // LL point-to-point data rate per channel; 0 = NCCL's LL model
  double p2p_simple_channel_gbytes_per_s = 0;  // Simple point-to-point ceiling per channel (CTA); 0 = none
  double p2p_simple_warp_gbytes_per_s = 0;     // Simple point-to-point rate per copying warp; 0 = none
  double p2p_ll_latency_us = 0;           // fixed time of one LL point-to-point transfer; 0 = NCCL's ring latency
  double p2p_simple_latency_us = 0;       // fixed time of one Simple point-to-point transfer; 0 = as above
  double p2p_host_call_us = 0;            // host time per ncclSend/ncclRecv of an all-to-all; 0 = never binds

  bool operator==(const NcclSpec&) const = default;
};

// How much GPUs of one system differ in speed and how much a kernel's time varies; a system's
// defaults, which a scenario's "variability" object overrides. Each GPU's kernels take
// N(1, gpu_speed_cv) times their nominal time for the whole step (manufacturing, power and
// thermal spread); each kernel on top of that N(1, kernel_jitter_cv), drawn independently.
struct VariabilitySpec {
  double gpu_speed_cv = 0;                // persistent per-GPU spread (coefficient of variation)
  double kernel_jitter_cv = 0;            // independent per-kernel spread
  // Routed tokens per expert when routing is not force-balanced: an expert's share of the
  // tokens per step and layer is log-normal with this sigma (the router's own balancing;
  // defaults from the model), and the tokens of each micro-batch are then drawn from the shares.
  double expert_load_sigma = 0;
  // A what-if (scenario only): one named GPU that runs slow for the whole step (a throttled or
  // degraded part), on top of the spread. Its kernels take 1 / slow_gpu_speed times as long.
  int slow_gpu_rank = -1;                 // -1: none
  double slow_gpu_speed = 1;              // 0.9 = 10 % slower

  bool operator==(const VariabilitySpec&) const = default;
};

// A what-if (scenario only): scale-out links that run below their rated bandwidth for the whole
// step, each direction (a NIC negotiated down to fewer lanes, a cable at a lower rate, a leaf
// switch that lost some of its uplinks).
struct FabricFaults {
  int nic_rank = -1;            // one GPU's NIC; -1: none
  int nic_domain = -1;          // or every NIC of one NVLink domain (a rack); -1: none
  double nic_speed = 1;         // their bandwidth over the rated one
  int uplink_leaf_group = -1;   // the uplinks of every leaf of this leaf group (all rails); -1: none
  double uplink_speed = 1;      // over their rated capacity

  bool operator==(const FabricFaults&) const = default;
};

// configs/systems/<name>.json
struct SystemSpec {
  std::string name;                       // e.g. "GB300 NVL72"
  std::string gpu_name;                   // key into configs/hardware
  GpuSpec gpu;
  int domain_gpus = 0;                    // GPUs per NVLink domain (72 NVL72, 8 HGX)
  int gpus_per_node = 0;                  // a failure's and a spare's unit (4: NVL72 tray); 0 = the domain
  double nvlink_bytes_per_s = 0;          // per GPU, per direction
  double nvlink_latency_s = 0;            // GPU -> switch -> GPU, one way
  double nic_bytes_per_s = 0;             // per GPU, per direction
  double nic_latency_s = 0;               // NIC + cable, one way, per end
  FabricSpec fabric;
  NcclSpec nccl;
  int max_gpus = 0;                       // largest cluster the system file describes
  double node_watts_per_gpu = 0;          // CPUs, NICs, memory, fans, static power, per GPU
  // The host CPU's time per framework operation over the x86 host the launch costs were measured
  // on (configs/calibration/kernels.json): 1 for x86 hosts, about 2.75 for Grace.
  double host_op_time_ratio = 1;
  // Each GPU's link to host memory, per direction: what offloaded activations cross (NVLink-C2C
  // to Grace, PCIe to an x86 host); 0 = not described (offloading refused).
  double host_link_bytes_per_s = 0;
  VariabilitySpec variability;            // gpu_speed_cv and kernel_jitter_cv (expert_load_sigma unused)
  std::map<std::string, std::string> sources;  // JSON key -> provenance ("*": the whole file)

  // GPUs per node: gpus_per_node, or the whole domain where it is 0.
  int node_gpus() const { return gpus_per_node > 0 ? gpus_per_node : domain_gpus; }
  bool operator==(const SystemSpec&) const = default;
};

// configs/models/<name>.json
struct AttentionSpec {
  std::string kind = "mla";               // "mla" (DeepSeek) or "gqa" (Llama, Qwen, Mixtral)
  int heads = 0;
  int kv_heads = 0;                       // gqa only
  int head_dim = 0;                       // gqa only
  int q_lora_rank = 0;                    // mla: 0 means no q compression (DeepSeek-V2-Lite)
  int kv_lora_rank = 0;                   // mla
  int qk_nope_head_dim = 0;               // mla
  int qk_rope_head_dim = 0;               // mla
  int v_head_dim = 0;                     // mla

  bool operator==(const AttentionSpec&) const = default;
};

struct MoeSpec {
  int experts = 0;                        // routed experts; 0 = dense model
  int top_k = 0;
  int expert_ffn = 0;                     // intermediate size of one routed expert
  int shared_experts = 0;
  int shared_ffn = 0;                     // intermediate size of ALL shared experts together
  int first_dense_layers = 0;             // leading layers with a dense FFN instead of MoE
  int moe_layer_freq = 1;                 // every k-th layer after the dense ones is MoE
  int router_groups = 1;                  // n_group: experts split into this many equal groups
  int router_groups_per_token = 0;        // topk_group: groups a token may use; 0 = all
  double expert_load_sigma = 0;           // log-normal sigma of an expert's token share (VariabilitySpec)

  bool operator==(const MoeSpec&) const = default;
};

struct ModelSpec {
  std::string name;
  int layers = 0;                         // transformer layers, MTP excluded
  int hidden = 0;
  int dense_ffn = 0;                      // SwiGLU intermediate size of dense layers
  int vocab = 0;
  bool tied_embeddings = false;
  AttentionSpec attention;
  MoeSpec moe;
  double published_total_params = 0;      // for tests; 0 if none
  double published_active_params = 0;
  std::map<std::string, std::string> sources;  // JSON key -> provenance ("*": the whole file)

  bool operator==(const ModelSpec&) const = default;
};

// What one run turns on: a scenario's "recipe" object, whose defaults come from its stack's
// "recipe" (the release's own DeepSeek-V3 perf recipe). The member initialisers are
// Megatron-LM's argument defaults.
struct RecipeSpec {
  std::string dispatcher = "alltoall";    // alltoall (NCCL), deepep, hybridep
  bool fp8_dispatch = false;              // dispatch payload quantised to FP8 before sending
  int dispatcher_sms = 0;                 // SMs the dispatcher occupies while it runs
  bool ep_overlap = false;                // overlap_moe_expert_parallel_comm (1F1B A2A overlap)
  bool delay_wgrad = false;               // weight gradients deferred to hide combine/dispatch
  std::string cuda_graphs = "none";       // none, partial, partial_shared_expert, full_iteration
  std::vector<std::string> recompute;     // modules recomputed in backward (mla_up_proj, moe_act, mlp, ...)
  bool fused_permute = false;             // permute + scale allocation fused
  bool cross_entropy_fusion = false;      // vocab-parallel cross-entropy in one kernel over BF16 logits
  bool fused_swizzle = false;             // MXFP8 scale swizzle fused into the quantisation kernel
  bool router_fusion = false;
  bool fused_quantization = false;        // quantisation fused into norm/activation kernels
  bool activation_fp8_input_store = false; // SwiGLU keeps its input in FP8 for the backward (memory only)
  bool fp8_attention = false;             // core attention in FP8
  bool fp8_param_gather = false;
  bool programmatic_dependent_launch = false;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  std::string adam_moment_dtype = "fp32"; // fp32 or bf16
  bool force_balanced_routing = false;    // moe_router_force_load_balancing: every rank gets the mean load
  double capacity_factor = 0;             // moe_expert_capacity_factor: tokens beyond it dropped; 0 = dropless
  std::string main_grad_dtype = "fp32";   // gradient buffer: fp32, or bf16 (--grad-reduce-in-bf16)
  // Modules whose saved activations wait for the backward in host memory: copied out after the
  // layer's forward, back in one layer ahead of its backward (moe_act: the experts' fc1 output,
  // MaxText's offloaded moe_mlpwi_0/1).
  std::vector<std::string> offload;
  bool offloads(const std::string& module) const;

  // Whether `module` (an op's recompute module) is re-run in the backward pass.
  bool recomputes(const std::string& module) const;
  // The on/off switches by their JSON names, for the checks against what a stack supports.
  std::vector<std::pair<std::string, bool>> switches() const;

  bool operator==(const RecipeSpec&) const = default;
};

// What one kernel (dispatch or combine) of a deduplicating EP dispatcher reaches, measured by its
// own microbenchmarks (platform/ep_dispatch.hpp).
struct EpKernelSpec {
  double nvlink_efficiency = 1.0;         // fraction of the NVLink port when the link binds
  double sm_bytes_per_s = 0;              // NVLink bytes one of its SMs moves per second; 0 = never binds
  double sm_copy_seconds_per_peer = 0;    // SM time per copy it issues, per NVLink peer; 0 = not modelled
  double forward_sm_bytes_per_s = 0;      // NVLink bytes one SM forwards per second across domains; 0 = never binds
  double rdma_efficiency = 1.0;           // fraction of the NIC for its RDMA copies
  // The share of the kernel-only algorithm bandwidth its end-to-end Python call reaches (the
  // library's "Torch API" benchmark); applied where the release calls it that way.
  double torch_api_share = 1.0;

  bool operator==(const EpKernelSpec&) const = default;
};
// configs/dispatchers/<name>.json: an EP dispatcher's kernels as its own microbenchmarks measure
// them (a property of the library version, shared by every release that ships it).
struct EpDispatcherSpec {
  EpKernelSpec dispatch, combine;
  std::string name;                            // display name, e.g. "DeepEP normal kernels (V1)"
  std::map<std::string, std::string> sources;  // setting -> provenance

  bool operator==(const EpDispatcherSpec&) const = default;
};

// What a software release can run: the recipe values it offers.
struct StackSupport {
  std::vector<std::string> dispatchers;   // recipe.dispatcher values
  std::vector<std::string> cuda_graphs;   // recipe.cuda_graphs scopes
  std::vector<std::string> switches;      // recipe switches (RecipeSpec::switches names) it has
  // layout.sharding strategies: "optimizer" (Megatron's distributed optimizer, ZeRO-1: parameters
  // gathered and gradients reduced once per step) and "fsdp" (ZeRO-3: per transformer block, in
  // every pass: FSDP2, XLA's SPMD sharding).
  std::vector<std::string> sharding = {"optimizer"};
  std::vector<std::string> offload;       // recipe.offload modules it can keep in host memory

  bool operator==(const StackSupport&) const = default;
};

// configs/stacks/<name>.json: a software release: what it supports, how fast its parts are, and
// its default recipe.
// A library version "major.minor[.patch...]" ("9.18", "9.20.0.48") as (major, minor); nullopt
// for anything else.
std::optional<std::pair<int, int>> parse_major_minor(const std::string& version);

struct StackSpec {
  std::string name;
  StackSupport supports;
  std::string deepep_name;                // configs/dispatchers/ file of its DeepEP normal kernels
  EpDispatcherSpec deepep;
  std::string hybridep_name;              // configs/dispatchers/ file of its HybridEP kernels
  EpDispatcherSpec hybridep;
  double host_overhead_per_kernel_s = 0;  // CPU time per kernel launch when not graph-captured
  double graph_launch_per_kernel_s = 0;   // per kernel replayed from a CUDA graph
  double eager_launch_gap_s = -1e-6;      // GPU idle between eagerly launched kernels; < 0: calibration's
  // Transformer Engine's own host time per eager call of one of its GEMM modules (Linear,
  // GroupedLinear), beyond the kernels' launches, on the x86 reference host: the release's TE.
  double te_module_host_s = 0;
  // How the release's Megatron-Core calls HybridEP: "kernel" (the kernels alone, as sync-free
  // 0.18 with fixed buffers does) or "torch_api" (the blocking Python call, routing-map
  // all-gather, preprocessing, host sync and buffer copies included: 0.15 to 0.17).
  std::string hybridep_call = "kernel";
  // The cuDNN the release ships ("9.18.0"), which prices its attention
  // (cost::use_cudnn_version); "" = the version the kernel calibration was measured with.
  std::string cudnn_version;
  // How the release's Transformer Engine runs a GroupedLinear: "grouped" (one quantisation and
  // one grouped GEMM launch for all local experts: TE 2.13/2.14) or "per_expert" (a quantisation
  // and a GEMM launch per local expert, TE 2.12 and before).
  std::string grouped_linear = "grouped";
  // Which MXFP8 scales the release's Transformer Engine swizzles for cuBLAS at each GEMM:
  // "operands" (both, one kernel each: TE 2.11 and before) or "weights" (the weight's only: TE
  // 2.12's quantisers write activations' and gradients' scales GEMM-ready, PR 2486).
  std::string mxfp8_gemm_swizzle = "weights";
  // The formula the framework logs its TFLOP/s by (model::framework_flops_per_token): megatron,
  // torchtitan or maxtext; moesim reports it beside Megatron's convention.
  std::string flops_formula = "megatron";
  RecipeSpec recipe;                      // the release's default recipe
  std::map<std::string, std::string> sources;  // setting -> provenance

  bool operator==(const StackSpec&) const = default;
};

struct TrainingSpec {
  int seq_len = 4096;
  int global_batch = 0;                   // sequences per step
  int micro_batch = 1;                    // sequences per micro-batch
  Precision precision = Precision::bf16;
  int mtp_layers = 0;

  bool operator==(const TrainingSpec&) const = default;
};

struct LayoutSpec {
  int tp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, cp = 1;
  int dp = 0;                             // 0: derived as gpus / (tp * cp * pp)
  bool sequence_parallel = true;          // with tp > 1
  std::string pipeline_layout;            // Megatron's pipeline_model_parallel_layout, "" = even
  std::string schedule = "1f1b";          // one of pipeline_schedule_names()
  int gpus_per_domain = 0;                // GPUs used per NVLink domain; 0 = all of it
  // How parameters, gradients and optimizer states are sharded over the data-parallel ranks
  // (dense over dp x cp, experts over edp): "optimizer" (distributed optimizer, ZeRO-1) or "fsdp"
  // (ZeRO-3: each transformer block's parameters all-gathered before its forward and, when
  // resharded after the forward, again before its backward; its gradients reduce-scattered
  // after its backward; one block prefetched ahead, FSDP2's and XLA's rule).
  std::string sharding = "optimizer";
  bool reshard_after_forward = true;      // fsdp: free gathered parameters after each block's forward
  // fsdp: the data-parallel ranks (of dp x cp) each block's dense parameters are sharded over;
  // the rest hold replicas (HSDP: TorchTitan's data_parallel_replicate_degree = dp x cp /
  // dp_shard), the experts likewise over edp / replicas. 0 = all of them (FSDP).
  int dp_shard = 0;

  bool operator==(const LayoutSpec&) const = default;
};

// The layout.schedule values, in the order of plan::Schedule (plan/schedule.hpp describes them).
const std::vector<std::string>& pipeline_schedule_names();

// A measured result the scenario reproduces (docs/sources.md names the source key). Every row
// is held to the same tolerance (driver/validate.hpp): the file carries the figure, not a band.
struct Published {
  std::string id;                         // the run's id (e.g. "gb300-mxfp8-2606")
  std::string source;                     // source key (MB-A, MLM-G, ...)
  double tflops_per_gpu = 0;              // model TFLOP/s per GPU (Megatron convention); 0 = none
  double tokens_per_s_per_gpu = 0;        // 0 = none
  double peak_memory_bytes = 0;           // measured peak allocated memory per GPU; 0 = none
  // For a step of a series (the GB200 history): what the step changes over the previous one in
  // moesim's terms: "baseline", "recipe", "stack", "recipe+stack" or "unmodelled"; "" = no series.
  std::string change;

  bool operator==(const Published&) const = default;
};

struct Scenario {
  std::string name;
  std::string file;                       // where it was read from, for messages
  int gpus = 0;
  SystemSpec system;
  ModelSpec model;
  StackSpec stack;
  RecipeSpec recipe;                      // the stack's recipe with the scenario's overrides
  TrainingSpec training;
  LayoutSpec layout;
  VariabilitySpec variability;            // the system's and model's defaults with the scenario's overrides
  FabricFaults fabric_faults;             // none unless the scenario names some
  // Which GPU each rank runs on: "in_order" (Megatron's ranks fill one NVLink domain after the
  // other, node by node), "round_robin_nodes" (node k of the job in domain k mod domains) or
  // "random_nodes" (the job's nodes in a random order drawn from `seed`).
  std::string placement = "in_order";
  int seed = 1;                           // of every random draw (variability, routing)
  std::optional<Published> published;     // absent: nothing to compare with
  std::string calibration;                // the overlay layered over its system (moesim calibrate); "" = none
  // The overlay's keys of configs/calibration/kernels.json ("architectures.hopper.gemm.fixed_us" ->
  // value in the file's units) and their sources: layered over that file when the run loads it.
  std::map<std::string, double> calibrated_kernels;
  std::map<std::string, std::string> calibrated_kernel_sources;

  bool operator==(const Scenario&) const = default;
};

}  // namespace moesim
