// Defaults of the search space and its candidates.
#include "moesim/search/space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "moesim/batch/work_limit.hpp"
#include "moesim/config/choices.hpp"
#include "moesim/config/error.hpp"
#include "moesim/plan/layout.hpp"

namespace moesim::search {

using Json = nlohmann::ordered_json;

namespace {

template <typename T>
std::vector<T> with(std::vector<T> values, const T& also) {
  if (std::find(values.begin(), values.end(), also) == values.end()) values.push_back(also);
  return values;
}

template <typename T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Powers of two from 1 to `max` that divide `divisor` (0: no divisibility asked).
std::vector<int> powers_of_two(int max, int divisor) {
  std::vector<int> out;
  for (int v = 1; v <= max; v *= 2)
    if (divisor == 0 || divisor % v == 0) out.push_back(v);
  return out;
}

// Whether a module can be recomputed on this model (Megatron refuses mla_up_proj without MLA
// and moe_act without routed experts).
bool applies(const std::string& module, const ModelSpec& m) {
  if (module == "mla_up_proj") return m.attention.kind == "mla";
  if (module == "moe_act") return m.moe.experts > 0;
  return true;
}

// The recompute sets practice uses, from none to everything but full-layer recompute: none,
// the expert activation (cheapest to redo, large to keep), MLA's up-projections, and the dense
// MLPs; plus the base's own set.
std::vector<std::vector<std::string>> default_recompute(const Scenario& base) {
  const std::vector<std::vector<std::string>> ladder = {
      {}, {"moe_act"}, {"mla_up_proj", "moe_act"}, {"mla_up_proj", "mlp", "moe_act"}};
  std::vector<std::vector<std::string>> out;
  for (const auto& set : ladder) {
    std::vector<std::string> kept;
    for (const std::string& m : set)
      if (applies(m, base.model)) kept.push_back(m);
    if (std::find(out.begin(), out.end(), kept) == out.end()) out.push_back(kept);
  }
  return with(out, sorted(base.recipe.recompute));
}

std::vector<bool> both_if(bool supported, bool base_value) {
  return supported ? std::vector<bool>{false, true} : std::vector<bool>{base_value};
}

bool stack_has(const StackSpec& stack, const std::string& name) {
  return std::find(stack.supports.switches.begin(), stack.supports.switches.end(), name) != stack.supports.switches.end();
}

void check_offered(const SearchSpec& spec, const std::vector<std::string>& values, const std::vector<std::string>& offered,
                   const std::string& key, const std::string& stack, const char* section = "recipe") {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::find(offered.begin(), offered.end(), values[i]) == offered.end())
      throw ConfigError(spec.file.string(), fmt::format("$.space.{}.{}[{}]", section, key, i),
                        fmt::format("a value the base scenario's stack \"{}\" offers ({}); got \"{}\"", stack,
                                    fmt::join(offered, ", "), values[i]));
}

std::size_t stages_of(const std::string& pipeline_layout) {
  return plan::expand_pipeline_layout(pipeline_layout).size();
}

}  // namespace

Space resolve_space(const SearchSpec& spec, const Scenario& base) {
  const SpaceSpec& in = spec.space;
  const LayoutSpec& l = base.layout;
  const RecipeSpec& r = base.recipe;
  const ModelSpec& m = base.model;
  Space s;
  s.layers = m.layers;
  // Tensor parallelism beyond 8 leaves the GEMMs too thin to pay for its all-gathers; it must
  // divide the attention heads.
  s.tp = in.tp.value_or(with(powers_of_two(8, m.attention.heads), l.tp));
  s.pp = in.pp.value_or(with(powers_of_two(std::min(16, m.layers), 0), l.pp));
  s.vpp = in.vpp.value_or(with(powers_of_two(8, 0), l.vpp));
  s.vpp_defaulted = !in.vpp;
  s.ep = in.ep.value_or(with(m.moe.experts > 0 ? powers_of_two(std::min(m.moe.experts, base.gpus), m.moe.experts)
                                               : std::vector<int>{1},
                             l.ep));
  // Context and expert-tensor parallelism are laid out and sized but their communication is not
  // simulated (docs/method.md, Known limits): exploring them would favour them for free.
  s.etp = in.etp.value_or(std::vector<int>{l.etp});
  s.cp = in.cp.value_or(std::vector<int>{l.cp});
  s.micro_batch = in.micro_batch.value_or(with(std::vector<int>{1, 2}, base.training.micro_batch));
  // Megatron's 1F1B (interleaved with vpp > 1) only: every other schedule takes one vpp (1 or 2)
  // and zb-h1/zb-v have no F&B pairs to overlap, so most of their combinations only break a
  // schedule rule, and adding them quintuples the space (docs/search.md). A file lists them.
  s.schedule = in.schedule.value_or(with(std::vector<std::string>{"1f1b"}, l.schedule));
  s.pipeline_layout = in.pipeline_layout.value_or(with(std::vector<std::string>{""}, l.pipeline_layout));
  for (std::size_t i = 0; i < s.pipeline_layout.size(); ++i) {
    try {
      stages_of(s.pipeline_layout[i]);
    } catch (const InfeasibleError& e) {
      throw ConfigError(spec.file.string(), fmt::format("$.space.layout.pipeline_layout[{}]", i),
                        std::string("a pipeline layout in Megatron's notation (\"\": generated); ") + e.what());
    }
  }
  s.recompute = in.recompute.value_or(default_recompute(base));
  s.ep_overlap = in.ep_overlap.value_or(both_if(stack_has(base.stack, "ep_overlap"), r.ep_overlap));
  s.delay_wgrad = in.delay_wgrad.value_or(both_if(stack_has(base.stack, "delay_wgrad"), r.delay_wgrad));
  // In moesim DeepEP and HybridEP are one mechanism (a copy per destination rank at the stack's
  // measured efficiency) and a wider CUDA graph scope only removes launch cost: searching them
  // would repeat results or always pick the widest scope. The file may still list them.
  s.dispatcher = in.dispatcher.value_or(std::vector<std::string>{r.dispatcher});
  // The base's sharding unless the file lists strategies: most stacks offer one.
  s.sharding = in.sharding.value_or(std::vector<std::string>{l.sharding});
  check_offered(spec, s.sharding, base.stack.supports.sharding, "sharding", base.stack.name, "layout");
  s.cuda_graphs = in.cuda_graphs.value_or(std::vector<std::string>{r.cuda_graphs});
  check_offered(spec, s.dispatcher, base.stack.supports.dispatchers, "dispatcher", base.stack.name);
  check_offered(spec, s.cuda_graphs, base.stack.supports.cuda_graphs, "cuda_graphs", base.stack.name);
  for (auto [name, values] : {std::pair{"ep_overlap", &s.ep_overlap}, {"delay_wgrad", &s.delay_wgrad}})
    for (std::size_t i = 0; i < values->size(); ++i)
      if ((*values)[i] && !stack_has(base.stack, name))
        throw ConfigError(spec.file.string(), fmt::format("$.space.recipe.{}[{}]", name, i),
                          fmt::format("false: the base scenario's stack \"{}\" does not have {}", base.stack.name, name));
  return s;
}

std::vector<Candidate> enumerate(const Space& s) {
  std::vector<std::size_t> layout_stages;
  for (const std::string& p : s.pipeline_layout) layout_stages.push_back(p.empty() ? 0 : stages_of(p));
  std::vector<Candidate> out;
  Candidate c;
  for (int tp : s.tp)
    for (int pp : s.pp)
      for (int vpp : s.vpp) {
        // Default vpp values: no virtual stage without a layer, and none without a pipeline
        // (Megatron's interleaved schedule needs pp > 1).
        if (s.vpp_defaulted && (1LL * pp * vpp > s.layers || (pp == 1 && vpp > 1))) continue;
        for (int ep : s.ep)
          for (int etp : s.etp)
            for (int cp : s.cp)
              for (int mb : s.micro_batch)
                for (const std::string& schedule : s.schedule)
                  for (std::size_t p = 0; p < s.pipeline_layout.size(); ++p) {
                    if (layout_stages[p] != 0 && layout_stages[p] != static_cast<std::size_t>(pp) * vpp) continue;
                    for (const auto& recompute : s.recompute)
                     for (const std::string& sharding : s.sharding)
                      for (bool overlap : s.ep_overlap)
                        for (bool delay : s.delay_wgrad)
                          for (const std::string& dispatcher : s.dispatcher)
                            for (const std::string& graphs : s.cuda_graphs) {
                              c.tp = tp, c.pp = pp, c.vpp = vpp, c.ep = ep, c.etp = etp, c.cp = cp;
                              c.micro_batch = mb;
                              c.schedule = schedule;
                              c.pipeline_layout = s.pipeline_layout[p];
                              c.sharding = sharding;
                              c.recompute = recompute;
                              c.ep_overlap = overlap, c.delay_wgrad = delay;
                              c.dispatcher = dispatcher, c.cuda_graphs = graphs;
                              out.push_back(c);
                            }
                  }
      }
  return out;
}

namespace {

// Whether enumerate() keeps (pp, vpp) before it looks at the pipeline layout.
bool keeps_stages(const Space& s, int pp, int vpp) {
  return !(s.vpp_defaulted && (1LL * pp * vpp > s.layers || (pp == 1 && vpp > 1)));
}

}  // namespace

std::uint64_t count_candidates(const Space& s) {
  using batch::saturating_add;
  using batch::saturating_multiply;
  // (pp, vpp, pipeline layout) triples: a generated layout goes with every kept (pp, vpp) pair,
  // an explicit one of S stages with the kept pairs whose product is S, found among S's
  // divisors (S is at most 2^20: plan::expand_pipeline_layout) rather than by trying every pair.
  std::uint64_t kept_pairs = 0;
  if (s.vpp_defaulted) {
    for (int pp : s.pp)
      for (int vpp : s.vpp) kept_pairs += keeps_stages(s, pp, vpp) ? 1 : 0;
  } else {
    kept_pairs = saturating_multiply(s.pp.size(), s.vpp.size());
  }
  const std::set<int> pps(s.pp.begin(), s.pp.end()), vpps(s.vpp.begin(), s.vpp.end());
  std::uint64_t stage_choices = 0;
  for (const std::string& layout : s.pipeline_layout) {
    const std::size_t stages = layout.empty() ? 0 : stages_of(layout);
    if (stages == 0) {
      stage_choices = saturating_add(stage_choices, kept_pairs);
      continue;
    }
    const auto pair_kept = [&](std::size_t pp, std::size_t vpp) {
      return pps.count(static_cast<int>(pp)) && vpps.count(static_cast<int>(vpp)) &&
             keeps_stages(s, static_cast<int>(pp), static_cast<int>(vpp));
    };
    for (std::size_t d = 1; d * d <= stages; ++d) {
      if (stages % d != 0) continue;
      stage_choices += pair_kept(d, stages / d) ? 1 : 0;
      if (d * d != stages) stage_choices += pair_kept(stages / d, d) ? 1 : 0;
    }
  }
  std::uint64_t n = stage_choices;
  for (std::size_t size : {s.tp.size(), s.ep.size(), s.etp.size(), s.cp.size(), s.micro_batch.size(),
                           s.schedule.size(), s.recompute.size(), s.sharding.size(), s.ep_overlap.size(), s.delay_wgrad.size(),
                           s.dispatcher.size(), s.cuda_graphs.size()})
    n = saturating_multiply(n, size);
  return n;
}

std::string axis_sizes(const Space& s) {
  const std::vector<std::pair<const char*, std::size_t>> axes = {
      {"tp", s.tp.size()},           {"pp", s.pp.size()},
      {"vpp", s.vpp.size()},         {"ep", s.ep.size()},
      {"etp", s.etp.size()},         {"cp", s.cp.size()},
      {"micro_batch", s.micro_batch.size()}, {"schedule", s.schedule.size()},
      {"pipeline_layout", s.pipeline_layout.size()}, {"sharding", s.sharding.size()},
      {"recompute", s.recompute.size()},
      {"ep_overlap", s.ep_overlap.size()},   {"delay_wgrad", s.delay_wgrad.size()},
      {"dispatcher", s.dispatcher.size()},   {"cuda_graphs", s.cuda_graphs.size()}};
  std::vector<std::string> varied;  // an axis of one value multiplies nothing
  for (const auto& [name, size] : axes)
    if (size > 1) varied.push_back(fmt::format("{} {}", name, size));
  return varied.empty() ? "every axis one value" : fmt::format("{}", fmt::join(varied, ", "));
}

Candidate reference_candidate(const Scenario& base) {
  Candidate c;
  const LayoutSpec& l = base.layout;
  c.tp = l.tp, c.pp = l.pp, c.vpp = l.vpp, c.ep = l.ep, c.etp = l.etp, c.cp = l.cp;
  c.micro_batch = base.training.micro_batch;
  c.schedule = l.schedule;
  c.pipeline_layout = l.pipeline_layout;
  c.sharding = l.sharding;
  c.recompute = sorted(base.recipe.recompute);
  c.ep_overlap = base.recipe.ep_overlap, c.delay_wgrad = base.recipe.delay_wgrad;
  c.dispatcher = base.recipe.dispatcher, c.cuda_graphs = base.recipe.cuda_graphs;
  return c;
}

void apply(const Candidate& c, Scenario& s) {
  LayoutSpec& l = s.layout;
  l.tp = c.tp, l.pp = c.pp, l.vpp = c.vpp, l.ep = c.ep, l.etp = c.etp, l.cp = c.cp;
  l.dp = 0;
  l.schedule = c.schedule;
  l.pipeline_layout = c.pipeline_layout;
  l.sharding = c.sharding;
  s.training.micro_batch = c.micro_batch;
  s.recipe.recompute = c.recompute;
  s.recipe.ep_overlap = c.ep_overlap, s.recipe.delay_wgrad = c.delay_wgrad;
  s.recipe.dispatcher = c.dispatcher, s.recipe.cuda_graphs = c.cuda_graphs;
}

sweep::FieldValues patches(const Candidate& c) {
  return {{"layout.tp", c.tp},
          {"layout.pp", c.pp},
          {"layout.vpp", c.vpp},
          {"layout.ep", c.ep},
          {"layout.etp", c.etp},
          {"layout.cp", c.cp},
          {"layout.dp", 0},
          {"layout.schedule", c.schedule},
          {"layout.pipeline_layout", c.pipeline_layout},
          {"layout.sharding", c.sharding},
          {"training.micro_batch", c.micro_batch},
          {"recipe.recompute", c.recompute},
          {"recipe.ep_overlap", c.ep_overlap},
          {"recipe.delay_wgrad", c.delay_wgrad},
          {"recipe.dispatcher", c.dispatcher},
          {"recipe.cuda_graphs", c.cuda_graphs}};
}

Json layout_json(const Candidate& c) {
  Json j;
  j["tp"] = c.tp;
  j["pp"] = c.pp;
  j["vpp"] = c.vpp;
  j["ep"] = c.ep;
  j["etp"] = c.etp;
  j["cp"] = c.cp;
  j["micro_batch"] = c.micro_batch;
  j["schedule"] = c.schedule;
  j["pipeline_layout"] = c.pipeline_layout;
  j["sharding"] = c.sharding;
  return j;
}

Json recipe_json(const Candidate& c) {
  Json j;
  j["recompute"] = c.recompute;
  j["ep_overlap"] = c.ep_overlap;
  j["delay_wgrad"] = c.delay_wgrad;
  j["dispatcher"] = c.dispatcher;
  j["cuda_graphs"] = c.cuda_graphs;
  return j;
}

Candidate candidate_from_json(const Json& layout, const Json& recipe) {
  Candidate c;
  c.tp = layout.at("tp").get<int>();
  c.pp = layout.at("pp").get<int>();
  c.vpp = layout.at("vpp").get<int>();
  c.ep = layout.at("ep").get<int>();
  c.etp = layout.at("etp").get<int>();
  c.cp = layout.at("cp").get<int>();
  c.micro_batch = layout.at("micro_batch").get<int>();
  c.schedule = layout.at("schedule").get<std::string>();
  c.pipeline_layout = layout.at("pipeline_layout").get<std::string>();
  c.sharding = layout.value("sharding", std::string("optimizer"));  // (result files before the axis)
  c.recompute = recipe.at("recompute").get<std::vector<std::string>>();
  c.ep_overlap = recipe.at("ep_overlap").get<bool>();
  c.delay_wgrad = recipe.at("delay_wgrad").get<bool>();
  c.dispatcher = recipe.at("dispatcher").get<std::string>();
  c.cuda_graphs = recipe.at("cuda_graphs").get<std::string>();
  return c;
}

std::string describe(const Candidate& c) {
  std::string out = fmt::format("TP{} PP{} VPP{} EP{}", c.tp, c.pp, c.vpp, c.ep);
  if (c.etp > 1) out += fmt::format(" ETP{}", c.etp);
  if (c.cp > 1) out += fmt::format(" CP{}", c.cp);
  out += fmt::format(" mbs{}", c.micro_batch);
  if (c.schedule != "1f1b") out += " " + c.schedule;
  if (!c.pipeline_layout.empty()) out += " layout " + c.pipeline_layout;
  if (c.sharding != "optimizer") out += " " + c.sharding;
  std::vector<std::string> recipe;
  if (c.ep_overlap) recipe.push_back("ep_overlap");
  if (c.delay_wgrad) recipe.push_back("delay_wgrad");
  recipe.push_back(c.recompute.empty() ? "no recompute" : fmt::format("recompute {}", fmt::join(c.recompute, "+")));
  return fmt::format("{}; {}", out, fmt::join(recipe, ", "));
}

}  // namespace moesim::search
