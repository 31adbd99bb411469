#include <fmt/format.h>

#include <algorithm>

#include "moesim/config/megatron_rules.hpp"
#include "schema.hpp"
#include "text.hpp"

namespace moesim::config {

namespace {

void describe_training(Reader& r, TrainingSpec& t) {
  r.integer(key("seq_len", "tokens per sequence").optional().at_least(1), t.seq_len);
  r.integer(key("global_batch", "sequences per optimizer step").at_least(1), t.global_batch);
  r.integer(key("micro_batch", "sequences per micro-batch").optional().at_least(1), t.micro_batch);
  std::string precision(to_string(t.precision));
  r.choice(key("precision",
               "numeric format and quantisation recipe of the transformer GEMMs: bf16; fp8 (per-tensor current "
               "scaling); fp8_blockwise (1x128 / 128x128 block scales); mxfp8 (one scale per 32 elements); nvfp4 "
               "(FP4 with 16-element and per-tensor scales, Hadamard transforms and stochastic rounding; \"fp4\" "
               "is read as nvfp4). Attention, router, embedding and output layer stay BF16 under nvfp4")
               .optional(),
           precision, precision_names());
  parse_precision(precision, t.precision);
  r.integer(key("mtp_layers", "multi-token-prediction layers trained (DeepSeek-V3: 0 or 1)").optional().at_least(0)
                .at_most(1024),
            t.mtp_layers);
}

// Types and ranges only: whether the degrees divide each other and the GPU count is the plan
// stage's question, where the whole layout is known.
void describe_layout(Reader& r, LayoutSpec& l) {
  r.integer(key("tp", "tensor-parallel degree").optional().at_least(1), l.tp);
  r.integer(key("pp", "pipeline-parallel degree").optional().at_least(1), l.pp);
  r.integer(key("vpp", "virtual pipeline stages (model chunks) per pipeline rank").optional().at_least(1), l.vpp);
  r.integer(key("ep", "expert-parallel degree; an EP group spans NVLink domains as gpus_per_domain places its "
                      "ranks").optional().at_least(1),
            l.ep);
  r.integer(key("etp", "tensor-parallel degree inside an expert").optional().at_least(1), l.etp);
  r.integer(key("cp", "context-parallel degree").optional().at_least(1), l.cp);
  r.integer(key("dp", "data-parallel degree; 0 = derived as gpus / (tp * cp * pp)").optional().at_least(0), l.dp);
  r.boolean(key("sequence_parallel", "sequence parallelism with tp > 1").optional(), l.sequence_parallel);
  r.text(key("pipeline_layout", "Megatron's pipeline_model_parallel_layout, e.g. \"Et|(tt|)*30L\"; \"\" = even split")
             .optional()
             .may_be_empty(),
         l.pipeline_layout);
  r.choice(key("schedule", "pipeline schedule: 1f1b (Megatron's, interleaved when vpp > 1), zb-h1 (1F1B with the "
                           "backward split into input and weight gradients), zb-v (zero-bubble V, vpp = 2), "
                           "dualpipe (DeepSeek's, micro-batches from both ends, vpp = 1, two stage copies "
                           "per rank), dualpipev (DualPipe on a V, vpp = 2)").optional(),
           l.schedule, pipeline_schedule_names());
  r.integer(key("gpus_per_domain",
                "GPUs used per NVLink domain; 0 = the whole domain (72 on an NVL72 rack). Ranks fill the domains "
                "in order, so with 0 an EP64 group lands as 64 GPUs of one rack, then 8 + 56 across two: an "
                "uneven split, simulated (the 8 GPUs' NICs receive the most), but slower than 64, which keeps "
                "every EP64 group inside one rack as the published GB200/GB300 runs do")
                .optional()
                .at_least(0),
            l.gpus_per_domain);
  r.choice(key("sharding", "how parameters, gradients and optimizer states are sharded over the data-parallel "
                           "ranks (dense over dp x cp, experts over edp): optimizer (Megatron's distributed "
                           "optimizer, ZeRO-1: one parameter all-gather and one gradient reduce-scatter per step) "
                           "or fsdp (ZeRO-3, as FSDP2 and XLA shard: each transformer block all-gathered before "
                           "its forward and backward, one block ahead, its gradients reduce-scattered after its "
                           "backward); the stack must support it")
               .optional(),
           l.sharding, {"optimizer", "fsdp"});
  r.boolean(key("reshard_after_forward", "fsdp: free each block's gathered parameters after its forward, so that "
                                         "the backward gathers them again (FSDP2's default without pipeline "
                                         "parallelism); false keeps them to the backward")
                .optional(),
            l.reshard_after_forward);
  r.integer(key("dp_shard", "fsdp: the data-parallel ranks (of dp x cp) each block is sharded over, the rest holding "
                            "replicas (HSDP, TorchTitan's data_parallel_replicate_degree = dp x cp / dp_shard; experts "
                            "sharded over edp / replicas); each block's gradients are reduce-scattered in its shard "
                            "group, then all-reduced over the replicas; 0 = all of them (FSDP)")
                .optional()
                .at_least(0),
            l.dp_shard);
}

void describe_published(Reader& r, Published& p) {
  r.text(key("id", "the run's id, e.g. \"gb300-mxfp8-2606\" (unique among the published scenarios)"), p.id);
  r.text(key("source", "source key of the measurement (MB-A, MLM-G, ...; docs/sources.md)"), p.source);
  r.number(key("tflops_per_gpu", "published model TFLOP/s per GPU (Megatron convention); 0 = none")
               .in("TFLOP/s")
               .optional()
               .at_least(0)
               .at_most(1e5),
           p.tflops_per_gpu);
  r.number(key("tokens_per_s_per_gpu", "published tokens per second per GPU; 0 = none").in("tokens/s").optional()
               .at_least(0).at_most(1e9),
           p.tokens_per_s_per_gpu);
  r.number(key("peak_memory_gbytes", "measured peak allocated memory per GPU (the largest pipeline rank); 0 = none")
               .in("GB", 1e9)
               .optional()
               .at_least(0)
               .at_most(1e5),
           p.peak_memory_bytes);
  r.choice(key("change", "for a step of a series (the GB200 history): what it changes over the previous step in "
                        "moesim: a recipe switch, a stack override (software performance), both, nothing moesim "
                        "models, or the series' baseline; absent = not a series step")
               .optional(),
           p.change, {"baseline", "recipe", "stack", "recipe+stack", "unmodelled"});
  r.rule("tflops_per_gpu", p.tflops_per_gpu > 0 || p.tokens_per_s_per_gpu > 0 || p.peak_memory_bytes > 0,
         "tflops_per_gpu, tokens_per_s_per_gpu or peak_memory_gbytes > 0 (something to compare with)");
}

void describe_fabric_faults(Reader& r, FabricFaults& f) {
  r.object(key("nic", "NICs that run below their rated bandwidth, each direction (a link trained down to fewer "
                      "lanes or a lower rate): {\"domain\": 3, \"speed\": 0.5} for every NIC of NVLink domain 3 "
                      "(a rack, as layout.gpus_per_domain fills them), or {\"rank\": 517, \"speed\": 0.5} for one "
                      "GPU's; absent = none")
               .optional(),
           [&](Reader& n) {
             n.integer(key("rank", "the GPU whose NIC is degraded (Megatron's rank order); give rank or domain")
                           .optional()
                           .at_least(0),
                       f.nic_rank);
             n.integer(key("domain", "the NVLink domain (rack) whose NICs are all degraded; give rank or domain")
                           .optional()
                           .at_least(0),
                       f.nic_domain);
             n.number(key("speed", "their bandwidth over the rated one").above(0.01).at_most(1), f.nic_speed);
             n.rule("rank", (f.nic_rank >= 0) != (f.nic_domain >= 0), "exactly one of rank and domain");
           });
  r.object(key("uplinks", "leaf switches whose uplinks to the spine carry less than their rated capacity (lost "
                          "uplinks or ports at a lower rate): {\"leaf_group\": 0, \"speed\": 0.5} for every "
                          "leaf of leaf group 0 (fabric.gpus_per_leaf domains, all rails); only traffic between "
                          "leaf groups climbs them; absent = none")
               .optional(),
           [&](Reader& u) {
             u.integer(key("leaf_group", "the leaf group (domain / fabric.gpus_per_leaf)").at_least(0),
                       f.uplink_leaf_group);
             u.number(key("speed", "their capacity over the rated one (a leaf that lost 1 of its u uplinks: "
                                   "(u - 1) / u)")
                          .above(0.01)
                          .at_most(1),
                      f.uplink_speed);
           });
}

}  // namespace

void describe_scenario(Reader& r, Scenario& s) {
  r.text(key("name", "what the scenario runs, in words"), s.name);
  std::string system, model, stack;  // file names: the specs carry what they describe
  r.reference(key("system", "the cluster: a name in configs/systems/, or {\"base\": <name>, ...overrides}"), "systems",
              system, [&](Reader& x) { describe_system(x, s.system); });
  r.integer(key("gpus", "GPUs in the run").at_least(1), s.gpus);
  r.reference(key("model", "the model: a name in configs/models/, or {\"base\": <name>, ...overrides}"), "models", model,
              [&](Reader& x) { describe_model(x, s.model); });
  r.reference(key("stack", "the software stack: a name in configs/stacks/, or {\"base\": <name>, ...overrides}"),
              "stacks", stack, [&](Reader& x) { describe_stack(x, s.stack); });
  s.recipe = s.stack.recipe;
  r.object(key("recipe", "what this run turns on, key by key over the stack's default recipe; absent = the "
                         "stack's recipe").optional(),
           [&](Reader& x) { describe_recipe(x, s.recipe); });
  check_recipe_supported(r, "recipe", s.recipe, s.stack);
  r.object(key("training", "batch, sequence and precision"), [&](Reader& x) { describe_training(x, s.training); });
  r.object(key("layout", "the parallel layout"), [&](Reader& x) { describe_layout(x, s.layout); });
  s.variability = s.system.variability;
  s.variability.expert_load_sigma = s.model.moe.expert_load_sigma;
  r.object(key("variability", "how much GPUs, kernels and expert loads differ, key by key over the system's "
                              "variability and the model's expert_load_sigma; absent = those defaults")
               .optional(),
           [&](Reader& x) { describe_variability(x, s.variability, true); });
  r.object(key("fabric_faults", "a what-if: scale-out links below their rated bandwidth for the whole step (a "
                                "degraded NIC, rack or leaf); absent = none")
               .optional(),
           [&](Reader& x) { describe_fabric_faults(x, s.fabric_faults); });
  r.choice(key("placement", "a what-if: which GPU each rank runs on. in_order: Megatron's ranks fill the NVLink "
                            "domains one after the other (the default, what a topology-aware launcher does); "
                            "round_robin_nodes: the job's k-th node (system gpus_per_node consecutive ranks) in "
                            "domain k mod domains, as a host list that cycles over the racks gives it; "
                            "random_nodes: the nodes in a random order drawn from seed, as a topology-unaware "
                            "scheduler gives them")
               .optional(),
           s.placement, {"in_order", "round_robin_nodes", "random_nodes"});
  r.integer(key("seed", "seed of every random draw (GPU speeds, kernel jitter, expert loads, the random_nodes placement): the same seed gives "
                        "the same step").optional().at_least(0),
            s.seed);
  Published published;
  if (r.object(key("published", "a measured result this scenario reproduces; absent = none").optional(),
               [&](Reader& x) { describe_published(x, published); }))
    s.published = published;
  std::string calibration;  // applied by the loader before this reading (loader.cpp)
  r.text(key("calibration", "an overlay written by moesim calibrate (a path from the scenario's folder), layered "
                            "over the system when the scenario runs on the system it calibrates; --calibration for "
                            "the same system replaces it; absent = none").optional(),
         calibration);
  std::string comment;  // for readers of the file only
  r.text(key("comment", "what the scenario shows, for its readers (not simulated)").optional().may_be_empty(), comment);

  r.rule("gpus", s.gpus <= s.system.max_gpus, "at most the system's max_gpus",
         fmt::format("{} > {}", s.gpus, s.system.max_gpus));
  r.rule("training.precision", s.system.gpu.peak_flop_per_s(s.training.precision) > 0,
         "a precision the system's GPU has tensor cores for (its peak > 0)",
         fmt::format("{} has no {} peak", s.system.gpu.name, to_string(s.training.precision)));
  r.rule("variability.slow_gpu.rank", s.variability.slow_gpu_rank < s.gpus, "a rank below the run's GPU count",
         fmt::format("rank {} of {} GPUs", s.variability.slow_gpu_rank, s.gpus));
  {
    const int per_domain = s.layout.gpus_per_domain > 0 ? s.layout.gpus_per_domain : s.system.domain_gpus;
    const int domains = per_domain > 0 ? (s.gpus + per_domain - 1) / per_domain : 1;
    const int per_leaf = s.system.fabric.gpus_per_leaf >= 1 ? s.system.fabric.gpus_per_leaf : 1;
    const int leaf_groups = (domains + per_leaf - 1) / per_leaf;
    r.rule("fabric_faults.nic.rank", s.fabric_faults.nic_rank < s.gpus, "a rank below the run's GPU count",
           fmt::format("rank {} of {} GPUs", s.fabric_faults.nic_rank, s.gpus));
    r.rule("fabric_faults.nic.domain", s.fabric_faults.nic_domain < domains,
           "a domain of the run (gpus / layout.gpus_per_domain, rounded up)",
           fmt::format("domain {} of {}", s.fabric_faults.nic_domain, domains));
    r.rule("fabric_faults.uplinks.leaf_group", s.fabric_faults.uplink_leaf_group < leaf_groups,
           "a leaf group of the run (its domains / fabric.gpus_per_leaf, rounded up)",
           fmt::format("leaf group {} of {}", s.fabric_faults.uplink_leaf_group, leaf_groups));
    const int per_node = s.system.node_gpus();
    r.rule("placement", s.placement == "in_order" || (per_node > 0 && per_domain % per_node == 0 && s.gpus % per_node == 0),
           "in_order, or whole nodes: layout.gpus_per_domain and gpus multiples of the system's gpus_per_node",
           fmt::format("{} GPUs per domain, {} GPUs, {} per node", per_domain, s.gpus, per_node));
  }
  r.rule("layout.gpus_per_domain", s.layout.gpus_per_domain <= s.system.domain_gpus,
         "at most the system's nvlink_domain_gpus",
         fmt::format("{} > {}", s.layout.gpus_per_domain, s.system.domain_gpus));
  r.rule("recipe.offload", s.recipe.offload.empty() || s.system.host_link_bytes_per_s > 0,
         "no offloaded modules, or a system with host_link_gbytes_per_s > 0",
         fmt::format("{} describes no host link", s.system.name));
  r.rule("layout.sharding",
         std::find(s.stack.supports.sharding.begin(), s.stack.supports.sharding.end(), s.layout.sharding) !=
             s.stack.supports.sharding.end(),
         "a sharding strategy listed in the stack's supports.sharding",
         fmt::format("stack \"{}\" shards by {}, not {}", s.stack.name, join(s.stack.supports.sharding),
                     s.layout.sharding));
  r.rule("recipe.dispatcher_sms", s.recipe.dispatcher_sms < s.system.gpu.sm_count,
         "fewer than the GPU's sm_count", fmt::format("{} >= {}", s.recipe.dispatcher_sms, s.system.gpu.sm_count));

  // What Megatron-Core itself refuses (docs/megatron-rules.md), checked once everything is read.
  const auto broken = broken_megatron_rules(s);
  const auto& rules = megatron_rules();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const auto it = std::find_if(broken.begin(), broken.end(), [&](const auto& b) { return b.first == i; });
    r.rule(rules[i].where, it == broken.end(), megatron_rule_text(rules[i]), it == broken.end() ? "" : it->second);
  }
}

}  // namespace moesim::config
