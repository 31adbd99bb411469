// The shared fit (moesim/calibrate/fit.hpp): choosing the keys each table moves, fitting them
// together, and reporting what moved.
#include "moesim/calibrate/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "moesim/calibrate/least_squares.hpp"
#include "moesim/config/calibration_overlay.hpp"
#include "moesim/util/json_path.hpp"

namespace moesim::calibrate {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A parameter "moves" a row when a 10 % (bandwidth) or max(10 %, 1 us) (fixed cost) change of it
// changes that row's time by more than this (as a log ratio).
constexpr double kMoves = 0.01;

double error_pct(double model_us, double measured_us) { return (model_us / measured_us - 1) * 100; }

double rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return v.empty() ? 0 : std::sqrt(s / static_cast<double>(v.size()));
}

// The mean effect of a parameter's change over the smallest or largest third of the rows.
double mean_effect(const std::vector<double>& effect, const MeasuredTable& t, bool largest) {
  std::vector<std::size_t> order(t.rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.rows[a].size_bytes < t.rows[b].size_bytes; });
  const std::size_t n = std::max<std::size_t>(1, order.size() / 3);
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += effect[order[largest ? order.size() - 1 - k : k]];
  return sum / static_cast<double>(n);
}

}  // namespace

json layered_overrides(const std::vector<Candidate>& keys, const std::vector<double>& values) {
  json o = json::object();
  for (std::size_t i = 0; i < keys.size(); ++i) util::dotted_slot(o, keys[i].layer + "." + keys[i].key) = values[i];
  return o;
}

Calibration fit_tables(const std::string& system, const std::vector<MeasuredTable>& tables) {
  Calibration c;
  c.system = system;
  std::vector<Pricing> before;
  for (const MeasuredTable& t : tables) before.push_back(t.price(json::object()));

  // Each table's bandwidth term and fixed cost: the candidates that move its rows most.
  std::vector<Candidate> chosen;
  std::map<std::string, FittedParameter> fitted;
  for (std::size_t ti = 0; ti < tables.size(); ++ti) {
    const MeasuredTable& t = tables[ti];
    // The bandwidth term and the fixed cost that move the table most. A rate is probed 10 % down
    // and up: where two limits tie (an SM rate and the link), only the slower side shows which binds.
    std::vector<std::vector<double>> effects;
    std::vector<const Candidate*> best(2, nullptr);
    double best_score[2] = {kMoves, kMoves};
    std::map<const Candidate*, int> informing;
    for (const Candidate& cand : t.candidates) {
      std::vector<double> effect(t.rows.size(), 0.0);
      const std::vector<double> probes = cand.term == Term::bandwidth
                                             ? std::vector<double>{cand.bundled * 0.9, cand.bundled * 1.1}
                                             : std::vector<double>{cand.bundled + std::max(0.1 * cand.bundled, 1.0)};
      for (double probe : probes) {
        const Pricing moved = t.price(layered_overrides({cand}, {std::clamp(probe, cand.lower, cand.upper)}));
        for (std::size_t i = 0; i < effect.size(); ++i)
          effect[i] = std::max(effect[i], std::abs(std::log(moved.seconds[i] / before[ti].seconds[i])));
      }
      for (double e : effect) informing[&cand] += e > kMoves ? 1 : 0;
      const std::size_t slot = cand.term == Term::bandwidth ? 0 : 1;
      const double score = mean_effect(effect, t, cand.term == Term::bandwidth);
      if (score > best_score[slot]) best[slot] = &cand, best_score[slot] = score;
      effects.push_back(std::move(effect));
    }
    // Rows of different kinds: each row also gets the key that moves it most among those not
    // chosen yet (the FP8 dispatch's SM law where the BF16 one took the link).
    for (std::size_t i = 0; t.rows_differ_in_kind && i < t.rows.size(); ++i) {
      const Candidate* row_best = nullptr;
      double row_score = kMoves;
      for (std::size_t k = 0; k < t.candidates.size(); ++k)
        if (effects[k][i] > row_score && std::find(best.begin(), best.end(), &t.candidates[k]) == best.end())
          row_best = &t.candidates[k], row_score = effects[k][i];
      if (row_best) best.push_back(row_best);
    }
    if (std::none_of(best.begin(), best.end(), [](const Candidate* c) { return c != nullptr; }))
      c.warnings.push_back(fmt::format("{}: no parameter of {} moves these times; nothing fitted to them", t.file,
                                       system));
    for (std::size_t k = 0; k < best.size(); ++k) {
      const Candidate* cand = best[k];
      if (!cand || std::find(best.begin(), best.begin() + k, cand) != best.begin() + k) continue;  // once per table
      FittedParameter& p = fitted[cand->name()];
      if (p.key.empty()) {
        p.key = cand->name();
        p.layer = cand->layer;
        p.layer_key = cand->key;
        p.bundled = cand->bundled;
        chosen.push_back(*cand);
      }
      p.informing_sizes += informing[cand];
      if (std::find(p.files.begin(), p.files.end(), t.file) == p.files.end()) p.files.push_back(t.file);
    }
  }

  // All tables' log ratios together: one value per parameter, whatever table it was chosen for.
  std::vector<BoundedParameter> start;
  for (const Candidate& cand : chosen)
    start.push_back({cand.bundled, cand.lower, cand.upper, cand.term == Term::bandwidth});
  const Residuals residuals = [&](const std::vector<double>& values) {
    std::vector<double> r;
    const json o = layered_overrides(chosen, values);
    for (const MeasuredTable& t : tables) {
      const Pricing p = t.price(o);
      for (std::size_t i = 0; i < t.rows.size(); ++i) r.push_back(std::log(p.seconds[i] * 1e6 / t.rows[i].measured_us));
    }
    return r;
  };
  const LeastSquaresResult fit = least_squares(residuals, start);
  const json after_overrides = layered_overrides(chosen, fit.values);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    FittedParameter& p = fitted[chosen[i].name()];
    p.fitted = fit.values[i];
    c.parameters.push_back(p);
    if (p.fitted <= chosen[i].lower || p.fitted >= chosen[i].upper)
      c.warnings.push_back(fmt::format("{} stopped at the end of its range ({}): the measurements ask for more than "
                                       "this mechanism can give; another one binds (docs/calibration.md)",
                                       p.key, p.fitted));
    if (p.informing_sizes < kMinInformingSizes)
      c.warnings.push_back(fmt::format("{} rests on {} measured row{} (fewer than {}): measure more sizes or kinds where it "
                                       "binds",
                                       p.key, p.informing_sizes, p.informing_sizes == 1 ? "" : "s",
                                       kMinInformingSizes));
  }

  for (std::size_t ti = 0; ti < tables.size(); ++ti) {
    const MeasuredTable& t = tables[ti];
    const Pricing after = t.price(after_overrides);
    TableFit f{t.file, t.heading, t.what_column, t.note_column, t.details, {}, 0, 0, 0};
    std::vector<double> errors_before, errors_after;
    std::vector<std::string> off;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const MeasuredRow& m = t.rows[i];
      const FitRow row{m.what, m.size_bytes, m.line, m.measured_us, before[ti].seconds[i] * 1e6,
                       after.seconds[i] * 1e6, before[ti].notes[i], after.notes[i]};
      errors_before.push_back(error_pct(row.before_us, row.measured_us));
      errors_after.push_back(error_pct(row.after_us, row.measured_us));
      if (std::abs(errors_after.back()) > kMaxResidualPct) off.push_back(row.what);
      f.max_error_after_pct = std::max(f.max_error_after_pct, std::abs(errors_after.back()));
      f.rows.push_back(row);
    }
    f.rms_error_before_pct = rms(errors_before);
    f.rms_error_after_pct = rms(errors_after);
    if (!off.empty())
      c.warnings.push_back(fmt::format("{}: {} of {} rows stay more than {:.0f} % off after the fit (up to {:.1f} %; "
                                       "the first: {}): moesim's model does not follow this table there",
                                       t.file, off.size(), t.rows.size(), kMaxResidualPct, f.max_error_after_pct,
                                       off.front()));
    c.tables.push_back(std::move(f));
  }
  return c;
}

ordered_json overlay_json(const Calibration& c) {
  ordered_json layers = ordered_json::object(), fits = ordered_json::array();
  for (const FittedParameter& p : c.parameters) {
    ordered_json& layer = layers[p.layer];
    util::dotted_slot(layer, p.layer_key) = p.fitted;
    // A key of the system's GPU sits in a reference of its own, with its own sources.
    const bool gpu = p.layer == "system" && p.layer_key.rfind("gpu.", 0) == 0;
    (gpu ? layer["gpu"] : layer)["sources"][gpu ? p.layer_key.substr(4) : p.layer_key] =
        fmt::format("moesim calibrate: least squares over {} ({} measured rows move it); the bundled value was {:.6g}",
                    fmt::join(p.files, ", "), p.informing_sizes, p.bundled);
  }
  // Sources last in each object that has them.
  const auto sources_last = [](ordered_json& object) {
    if (!object.contains("sources")) return;
    ordered_json sources = object["sources"];
    object.erase("sources");
    object["sources"] = sources;
  };
  // "dispatchers.deepep" -> {"dispatchers": {"deepep": ...}}.
  ordered_json overrides = ordered_json::object();
  for (auto& [name, layer] : layers.items()) {
    if (layer.contains("gpu")) sources_last(layer["gpu"]);
    sources_last(layer);
    util::dotted_slot(overrides, name) = layer;
  }
  for (const TableFit& t : c.tables) {
    ordered_json rows = ordered_json::array();
    for (const FitRow& r : t.rows) {
      ordered_json row = {{"measured", r.what}};
      if (r.size_bytes > 0) row["size_bytes"] = r.size_bytes;
      row.update(ordered_json{{"line", r.line},
                              {"measured_us", r.measured_us},
                              {"bundled_us", r.before_us},
                              {"calibrated_us", r.after_us},
                              {"error_bundled_pct", error_pct(r.before_us, r.measured_us)},
                              {"error_calibrated_pct", error_pct(r.after_us, r.measured_us)}});
      if (!t.note_column.empty())
        row.update(ordered_json{{t.note_column + "_bundled", r.note_before}, {t.note_column + "_calibrated", r.note_after}});
      rows.push_back(row);
    }
    ordered_json fit = t.details;
    fit["rms_error_bundled_pct"] = t.rms_error_before_pct;
    fit["rms_error_calibrated_pct"] = t.rms_error_after_pct;
    fit["rows"] = rows;
    fits.push_back(fit);
  }
  ordered_json parameters = ordered_json::array();
  for (const FittedParameter& p : c.parameters)
    parameters.push_back({{"key", p.key}, {"bundled", p.bundled}, {"fitted", p.fitted},
                          {"informing_sizes", p.informing_sizes}});
  return {{"moesim_calibration", config::kCalibrationFormat},
          {"about", "A calibration overlay written by moesim calibrate (docs/calibration.md): layered over "
                    "the system it names by --calibration"},
          {"system", c.system},
          {"overrides", overrides},
          {"parameters", parameters},
          {"warnings", c.warnings},
          {"fits", fits}};
}

std::string calibration_text(const Calibration& c) {
  std::string out = fmt::format("Calibrating {} from {} measured table{}\n", c.system, c.tables.size(),
                                c.tables.size() == 1 ? "" : "s");
  std::size_t width = 0;
  for (const FittedParameter& p : c.parameters) width = std::max(width, p.key.size());
  for (const FittedParameter& p : c.parameters)
    out += fmt::format("  {:<{}} {:>10.4g} -> {:<10.4g} ({} row{} move{} it)\n", p.key, width, p.bundled, p.fitted,
                       p.informing_sizes, p.informing_sizes == 1 ? "" : "s", p.informing_sizes == 1 ? "s" : "");
  if (c.parameters.empty()) out += "  nothing fitted\n";
  for (const TableFit& t : c.tables) {
    out += fmt::format("\n{}: {}: RMS error {:.1f} % bundled, {:.1f} % calibrated\n", t.file, t.heading,
                       t.rms_error_before_pct, t.rms_error_after_pct);
    out += fmt::format("  {:>26} {:>6} {:>12} {:>12} {:>8} {:>12} {:>8}{}\n", t.what_column, "line", "measured us",
                       "bundled us", "error", "calibrated", "error",
                       t.note_column.empty() ? "" : "  " + t.note_column + " (calibrated)");
    for (const FitRow& r : t.rows)
      out += fmt::format("  {:>26} {:>6} {:>12.2f} {:>12.2f} {:>+7.1f}% {:>12.2f} {:>+7.1f}%{}\n", r.what, r.line,
                         r.measured_us, r.before_us, error_pct(r.before_us, r.measured_us), r.after_us,
                         error_pct(r.after_us, r.measured_us), r.note_after.empty() ? "" : "  " + r.note_after);
  }
  if (!c.warnings.empty()) {
    out += "\nWarnings:\n";
    for (const std::string& w : c.warnings) out += "  " + w + "\n";
  }
  return out;
}

}  // namespace moesim::calibrate
