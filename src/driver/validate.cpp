#include "moesim/driver/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "moesim/config/loader.hpp"
#include "moesim/sweep/point.hpp"

namespace moesim::driver {

namespace fs = std::filesystem;

const char* to_string(RowStatus s) {
  switch (s) {
    case RowStatus::ok: return "ok";
    case RowStatus::outside: return "OUTSIDE";
    case RowStatus::fit: return "fit";
  }
  return "?";
}

int Validation::predicted() const {
  return static_cast<int>(std::count_if(runs.begin(), runs.end(), [](const auto& r) { return r.status != RowStatus::fit; }));
}

int Validation::predicted_inside() const {
  return static_cast<int>(std::count_if(runs.begin(), runs.end(), [](const auto& r) { return r.status == RowStatus::ok; }));
}

namespace {

// The mean of of_error(relative error) over the predicted rows (fit rows left out).
double mean_over_predicted(const Validation& v, double (*of_error)(double)) {
  double sum = 0;
  for (const auto& r : v.runs)
    if (r.status != RowStatus::fit) sum += of_error(r.relative_error);
  return v.predicted() > 0 ? sum / v.predicted() : 0;
}

}  // namespace

double Validation::mean_abs_error() const {
  return mean_over_predicted(*this, [](double e) { return std::abs(e); });
}

double Validation::mean_signed_error() const {
  return mean_over_predicted(*this, [](double e) { return e; });
}

double Validation::max_abs_error() const {
  double worst = 0;
  for (const auto& r : runs)
    if (r.status != RowStatus::fit) worst = std::max(worst, std::abs(r.relative_error));
  return worst;
}

namespace {

// What a run is, without what it is called, compared with, or where its figures come from: two
// rows whose configurations are equal are the same simulation, so a fit to one is a fit to the
// other. (An override's provenance names its file, so sources differ between equal runs.)
Scenario configuration(Scenario s) {
  s.name.clear();
  s.file.clear();
  s.published.reset();
  s.system.sources.clear();
  s.system.gpu.sources.clear();
  s.model.sources.clear();
  s.stack.sources.clear();
  s.stack.deepep.sources.clear();
  s.stack.hybridep.sources.clear();
  return s;
}

const ValidationRow* find_row(const std::vector<ValidationRow>& runs, const std::string& id) {
  for (const auto& r : runs)
    if (r.published.id == id) return &r;
  return nullptr;
}

void require_row(const std::vector<ValidationRow>& runs, const std::string& id, const fs::path& file,
                 const std::string& at) {
  if (!find_row(runs, id)) throw ConfigError(file.string(), at, "the id of a published scenario; there is none \"" + id + "\"");
}

void label_fits(std::vector<ValidationRow>& runs, const std::vector<FittedParameter>& fitted, const fs::path& file) {
  for (std::size_t i = 0; i < fitted.size(); ++i) {
    const auto& p = fitted[i];
    require_row(runs, p.fitted_to, file, fmt::format("$.parameters[{}].fitted_to", i));
    if (!p.loo_fitted_to.empty())
      require_row(runs, p.loo_fitted_to, file, fmt::format("$.parameters[{}].leave_one_out.fitted_to", i));
    for (auto& r : runs)
      if (r.published.id == p.fitted_to) {
        r.status = RowStatus::fit;
        r.fit_reason += (r.fit_reason.empty() ? "" : "; ") + p.name;
      }
  }
  // Twins: a row whose configuration equals a fitted row's was, in effect, fitted too.
  for (auto& r : runs) {
    if (r.status == RowStatus::fit) continue;
    for (const auto& f : runs)
      if (f.status == RowStatus::fit && f.fit_reason.rfind("same configuration as", 0) != 0 &&
          configuration(f.result.scenario) == configuration(r.result.scenario)) {
        r.status = RowStatus::fit;
        r.fit_reason = "same configuration as " + f.published.id;
        break;
      }
  }
}

// What moesim sees change between two consecutive steps of a series.
std::string modelled_change(const Scenario& before, const Scenario& after) {
  Scenario a = configuration(before), b = configuration(after);
  const bool recipe = !(a.recipe == b.recipe);
  const bool stack = !(a.stack == b.stack);
  a.recipe = b.recipe;
  a.stack = b.stack;
  if (!(a == b)) return "other";  // layout, training, system or model: not a software step
  if (recipe && stack) return "recipe+stack";
  return recipe ? "recipe" : stack ? "stack" : "unmodelled";
}

void history(Validation& v) {
  std::vector<std::pair<int, const ValidationRow*>> steps;
  for (const auto& r : v.runs) {
    int step = 0;
    char tail = 0;
    if (std::sscanf(r.published.id.c_str(), "gb200-history-step%d%c", &step, &tail) == 1) steps.emplace_back(step, &r);
  }
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const ValidationRow& prev = *steps[i - 1].second;
    const ValidationRow& cur = *steps[i].second;
    v.history.push_back({steps[i].first, cur.published.id, cur.published.change,
                         modelled_change(prev.result.scenario, cur.result.scenario),
                         cur.published.tflops_per_gpu / prev.published.tflops_per_gpu,
                         cur.simulated_tflops / prev.simulated_tflops});
  }
  const double n = static_cast<double>(v.history.size());
  if (n < 2) return;
  double mp = 0, ms = 0;
  for (const auto& h : v.history) mp += h.published_gain / n, ms += h.simulated_gain / n;
  double cov = 0, vp = 0, vs = 0, sq = 0;
  for (const auto& h : v.history) {
    cov += (h.published_gain - mp) * (h.simulated_gain - ms);
    vp += (h.published_gain - mp) * (h.published_gain - mp);
    vs += (h.simulated_gain - ms) * (h.simulated_gain - ms);
    sq += (h.simulated_gain - h.published_gain) * (h.simulated_gain - h.published_gain);
  }
  v.history_gain_correlation = vp > 0 && vs > 0 ? cov / std::sqrt(vp * vs) : 0;
  v.history_gain_rms = std::sqrt(sq / n);
}

// Every GB300 run against every GB200 run on the same software release and precision.
void hardware_pairs(Validation& v) {
  for (const auto& a : v.runs)
    for (const auto& b : v.runs) {
      const Scenario& sa = a.result.scenario;
      const Scenario& sb = b.result.scenario;
      if (sa.system.gpu.name != "GB300" || sb.system.gpu.name != "GB200") continue;
      if (sa.stack.name != sb.stack.name || sa.training.precision != sb.training.precision) continue;
      v.pairs.push_back({a.published.id, b.published.id, a.published.tflops_per_gpu / b.published.tflops_per_gpu,
                         a.simulated_tflops / b.simulated_tflops});
    }
}

ExperimentResult run_experiment(const GapExperiment& g, const Validation& v, const fs::path& file, std::size_t index,
                                const RunOptions& options) {
  ExperimentResult out;
  out.experiment = g;
  for (std::size_t k = 0; k < g.rows.size(); ++k) {
    require_row(v.runs, g.rows[k], file, fmt::format("$.experiments[{}].rows[{}]", index, k));
    const ValidationRow& row = *find_row(v.runs, g.rows[k]);
    const fs::path scenario_file = row.result.scenario.file;
    nlohmann::json j = config::read_json_file(scenario_file);
    const std::string label = fmt::format("{} with $.experiments[{}].set", scenario_file.string(), index);
    for (const auto& [path, value] : g.set) sweep::set_at_path(j, path, value, label);
    const fs::path configs = config::find_configs_dir(scenario_file, options.configs_dir);
    const Scenario varied = config::load_scenario_json(j, label, config::LoadOptions{configs, options.calibration_overlays});
    const double tflops = run_scenario(varied, options).metrics.tflops_per_gpu;
    out.rows.push_back({row.published.id, row.relative_error, tflops / row.published.tflops_per_gpu - 1});
  }
  out.supports = experiment_supports(out.rows);
  return out;
}

// The record layout under each variability source alone, the default mix, SINHA's most
// variable cluster, and realistic routing (not yet simulated).
std::vector<ScalingVariant> sensitivity_variants(const Scenario& record) {
  const VariabilitySpec d = record.variability;
  std::vector<ScalingVariant> variants;
  const auto add = [&](std::string label, double speed, double jitter, bool balanced) {
    ScalingVariant v;
    v.label = std::move(label);
    v.variability = d;
    v.variability.gpu_speed_cv = speed;
    v.variability.kernel_jitter_cv = jitter;
    v.force_balanced_routing = balanced;
    variants.push_back(std::move(v));
  };
  add("default (sources in configs/systems)", d.gpu_speed_cv, d.kernel_jitter_cv, record.recipe.force_balanced_routing);
  add("identical GPUs", 0, 0, true);
  add("GPU speed only", d.gpu_speed_cv, 0, true);
  add("kernel jitter only", 0, d.kernel_jitter_cv, true);
  // SINHA: "max 22%": the most variable cluster, 0.22 / (4 x 1.349).
  add("GPU speed of SINHA's most variable cluster (cv 4.1 %)", 0.22 / (4 * 1.349), d.kernel_jitter_cv, true);
  add("default, routing not force-balanced (expert_load_sigma of the model)", d.gpu_speed_cv, d.kernel_jitter_cv, false);
  return variants;
}

// Each variant at 1x, 2x and 4x the record's GPUs: what each source contributes to the loss.
std::vector<ScalingVariant> scaling_sensitivity(const Scenario& record, const RunOptions& options,
                                                const std::function<void(const std::string&)>& step_done) {
  std::vector<ScalingVariant> variants = sensitivity_variants(record);
  for (ScalingVariant& v : variants) {
    Scenario s = record;
    s.variability = v.variability;
    s.recipe.force_balanced_routing = v.force_balanced_routing;
    const RunResult base = run_scenario(s, options);
    v.step_time_s = base.metrics.step_time_s;
    v.efficiency_mid = run_scenario(scaled_to(s, 2 * s.gpus), options).metrics.tflops_per_gpu / base.metrics.tflops_per_gpu;
    v.efficiency = run_scenario(scaled_to(s, 4 * s.gpus), options).metrics.tflops_per_gpu / base.metrics.tflops_per_gpu;
    step_done("scaling sensitivity: " + v.label);
  }
  return variants;
}

}  // namespace

std::vector<fs::path> published_scenarios(const fs::path& published_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(published_dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") files.push_back(it->path());
  if (ec) throw ConfigError(published_dir.string(), "$", "a readable folder of published scenarios: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> validation_failures(const Validation& v) {
  std::vector<std::string> out;
  for (const auto& r : v.runs)
    if (r.status == RowStatus::outside)
      out.push_back(fmt::format("{}: {:.1f} TFLOP/s per GPU simulated, {:.1f} published: {:+.1f} % is outside +-{:.0f} %",
                                bounded_message(r.published.id, kMaxQuotedIdChars), r.simulated_tflops, r.published.tflops_per_gpu, 100 * r.relative_error,
                                100 * kValidationTolerance));
  return out;
}

ValidationRow published_row(const fs::path& file, const Scenario& s, const RunOptions& options) {
  ValidationRow row;
  row.file = file.filename().string();
  row.published = s.published.value();
  row.result = run_scenario(s, options);
  const bool tflops = row.published.tflops_per_gpu > 0;
  row.simulated_tflops = tflops ? row.result.metrics.tflops_per_gpu : row.result.metrics.tokens_per_s_per_gpu;
  row.relative_error =
      row.simulated_tflops / (tflops ? row.published.tflops_per_gpu : row.published.tokens_per_s_per_gpu) - 1;
  row.status = std::abs(row.relative_error) <= kValidationTolerance ? RowStatus::ok : RowStatus::outside;
  return row;
}

Validation validate(const ValidationInputs& in, const RunOptions& options, const ValidationProgress& progress) {
  Validation v;
  if (!in.fitted_file.empty()) v.fitted = read_fitted(in.fitted_file, in.repo_root);
  const std::vector<fs::path> published = published_scenarios(in.published_dir);
  const Scenario record = config::load_scenario(in.record_scenario, config::LoadOptions{options.configs_dir, options.calibration_overlays});
  const std::vector<GapExperiment> experiments =
      in.experiments_file.empty() ? std::vector<GapExperiment>{} : read_experiments(in.experiments_file);
  // Steps: each published file, the record's scaling, each sensitivity variant, the memory,
  // the schedules, each gap experiment.
  const std::vector<fs::path> frameworks =
      in.frameworks_dir.empty() ? std::vector<fs::path>{} : published_scenarios(in.frameworks_dir);
  if (progress.start)
    progress.start(static_cast<int>(published.size() + 2 + sensitivity_variants(record).size() + experiments.size() +
                                    frameworks.size()) +
                   (in.schedules_scenario.empty() ? 0 : 1));
  const auto step_done = [&](const std::string& what) {
    if (progress.step_done) progress.step_done(what);
  };
  std::map<std::string, std::string> ids;  // id -> file, to refuse a duplicate
  for (const auto& f : published) {
    const Scenario s = config::load_scenario(f, config::LoadOptions{options.configs_dir, options.calibration_overlays});
    if (!s.published || s.published->tflops_per_gpu <= 0) {
      step_done(f.filename().string() + ": no published throughput");
      continue;
    }
    if (const auto [it, fresh] = ids.emplace(s.published->id, f.filename().string()); !fresh)
      throw ConfigError(f.string(), "$.published.id", "an id no other published scenario has; " + it->second + " has \"" +
                                                          s.published->id + "\" too");
    ValidationRow row = published_row(f, s, options);
    step_done(fmt::format("{}: {:.1f} TFLOP/s per GPU, published {:.1f}", row.published.id, row.simulated_tflops,
                          row.published.tflops_per_gpu));
    v.runs.push_back(std::move(row));
  }
  label_fits(v.runs, v.fitted, in.fitted_file);
  history(v);
  hardware_pairs(v);

  const RunResult small = run_scenario(record, options);
  const RunResult large = run_scenario(scaled_to(record, 4 * record.gpus), options);
  v.scaling.from_gpus = record.gpus;
  v.scaling.to_gpus = 4 * record.gpus;
  v.scaling.efficiency = large.metrics.tflops_per_gpu / small.metrics.tflops_per_gpu;
  step_done(fmt::format("scaling {} -> {} GPUs", v.scaling.from_gpus, v.scaling.to_gpus));
  v.scaling.sensitivity = scaling_sensitivity(record, options, step_done);
  v.memory = validate_memory(v.runs, in.published_dir.parent_path() / "memory", options);
  step_done("memory");
  if (!in.schedules_scenario.empty()) {
    v.schedules = compare_schedules(in.schedules_scenario, options);
    step_done("pipeline schedules");
  }
  for (const auto& f : frameworks) {
    const Scenario s = config::load_scenario(f, config::LoadOptions{options.configs_dir, options.calibration_overlays});
    if (!s.published || (s.published->tflops_per_gpu <= 0 && s.published->tokens_per_s_per_gpu <= 0))
      throw ConfigError(f.string(), "$.published", "a published tflops_per_gpu or tokens_per_s_per_gpu to compare with");
    ValidationRow row = published_row(f, s, options);
    step_done(row.published.id);
    v.framework_runs.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    v.experiments.push_back(run_experiment(experiments[i], v, in.experiments_file, i, options));
    step_done(fmt::format("gap experiment {} of {}", i + 1, experiments.size()));
  }
  return v;
}

bool experiment_supports(const std::vector<ExperimentResult::Row>& rows) {
  return std::all_of(rows.begin(), rows.end(), [](const ExperimentResult::Row& r) {
    return std::abs(r.error_after) <= std::abs(r.error_before) - 0.005;
  });
}

}  // namespace moesim::driver
