// Megatron-Core's checks on recipe and layout settings (NVIDIA/Megatron-LM, read at commit
// d98e8a6, 2026-08): TransformerConfig.__post_init__ and megatron/training/arguments.py. Only
// the checks that concern what a moesim scenario can express are here; version checks (TE,
// PyTorch) and settings moesim does not model are left out.
#include "moesim/config/megatron_rules.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

namespace moesim::config {

namespace {

const char* const kTransformerConfig = "megatron/core/transformer/transformer_config.py";
const char* const kArguments = "megatron/training/arguments.py";

struct CheckedRule {
  MegatronRule rule;
  std::function<bool(const Scenario&)> holds;
  std::function<std::string(const Scenario&)> detail;
};

bool partial_graphs(const RecipeSpec& r) {
  // moesim's partial scopes are Megatron's transformer_engine impl with the attn, moe_router and
  // moe_preprocess modules (the shared expert rides in moe_router when it is not overlapped).
  return r.cuda_graphs == "partial" || r.cuda_graphs == "partial_shared_expert" ||
         r.cuda_graphs == "router_shared_expert";
}

std::string listed(const std::vector<std::string>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

const std::vector<CheckedRule>& checked_rules() {
  static const std::vector<CheckedRule> rules = {
      {{"layout.vpp",
        "vpp > 1 when recipe.ep_overlap is on, pp > 1 and the schedule is Megatron's 1f1b (Megatron turns a "
        "virtual size of 1 into none; DualPipe and ZB-V overlap their paired chunks without it)",
        "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be specified when "
        "pipeline_model_parallel_size > 1",
        kTransformerConfig},
       [](const Scenario& s) {
         return !s.recipe.ep_overlap || s.layout.pp == 1 || s.layout.vpp > 1 || s.layout.schedule != "1f1b";
       },
       [](const Scenario& s) { return fmt::format("ep_overlap with pp = {} and vpp = {}", s.layout.pp, s.layout.vpp); }},
      {{"layout.ep", "ep > 1 when recipe.ep_overlap is on",
        "overlap_moe_expert_parallel_comm is only supported with expert model parallelism", kTransformerConfig},
       [](const Scenario& s) { return !s.recipe.ep_overlap || s.layout.ep > 1; },
       [](const Scenario& s) { return fmt::format("ep_overlap with ep = {}", s.layout.ep); }},
      {{"recipe.recompute", "no \"full\" recompute when recipe.ep_overlap is on",
        "disable full recomputation when enabling overlap_moe_expert_parallel_comm", kTransformerConfig},
       [](const Scenario& s) { return !s.recipe.ep_overlap || !s.recipe.recomputes("full"); },
       [](const Scenario&) { return std::string("ep_overlap with recompute [full]"); }},
      {{"recipe.recompute", "no \"moe\" in recompute when recipe.ep_overlap is on",
        "disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm", kTransformerConfig},
       [](const Scenario& s) {
         const auto& m = s.recipe.recompute;
         return !s.recipe.ep_overlap || std::find(m.begin(), m.end(), "moe") == m.end();
       },
       [](const Scenario& s) { return "ep_overlap with recompute " + listed(s.recipe.recompute); }},
      {{"training.mtp_layers", "mtp_layers <= 1 when recipe.ep_overlap is on",
        "MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm.", kTransformerConfig},
       [](const Scenario& s) { return !s.recipe.ep_overlap || s.training.mtp_layers <= 1; },
       [](const Scenario& s) { return fmt::format("ep_overlap with {} MTP layers", s.training.mtp_layers); }},
      {{"recipe.delay_wgrad", "recipe.ep_overlap on when recipe.delay_wgrad is on",
        "overlap_moe_expert_parallel_comm must be enabled when enabling delay_wgrad_compute", kTransformerConfig},
       [](const Scenario& s) { return !s.recipe.delay_wgrad || s.recipe.ep_overlap; },
       [](const Scenario&) { return std::string("delay_wgrad without ep_overlap"); }},
      {{"recipe.cuda_graphs", "\"none\" or \"full_iteration\" when recipe.recompute is [\"full\"]",
        "full recompute is only supported with full iteration CUDA graph.", kTransformerConfig},
       [](const Scenario& s) {
         const auto& g = s.recipe.cuda_graphs;
         return !s.recipe.recomputes("full") || g == "none" || g == "full_iteration";
       },
       [](const Scenario& s) { return "full recompute with cuda_graphs " + s.recipe.cuda_graphs; }},
      {{"recipe.recompute", "no \"moe\" in recompute when recipe.cuda_graphs is a partial scope (Megatron's moe_router graph)",
        "moe recompute is not supported with moe_router CUDA graph with: ", kTransformerConfig},
       [](const Scenario& s) {
         const auto& m = s.recipe.recompute;
         return !partial_graphs(s.recipe) || std::find(m.begin(), m.end(), "moe") == m.end();
       },
       [](const Scenario& s) { return "recompute " + listed(s.recipe.recompute) + " with cuda_graphs " + s.recipe.cuda_graphs; }},
      {{"recipe.recompute", "mla_up_proj only on a model with multi-latent attention",
        "mla_up_proj in recompute_modules is only supported with multi_latent_attention.", kTransformerConfig},
       [](const Scenario& s) {
         const auto& m = s.recipe.recompute;
         return s.model.attention.kind == "mla" || std::find(m.begin(), m.end(), "mla_up_proj") == m.end();
       },
       [](const Scenario& s) { return fmt::format("{} has {} attention", s.model.name, s.model.attention.kind); }},
      {{"recipe.recompute", "moe_act only on a model with routed experts (their grouped GEMM)",
        "moe_act in recompute_modules is only supported with moe_grouped_gemm.", kTransformerConfig},
       [](const Scenario& s) {
         const auto& m = s.recipe.recompute;
         return s.model.moe.experts > 0 || std::find(m.begin(), m.end(), "moe_act") == m.end();
       },
       [](const Scenario& s) { return fmt::format("{} has no routed experts", s.model.name); }},
      {{"recipe.fp8_param_gather", "training.precision an FP8 flavour (fp8, fp8_blockwise, mxfp8) when fp8_param_gather is on",
        "fp8_param must be used together with fp8 mode.", kTransformerConfig},
       [](const Scenario& s) {
         const Precision p = s.training.precision;
         return !s.recipe.fp8_param_gather || is_fp8_family(p);  // FP8 mode in every recipe
       },
       [](const Scenario& s) {
         // The switch is often the stack's default, not the scenario's: say which key turns it off.
         return fmt::format("fp8_param_gather with precision {}{}; to train in {}, set \"recipe\": "
                            "{{\"fp8_param_gather\": false}} in the scenario (recipe.fp8_param_gather), or choose "
                            "an FP8 training.precision",
                            to_string(s.training.precision),
                            s.stack.recipe.fp8_param_gather ? " (the stack's recipe turns it on)" : "",
                            to_string(s.training.precision));
       }},
      {{"recipe.overlap_param_gather", "recipe.overlap_grad_reduce on when overlap_param_gather is on",
        "Must use --overlap-param-gather with --overlap-grad-reduce", kArguments},
       [](const Scenario& s) { return !s.recipe.overlap_param_gather || s.recipe.overlap_grad_reduce; },
       [](const Scenario&) { return std::string("overlap_param_gather without overlap_grad_reduce"); }},
      {{"layout.pp", "pp > 1 when vpp > 1 (the interleaved schedule)",
        "When interleaved schedule is used, pipeline-model-parallel size should be greater than 1", kArguments},
       [](const Scenario& s) { return s.layout.vpp == 1 || s.layout.pp > 1; },
       [](const Scenario& s) { return fmt::format("vpp = {} with pp = {}", s.layout.vpp, s.layout.pp); }},
  };
  return rules;
}

}  // namespace

const std::vector<MegatronRule>& megatron_rules() {
  static const std::vector<MegatronRule> rules = [] {
    std::vector<MegatronRule> out;
    for (const auto& c : checked_rules()) out.push_back(c.rule);
    return out;
  }();
  return rules;
}

std::vector<std::pair<std::size_t, std::string>> broken_megatron_rules(const Scenario& s) {
  std::vector<std::pair<std::size_t, std::string>> out;
  const auto& rules = checked_rules();
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (!rules[i].holds(s)) out.emplace_back(i, rules[i].detail(s));
  return out;
}

std::string megatron_rule_text(const MegatronRule& rule) {
  return fmt::format("{} (Megatron-Core refuses it: \"{}\", {})", rule.requirement, rule.quote, rule.source);
}

}  // namespace moesim::config
