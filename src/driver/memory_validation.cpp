// The memory section of docs/validation.md.
#include "moesim/driver/memory_validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "moesim/config/loader.hpp"
#include "moesim/driver/validate.hpp"
#include "moesim/model/params.hpp"
#include "moesim/plan/memory.hpp"

namespace moesim::driver {

namespace {

std::string recompute_list(const RecipeSpec& r) {
  std::string out;
  for (const auto& m : r.recompute) out += (out.empty() ? "" : ", ") + m;
  return out.empty() ? "none" : out;
}

// moesim's weights + gradients + optimizer states under the estimator's assumptions.
double moesim_static_bytes(const Scenario& s, const plan::Layout& l) {
  Scenario bf16 = s;
  bf16.training.precision = Precision::bf16;
  bf16.recipe.main_grad_dtype = "fp32";
  bf16.recipe.adam_moment_dtype = "fp32";
  double most = 0;
  for (int p = 0; p < l.pp; ++p) {
    const plan::MemoryBreakdown m = plan::rank_memory(bf16, l, p);
    most = std::max(most, m.weights_bytes + m.gradients_bytes + m.optimizer_bytes);
  }
  return most;
}

}  // namespace

bool MeasuredMemory::within() const { return std::abs(relative_error()) <= tolerance; }

double megatron_estimator_weight_and_optimizer_bytes(const Scenario& s, const plan::Layout& l) {
  const ModelSpec& m = s.model;
  const double h = m.hidden;
  const model::LayerParams dense = model::layer_params(m, false);
  const model::LayerParams moe = model::layer_params(m, true);
  int moe_layers = 0;
  for (int i = 0; i < m.layers; ++i) moe_layers += model::is_moe_layer(m, i) ? 1 : 0;
  const int dense_layers = m.layers - moe_layers;
  const int mtp = s.training.mtp_layers;
  const bool mtp_moe = m.moe.experts > 0;
  // Parameters by how a rank holds them: tensor-parallel, replicated, expert-parallel.
  const double tp_block = (dense.attention + dense.dense_ffn) * dense_layers + (moe.attention + moe.shared_experts) * moe_layers;
  const double replicated_block = dense.norms * dense_layers + (moe.norms + moe.router) * moe_layers + h;
  const double expert_block = moe.expert_each * m.moe.experts * moe_layers;
  const model::LayerParams& mtp_layer = mtp_moe ? moe : dense;
  const double tp_mtp = mtp * (mtp_layer.attention + mtp_layer.dense_ffn + mtp_layer.shared_experts);
  const double replicated_mtp = mtp * (mtp_layer.norms + mtp_layer.router);
  const double expert_mtp = mtp * (mtp_moe ? moe.expert_each * m.moe.experts : 0);
  const double embedding = static_cast<double>(m.vocab) * h;
  // The estimator's most loaded shard: 1/pp of the layers, the MTP block and one embedding.
  const double tp_shard = (tp_block / l.pp + tp_mtp + embedding) / l.tp;
  const double replicated_shard = replicated_block / l.pp + replicated_mtp;
  const double expert_shard = (expert_block / l.pp + expert_mtp) / (l.etp * l.ep);
  // Distributed optimizer: 6 bytes per parameter (BF16 weight, FP32 gradient) and 12 sharded.
  auto bytes_per_param = [](int shards) { return 6.0 + 12.0 / shards; };
  return (tp_shard + replicated_shard) * bytes_per_param(l.dp) + expert_shard * bytes_per_param(l.edp);
}

MemoryValidation validate_memory(const std::vector<ValidationRow>& runs, const std::filesystem::path& memory_dir,
                                 const RunOptions& options) {
  MemoryValidation v;
  for (const auto& r : runs) {
    const plan::MemoryBreakdown& peak = plan::peak_rank(r.result.memory);
    v.runs.push_back({r.published.id, recompute_list(r.result.scenario.recipe), peak.pp_rank,
                      plan::peak_moment(r.result.layout, peak.pp_rank), peak.total_bytes(), peak.usable_bytes,
                      r.result.fits_in_memory});
    v.estimator.push_back({r.published.id, megatron_estimator_weight_and_optimizer_bytes(r.result.scenario, r.result.layout),
                           moesim_static_bytes(r.result.scenario, r.result.layout)});
  }
  if (!std::filesystem::is_directory(memory_dir)) return v;
  for (const auto& f : published_scenarios(memory_dir)) {
    const Scenario s = config::load_scenario(f, config::LoadOptions{options.configs_dir, options.calibration_overlays});
    if (!s.published || s.published->peak_memory_bytes <= 0) continue;
    const plan::Layout l = plan::make_layout(s);
    MeasuredMemory m;
    m.id = s.published->id;
    m.source = s.published->source;
    m.scenario_file = f.filename().string();
    m.published_bytes = s.published->peak_memory_bytes;
    m.simulated_bytes = plan::peak_rank(plan::memory_per_stage(s, l)).total_bytes();
    m.tolerance = kValidationTolerance;  // the project's one tolerance, decided before any result
    v.measured.push_back(m);
  }
  return v;
}

std::string memory_validation_markdown(const MemoryValidation& m) {
  std::string out =
      "\n## Memory\n\n"
      "Peak memory per GPU of every published run, each with only the recompute its own recipe states "
      "(the largest pipeline rank; when in the schedule it peaks; `moesim plan` shows the tensors):\n\n"
      "| scenario | recompute | peak rank | when | peak GB | usable GB | fits |\n|---|---|---:|---|---:|---:|---|\n";
  for (const auto& r : m.runs)
    out += fmt::format("| {} | {} | pp{} | {} | {:.1f} | {:.1f} | {} |\n", r.id, r.recompute, r.peak_rank, r.moment,
                       r.peak_bytes / 1e9, r.usable_bytes / 1e9, r.fits ? "yes" : "**no**");
  if (!m.measured.empty()) {
    out += "\nMeasured peak memory (max allocated) of published runs, `scenarios/memory/`:\n\n"
           "| run | source | published GB | moesim GB | error | tolerance | status |\n"
           "|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& r : m.measured)
      out += fmt::format("| {} | {} | {:.1f} | {:.1f} | {:+.1f} % | ±{:.0f} % | {} |\n", r.id, r.source,
                         r.published_bytes / 1e9, r.simulated_bytes / 1e9, 100 * r.relative_error(),
                         100 * r.tolerance, r.within() ? "ok" : "**outside**");
  }
  out += fmt::format(
      "\nWeights, gradients and optimizer states against Megatron-LM's estimator "
      "(`megatron/training/theoretical_memory_usage.py`: BF16 weights, FP32 gradients, FP32 master weights and Adam "
      "moments, distributed optimizer; its most loaded shard holds 1/pp of the layers, the MTP block and an embedding, "
      "moesim's largest rank holds what its pipeline layout gives it), tolerance ±{:.0f} %:\n\n"
      "| scenario | estimator GB | moesim GB | difference |\n|---|---:|---:|---:|\n",
      100 * MemoryValidation::kEstimatorTolerance);
  for (const auto& e : m.estimator)
    out += fmt::format("| {} | {:.1f} | {:.1f} | {:+.1f} %{} |\n", e.id, e.estimator_bytes / 1e9, e.moesim_bytes / 1e9,
                       100 * e.relative_difference(),
                       std::abs(e.relative_difference()) <= MemoryValidation::kEstimatorTolerance ? "" : " **outside**");
  return out;
}

}  // namespace moesim::driver
