// Fitting NCCL parameters to nccl-tests tables (moesim/calibrate/nccl_fit.hpp).
#include "moesim/calibrate/nccl_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "moesim/calibrate/least_squares.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::calibrate {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Which part of a collective's time a parameter sets: the rate its bytes move at (seen at the
// largest sizes) or a fixed cost per call (seen at the smallest).
enum class Term { bandwidth, fixed };

struct Candidate {
  const char* key;  // under the system's "nccl"
  double NcclSpec::*field;
  Term term;
  double lower, upper;  // the schema's range
  bool fit_from_zero;   // 0 is a value of the same mechanism (not "another model")
};

// The NCCL keys of a system (configs/systems, src/config/schema_system.cpp) a table can move.
// A rate at 0 means "no such limit" or "NCCL's own model": a different mechanism, never fitted
// from there; a fixed cost at 0 is fitted only where 0 means "none" (call_overhead_us).
constexpr Candidate kCandidates[] = {
    {"nvlink_efficiency", &NcclSpec::nvlink_efficiency, Term::bandwidth, 0.01, 1, false},
    {"nvls_efficiency", &NcclSpec::nvls_efficiency, Term::bandwidth, 0.01, 1, false},
    {"net_efficiency", &NcclSpec::net_efficiency, Term::bandwidth, 0.01, 1, false},
    {"p2p_simple_channel_gbytes_per_s", &NcclSpec::p2p_simple_channel_gbytes_per_s, Term::bandwidth, 0.01, 1000, false},
    {"p2p_simple_warp_gbytes_per_s", &NcclSpec::p2p_simple_warp_gbytes_per_s, Term::bandwidth, 0.01, 1000, false},
    {"p2p_ll_channel_gbytes_per_s", &NcclSpec::p2p_ll_channel_gbytes_per_s, Term::bandwidth, 0.01, 1000, false},
    {"call_overhead_us", &NcclSpec::call_overhead_us, Term::fixed, 0, 1000, true},
    {"p2p_simple_latency_us", &NcclSpec::p2p_simple_latency_us, Term::fixed, 0, 1000, false},
    {"p2p_ll_latency_us", &NcclSpec::p2p_ll_latency_us, Term::fixed, 0, 1000, false},
    {"p2p_host_call_us", &NcclSpec::p2p_host_call_us, Term::fixed, 0, 100, false},
};

// A parameter "moves" a size when a 10 % (bandwidth) or max(10 %, 1 us) (fixed cost) change of
// it changes that size's time by more than this (as a log ratio).
constexpr double kMoves = 0.01;

struct Priced {
  std::vector<double> seconds;
  std::vector<std::string> algorithms;
};

json overrides_for(const std::vector<const Candidate*>& keys, const std::vector<double>& values) {
  json o = json::object();
  for (std::size_t i = 0; i < keys.size(); ++i) o["nccl"][keys[i]->key] = values[i];
  return o;
}

Priced price(const CalibrationTarget& target, const NcclTestsTable& t, const json& overrides) {
  driver::CollectiveRequest r;
  r.system = target.system;
  r.op = t.op;
  r.ranks = t.ranks;
  r.gpus_per_domain = target.gpus_per_domain;
  r.algo = t.algo;
  r.nccl_version = t.nccl_version;
  r.system_overrides = overrides;
  std::vector<std::string> sizes;
  for (const NcclTestsRow& row : t.rows) sizes.push_back(fmt::format("{:.0f}", row.size_bytes));
  r.sizes = fmt::format("{}", fmt::join(sizes, ","));
  Priced p;
  try {
    const driver::PlannedCollective planned = driver::plan_collective_request(r, target.configs_dir);
    for (const platform::CollectivePlan& plan : planned.plans) {
      p.seconds.push_back(plan.seconds);
      p.algorithms.push_back(fmt::format("{}/{}", platform::to_string(plan.algorithm), platform::to_string(plan.protocol)));
    }
  } catch (const driver::CollectiveOptionError& e) {
    throw ConfigError(t.file, "line 1", fmt::format("a run moesim can price on {} ({}: {})", target.system,
                                                      e.option(), e.what()));
  }
  return p;
}

double error_pct(double model_us, double measured_us) { return (model_us / measured_us - 1) * 100; }

double rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return v.empty() ? 0 : std::sqrt(s / static_cast<double>(v.size()));
}

// The mean effect of a parameter's change over the smallest or largest third of the sizes.
double mean_effect(const std::vector<double>& effect, const NcclTestsTable& t, bool largest) {
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

NcclCalibration fit_nccl_tables(const CalibrationTarget& target, const std::vector<NcclTestsTable>& tables) {
  NcclCalibration c;
  c.target = target;
  const SystemSpec system = config::load_system(target.system, target.configs_dir);
  std::vector<Priced> before;
  for (const NcclTestsTable& t : tables) before.push_back(price(target, t, json::object()));

  // Each table's bandwidth term and fixed cost: the candidates that move its sizes most.
  std::vector<const Candidate*> chosen;
  std::map<std::string, FittedParameter> fitted;
  for (std::size_t ti = 0; ti < tables.size(); ++ti) {
    const NcclTestsTable& t = tables[ti];
    const Candidate* best[2] = {nullptr, nullptr};
    double best_score[2] = {kMoves, kMoves};
    std::map<const Candidate*, int> informing;
    for (const Candidate& cand : kCandidates) {
      const double bundled = system.nccl.*cand.field;
      if (bundled == 0 && !cand.fit_from_zero) continue;
      const double probe = cand.term == Term::bandwidth ? bundled * 0.9 : bundled + std::max(0.1 * bundled, 1.0);
      const Priced moved = price(target, t, overrides_for({&cand}, {probe}));
      std::vector<double> effect(t.rows.size());
      for (std::size_t i = 0; i < effect.size(); ++i) {
        effect[i] = std::abs(std::log(moved.seconds[i] / before[ti].seconds[i]));
        if (effect[i] > kMoves) ++informing[&cand];
      }
      const int slot = cand.term == Term::bandwidth ? 0 : 1;
      const double score = mean_effect(effect, t, cand.term == Term::bandwidth);
      if (score > best_score[slot]) best[slot] = &cand, best_score[slot] = score;
    }
    if (!best[0] && !best[1])
      c.warnings.push_back(fmt::format("{}: no NCCL parameter of {} moves these times; nothing fitted to them",
                                       t.file, target.system));
    for (const Candidate* cand : best) {
      if (!cand) continue;
      FittedParameter& p = fitted[cand->key];
      if (p.key.empty()) {
        p.key = std::string("nccl.") + cand->key;
        p.bundled = system.nccl.*cand->field;
        chosen.push_back(cand);
      }
      p.informing_sizes += informing[cand];
      p.files.push_back(t.file);
    }
  }

  // All tables' log ratios together: one value per parameter, whatever table it was chosen for.
  std::vector<BoundedParameter> start;
  for (const Candidate* cand : chosen)
    start.push_back({system.nccl.*cand->field, cand->lower, cand->upper, cand->term == Term::bandwidth});
  const Residuals residuals = [&](const std::vector<double>& values) {
    std::vector<double> r;
    const json o = overrides_for(chosen, values);
    for (const NcclTestsTable& t : tables) {
      const Priced p = price(target, t, o);
      for (std::size_t i = 0; i < t.rows.size(); ++i) r.push_back(std::log(p.seconds[i] * 1e6 / t.rows[i].time_us));
    }
    return r;
  };
  const LeastSquaresResult fit = least_squares(residuals, start);
  const json after_overrides = overrides_for(chosen, fit.values);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    FittedParameter& p = fitted[chosen[i]->key];
    p.fitted = fit.values[i];
    c.parameters.push_back(p);
    if (p.fitted <= chosen[i]->lower || p.fitted >= chosen[i]->upper)
      c.warnings.push_back(fmt::format("{} stopped at the end of its range ({}): the tables ask for more than this "
                                       "mechanism can give; another one binds (docs/calibration.md)",
                                       p.key, p.fitted));
    if (p.informing_sizes < kMinInformingSizes)
      c.warnings.push_back(fmt::format("{} rests on {} measured size{} (fewer than {}): measure more sizes where it "
                                       "binds",
                                       p.key, p.informing_sizes, p.informing_sizes == 1 ? "" : "s",
                                       kMinInformingSizes));
  }

  for (std::size_t ti = 0; ti < tables.size(); ++ti) {
    const NcclTestsTable& t = tables[ti];
    const Priced after = price(target, t, after_overrides);
    TableFit f{t.file, t.op, t.algo, t.nccl_version, t.ranks, {}, 0, 0, 0};
    std::vector<double> errors_before, errors_after, off;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const FitRow row{t.rows[i].size_bytes, t.rows[i].line,       t.rows[i].time_us,         before[ti].seconds[i] * 1e6,
                       after.seconds[i] * 1e6, before[ti].algorithms[i], after.algorithms[i]};
      errors_before.push_back(error_pct(row.before_us, row.measured_us));
      errors_after.push_back(error_pct(row.after_us, row.measured_us));
      if (std::abs(errors_after.back()) > kMaxResidualPct) off.push_back(row.size_bytes);
      f.max_error_after_pct = std::max(f.max_error_after_pct, std::abs(errors_after.back()));
      f.rows.push_back(row);
    }
    f.rms_error_before_pct = rms(errors_before);
    f.rms_error_after_pct = rms(errors_after);
    if (!off.empty())
      c.warnings.push_back(fmt::format("{}: {} of {} sizes stay more than {:.0f} % off after the fit (up to {:.1f} %; "
                                       "the first at {:.0f} B): moesim's model does not follow this table there",
                                       t.file, off.size(), t.rows.size(), kMaxResidualPct, f.max_error_after_pct,
                                       off.front()));
    c.tables.push_back(std::move(f));
  }
  return c;
}

nlohmann::ordered_json overlay_json(const NcclCalibration& c) {
  ordered_json nccl = ordered_json::object(), sources = ordered_json::object(), fits = ordered_json::array();
  for (const FittedParameter& p : c.parameters) {
    const std::string key = p.key.substr(p.key.find('.') + 1);
    nccl[key] = p.fitted;
    std::vector<std::string> files = p.files;
    files.erase(std::unique(files.begin(), files.end()), files.end());
    sources[p.key] = fmt::format("moesim calibrate: least squares over the nccl-tests tables {} ({} measured sizes "
                                 "move it); the bundled value was {}",
                                 fmt::join(files, ", "), p.informing_sizes, p.bundled);
  }
  for (const TableFit& t : c.tables) {
    ordered_json rows = ordered_json::array();
    for (const FitRow& r : t.rows)
      rows.push_back({{"size_bytes", r.size_bytes},
                      {"line", r.line},
                      {"measured_us", r.measured_us},
                      {"bundled_us", r.before_us},
                      {"calibrated_us", r.after_us},
                      {"error_bundled_pct", error_pct(r.before_us, r.measured_us)},
                      {"error_calibrated_pct", error_pct(r.after_us, r.measured_us)},
                      {"algorithm_bundled", r.algorithm_before},
                      {"algorithm_calibrated", r.algorithm_after}});
    fits.push_back({{"file", t.file},
                    {"tool", "nccl-tests"},
                    {"op", t.op},
                    {"ranks", t.ranks},
                    {"gpus_per_domain", c.target.gpus_per_domain},
                    {"nccl_algo", t.algo},
                    {"nccl_version", t.nccl_version},
                    {"rms_error_bundled_pct", t.rms_error_before_pct},
                    {"rms_error_calibrated_pct", t.rms_error_after_pct},
                    {"rows", rows}});
  }
  ordered_json parameters = ordered_json::array();
  for (const FittedParameter& p : c.parameters)
    parameters.push_back({{"key", p.key}, {"bundled", p.bundled}, {"fitted", p.fitted},
                          {"informing_sizes", p.informing_sizes}});
  ordered_json overlay = {{"moesim_calibration", config::kCalibrationFormat},
                  {"about", "A calibration overlay written by moesim calibrate (docs/calibration.md): layered over "
                            "the system it names by --calibration"},
                  {"system", c.target.system},
                  {"overrides", {{"system", {{"nccl", nccl}, {"sources", sources}}}}},
                  {"parameters", parameters},
                  {"warnings", c.warnings},
                  {"fits", fits}};
  return overlay;
}

std::string calibration_text(const NcclCalibration& c) {
  std::string out = fmt::format("Calibrating {} from {} nccl-tests table{}\n", c.target.system, c.tables.size(),
                                c.tables.size() == 1 ? "" : "s");
  for (const FittedParameter& p : c.parameters)
    out += fmt::format("  {:<38} {:>10.4g} -> {:<10.4g} ({} sizes move it)\n", p.key, p.bundled, p.fitted,
                       p.informing_sizes);
  if (c.parameters.empty()) out += "  nothing fitted\n";
  for (const TableFit& t : c.tables) {
    out += fmt::format("\n{}: {}, {} ranks{}{}: RMS error {:.1f} % bundled, {:.1f} % calibrated\n", t.file, t.op,
                       t.ranks, t.algo.empty() ? "" : ", NCCL_ALGO=" + t.algo,
                       t.nccl_version.empty() ? "" : ", NCCL " + t.nccl_version, t.rms_error_before_pct,
                       t.rms_error_after_pct);
    out += fmt::format("  {:>14} {:>6} {:>12} {:>12} {:>8} {:>12} {:>8}  {}\n", "size (B)", "line", "measured us",
                       "bundled us", "error", "calibrated", "error", "algorithm (calibrated)");
    for (const FitRow& r : t.rows)
      out += fmt::format("  {:>14.0f} {:>6} {:>12.2f} {:>12.2f} {:>+7.1f}% {:>12.2f} {:>+7.1f}%  {}\n", r.size_bytes,
                         r.line, r.measured_us, r.before_us, error_pct(r.before_us, r.measured_us), r.after_us,
                         error_pct(r.after_us, r.measured_us), r.algorithm_after);
  }
  if (!c.warnings.empty()) {
    out += "\nWarnings:\n";
    for (const std::string& w : c.warnings) out += "  " + w + "\n";
  }
  return out;
}

}  // namespace moesim::calibrate
