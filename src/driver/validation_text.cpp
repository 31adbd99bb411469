// `moesim validate`'s table and JSON (docs/validation.md is validation_markdown.cpp's). The table
// is one line per finding: a gap experiment's explanation is a paragraph, so the table names the
// experiment and its verdict and points to docs/validation.md (or prints it with --explain).
#include <fmt/format.h>

#include "moesim/driver/validate.hpp"

namespace moesim::driver {

namespace {

const char* json_status(RowStatus s) {
  switch (s) {
    case RowStatus::ok: return "ok";
    case RowStatus::outside: return "outside";
    case RowStatus::fit: return "fit";
  }
  return "?";
}

// "gb300-mxfp8-2602", "gb300-mxfp8-2602, gb300-mxfp8-2604", "gb200-history-step10 and 7 more".
std::string row_list(const std::vector<std::string>& rows) {
  if (rows.size() <= 2) return fmt::format("{}", fmt::join(rows, ", "));
  return fmt::format("{} and {} more", rows.front(), rows.size() - 1);
}

}  // namespace

std::string validation_text(const Validation& v, bool explain) {
  std::string text = fmt::format("{:<28}{:>11}{:>11}{:>9}  {}\n", "run", "published", "moesim", "error", "status");
  for (const auto& r : v.runs)
    text += fmt::format("{:<28}{:>11.1f}{:>11.1f}{:>8.1f}%  {}{}\n", r.published.id, r.published.tflops_per_gpu,
                        r.simulated_tflops, 100 * r.relative_error, to_string(r.status),
                        r.fit_reason.empty() ? "" : " (" + r.fit_reason + ")");
  text += fmt::format("predicted rows inside +-{:.0f} %: {} of {}; mean |error| {:.1f} %, max {:.1f} %; signed mean {:+.1f} %\n",
                      100 * kValidationTolerance, v.predicted_inside(), v.predicted(), 100 * v.mean_abs_error(),
                      100 * v.max_abs_error(), 100 * v.mean_signed_error());
  text += fmt::format("GB200 history gains: correlation {:.2f}, RMS difference {:.3f}\n", v.history_gain_correlation,
                      v.history_gain_rms);
  for (const auto& p : v.pairs)
    text += fmt::format("GB300/GB200 {} / {}: moesim {:.3f}, published {:.3f}\n", p.gb300_id, p.gb200_id,
                        p.simulated_ratio, p.published_ratio);
  for (const auto& r : v.framework_runs)  // TorchTitan and JAX: apart, out of the statistics
    text += fmt::format("framework row {}: moesim {:.1f}, published {:.1f} {}: {:+.1f} %  {}\n", r.published.id,
                        r.simulated_tflops,
                        r.published.tflops_per_gpu > 0 ? r.published.tflops_per_gpu : r.published.tokens_per_s_per_gpu,
                        r.published.tflops_per_gpu > 0 ? "TFLOP/s per GPU" : "tokens/s per GPU", 100 * r.relative_error,
                        to_string(r.status));
  text += fmt::format("scaling {} -> {} GPUs: {:.1f} % (published {:.1f} %)\n", v.scaling.from_gpus, v.scaling.to_gpus,
                      100 * v.scaling.efficiency, 100 * v.scaling.published);
  for (std::size_t i = 0; i < v.experiments.size(); ++i) {
    const ExperimentResult& e = v.experiments[i];
    text += fmt::format("gap experiment {} of {}: {} ({}){}\n", i + 1, v.experiments.size(),
                        e.supports ? "supports" : "rejects", row_list(e.experiment.rows),
                        explain ? ":" : "; the explanation: --explain, or docs/validation.md \"Gap explanations\"");
    if (explain) text += fmt::format("  {}\n", e.experiment.explanation);
  }
  for (const auto& r : v.schedules.rows)
    text += fmt::format("{} on {}: bubble {:.2f} s (Table 2 formula {:.2f} s), {} chunks in flight (Table 2: {}), "
                        "{:.1f} GB per GPU{}\n",
                        r.schedule, v.schedules.scenario_file, r.simulated_bubble_s, r.formula_bubble_s,
                        r.inflight_chunks, r.table_activations, r.memory_bytes / 1e9, r.fits ? "" : " (does not fit)");
  return text;
}

nlohmann::ordered_json validation_json(const Validation& v) {
  using Json = nlohmann::ordered_json;
  Json out;
  out["format"] = "moesim-validation/1";
  out["tolerance"] = kValidationTolerance;
  Json rows = Json::array();
  for (const auto& r : v.runs)
    rows.push_back({{"name", r.published.id},
                    {"file", r.file},
                    {"published", r.published.tflops_per_gpu},
                    {"simulated", r.simulated_tflops},
                    {"error", r.relative_error},
                    {"status", json_status(r.status)},
                    {"fit_reason", r.fit_reason.empty() ? Json(nullptr) : Json(r.fit_reason)}});
  out["rows"] = rows;
  Json frameworks = Json::array();  // TorchTitan and JAX: apart, out of the summary
  for (const auto& r : v.framework_runs)
    frameworks.push_back({{"name", r.published.id},
                          {"file", r.file},
                          {"figure", r.published.tflops_per_gpu > 0 ? "tflops_per_gpu" : "tokens_per_s_per_gpu"},
                          {"published", r.published.tflops_per_gpu > 0 ? r.published.tflops_per_gpu
                                                                       : r.published.tokens_per_s_per_gpu},
                          {"simulated", r.simulated_tflops},
                          {"error", r.relative_error},
                          {"status", json_status(r.status)}});
  out["framework_rows"] = frameworks;
  out["summary"] = {{"predicted", v.predicted()},
                    {"predicted_inside", v.predicted_inside()},
                    {"mean_abs_error", v.mean_abs_error()},
                    {"mean_signed_error", v.mean_signed_error()},
                    {"max_abs_error", v.max_abs_error()},
                    {"passed", validation_failures(v).empty()},
                    {"failures", validation_failures(v)}};
  out["history"] = {{"gain_correlation", v.history_gain_correlation}, {"gain_rms", v.history_gain_rms}};
  Json pairs = Json::array();
  for (const auto& p : v.pairs)
    pairs.push_back({{"gb300", p.gb300_id}, {"gb200", p.gb200_id}, {"simulated_ratio", p.simulated_ratio},
                     {"published_ratio", p.published_ratio}});
  out["pairs"] = pairs;
  out["scaling"] = {{"from_gpus", v.scaling.from_gpus},
                    {"to_gpus", v.scaling.to_gpus},
                    {"efficiency", v.scaling.efficiency},
                    {"published", v.scaling.published}};
  Json experiments = Json::array();
  for (const auto& e : v.experiments) {
    Json set = Json::object();
    for (const auto& [path, value] : e.experiment.set) set[path] = value;
    experiments.push_back({{"rows", e.experiment.rows},
                           {"set", set},
                           {"supports", e.supports},
                           {"explanation", e.experiment.explanation}});
  }
  out["experiments"] = experiments;
  Json schedules = Json::array();
  for (const auto& r : v.schedules.rows)
    schedules.push_back({{"schedule", r.schedule},
                         {"simulated_bubble_s", r.simulated_bubble_s},
                         {"formula_bubble_s", r.formula_bubble_s},
                         {"inflight_chunks", r.inflight_chunks},
                         {"table_activations", r.table_activations},
                         {"memory_bytes", r.memory_bytes},
                         {"fits", r.fits}});
  out["schedules"] = schedules;
  return out;
}

std::string calibration_effect_text(const Validation& bundled, const Validation& calibrated,
                                   const std::vector<std::string>& overlays) {
  std::string text = fmt::format("\nCalibrated by {}: each row it moves, before and after\n", fmt::join(overlays, ", "));
  text += fmt::format("{:<28}{:>11}{:>11}{:>9}{:>12}{:>9}\n", "run", "published", "bundled", "error", "calibrated",
                      "error");
  int moved = 0;
  const auto rows = [](const Validation& v) {
    std::vector<const ValidationRow*> all;
    for (const auto& r : v.runs) all.push_back(&r);
    for (const auto& r : v.framework_runs) all.push_back(&r);
    return all;
  };
  const std::vector<const ValidationRow*> before = rows(bundled), after = rows(calibrated);
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const ValidationRow& b = *before[i];
    const ValidationRow& a = *after[i];
    if (b.simulated_tflops == a.simulated_tflops) continue;
    ++moved;
    text += fmt::format("{:<28}{:>11.1f}{:>11.1f}{:>8.1f}%{:>12.1f}{:>8.1f}%\n", a.published.id,
                        a.published.tflops_per_gpu > 0 ? a.published.tflops_per_gpu : a.published.tokens_per_s_per_gpu,
                        b.simulated_tflops, 100 * b.relative_error, a.simulated_tflops, 100 * a.relative_error);
  }
  if (moved == 0) text += "  no row moved: none runs on a calibrated system, or the keys it sets do not bind there\n";
  text += fmt::format("predicted rows inside +-{:.0f} %: {} of {} bundled, {} calibrated; mean |error| {:.1f} % -> "
                      "{:.1f} %\n",
                      100 * kValidationTolerance, bundled.predicted_inside(), bundled.predicted(),
                      calibrated.predicted_inside(), 100 * bundled.mean_abs_error(), 100 * calibrated.mean_abs_error());
  return text;
}

}  // namespace moesim::driver
