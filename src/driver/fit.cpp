// "Fits if ...": modified scenarios, their memory, and the fitting ones simulated.
#include "moesim/driver/fit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "moesim/config/error.hpp"

namespace moesim::driver {

namespace {

struct Variant {
  std::string change;
  Scenario scenario;
};

// Megatron's recompute modules that apply to the model, in increasing recompute cost: the
// output-discarding ones re-run element-wise work or small GEMMs, the checkpointing ones whole
// modules.
std::vector<std::string> recompute_candidates(const Scenario& s) {
  if (s.recipe.recomputes("full")) return {};
  const ModelSpec& m = s.model;
  const bool moe = m.moe.experts > 0;
  const bool has_dense_ffn = !moe || m.moe.first_dense_layers > 0;
  std::vector<std::string> out;
  auto offer = [&](const char* module, bool applies) {
    if (applies && !s.recipe.recomputes(module)) out.push_back(module);
  };
  offer("moe_act", moe);
  offer("layernorm", true);
  offer("mla_up_proj", m.attention.kind == "mla");
  offer("core_attn", true);
  offer("shared_experts", moe && m.moe.shared_ffn > 0);
  offer("mlp", has_dense_ffn);
  offer("moe", moe);
  return out;
}

std::string joined(const std::vector<std::string>& modules) {
  std::string out;
  for (const auto& m : modules) out += (out.empty() ? "" : ", ") + m;
  return out;
}

Scenario with_recompute(const Scenario& s, const std::vector<std::string>& added) {
  Scenario v = s;
  for (const auto& m : added) v.recipe.recompute.push_back(m);
  return v;
}

// Layout changes; a generated pipeline layout replaces a given one that no longer matches.
std::vector<Variant> layout_variants(const Scenario& s) {
  std::vector<Variant> out;
  Scenario pp = s;
  pp.layout.pp *= 2;
  pp.layout.dp = 0;
  pp.layout.pipeline_layout.clear();
  std::string change = fmt::format("pp {} -> {}", s.layout.pp, pp.layout.pp);
  // Half as many ranks per stage: expert parallelism shrinks with them when it spanned them all.
  const int per_stage = s.gpus / pp.layout.pp;
  if (s.layout.ep * s.layout.etp > per_stage && per_stage % s.layout.etp == 0) {
    pp.layout.ep = per_stage / s.layout.etp;
    change += fmt::format(", ep {} -> {}", s.layout.ep, pp.layout.ep);
  }
  out.push_back({change + " (generated pipeline layout)", pp});
  if (s.model.moe.experts > 0) {
    Scenario ep = s;
    ep.layout.ep *= 2;
    out.push_back({fmt::format("ep {} -> {}", s.layout.ep, ep.layout.ep), ep});
  }
  return out;
}

// Every smaller micro-batch, largest first (memory falls with it, throughput usually too): halving
// alone skipped 1 from 4 when 2 did not fit. Those whose layout cannot be built (the global batch
// not a multiple of micro-batch x DP) are skipped by measure().
std::vector<Variant> micro_batch_variants(const Scenario& s) {
  std::vector<Variant> out;
  for (int smaller = s.training.micro_batch - 1; smaller >= 1; --smaller) {
    Scenario mb = s;
    mb.training.micro_batch = smaller;
    out.push_back({fmt::format("micro_batch {} -> {}", s.training.micro_batch, smaller), mb});
  }
  return out;
}

// Memory of a variant; false when its layout cannot be built.
bool measure(const Variant& v, FitCandidate& c) {
  plan::Layout l;
  try {
    l = plan::make_layout(v.scenario);
  } catch (const InfeasibleError&) {
    return false;
  }
  const auto memory = plan::memory_per_stage(v.scenario, l);
  const plan::MemoryBreakdown& peak = plan::peak_rank(memory);
  c.change = v.change;
  c.peak_bytes = peak.total_bytes();
  c.usable_bytes = peak.usable_bytes;
  c.fits = peak.fits();
  return true;
}

}  // namespace

FitReport suggest_fits(const Scenario& s, const RunOptions& options) {
  FitReport report;
  report.tflops_per_gpu = run_scenario(s, options).metrics.tflops_per_gpu;
  auto consider = [&](const Variant& v) {
    FitCandidate c;
    if (!measure(v, c)) return false;
    if (c.fits) {
      c.tflops_per_gpu = run_scenario(v.scenario, options).metrics.tflops_per_gpu;
      report.fitting.push_back(c);
    } else {
      report.not_fitting.push_back(c);
    }
    return c.fits;
  };

  // Recompute: each module alone; when none suffices alone, accumulate them cheapest first
  // until the layout fits; then full recompute as the last resort.
  const std::vector<std::string> modules = recompute_candidates(s);
  bool one_fits = false;
  for (const auto& m : modules) one_fits |= consider({"recompute + " + m, with_recompute(s, {m})});
  if (!one_fits && !s.recipe.recomputes("full")) {
    bool fits = false;
    for (size_t n = 2; n <= modules.size() && !fits; ++n) {
      const std::vector<std::string> first(modules.begin(), modules.begin() + n);
      fits = consider({"recompute + " + joined(first), with_recompute(s, first)});
    }
    if (!fits) {
      Scenario full = s;
      full.recipe.recompute = {"full"};
      consider({"recompute full", full});
    }
  }
  for (const auto& v : layout_variants(s)) consider(v);
  // The largest smaller micro-batch that fits is simulated; the smaller ones fit too, and are
  // not simulated (each would cost a run).
  for (const auto& v : micro_batch_variants(s))
    if (consider(v)) break;
  report.not_tried.push_back(
      "optimizer offload to the CPU (Megatron's --optimizer-cpu-offload): its host transfers and CPU Adam are not "
      "modelled");
  std::stable_sort(report.fitting.begin(), report.fitting.end(),
                   [](const auto& a, const auto& b) { return a.tflops_per_gpu > b.tflops_per_gpu; });
  return report;
}

}  // namespace moesim::driver
