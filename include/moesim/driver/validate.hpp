#pragma once
// Reproducing the published figures: every scenario under scenarios/published/ run and compared
// with its measured throughput, against one tolerance fixed before any result was seen. Rows a
// parameter was fitted to (configs/fitted.json) are labelled and kept out of the statistics;
// the GB200 history's gains, the GB300/GB200 ratios and the weak-scaling claim are compared too;
// each gap explanation (configs/gap-experiments.json) is tested by its experiment.
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/driver/memory_validation.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/driver/schedule_comparison.hpp"

namespace moesim::driver {

// One tolerance for every published row: +-5 % of model TFLOP/s per GPU.
inline constexpr double kValidationTolerance = 0.05;

enum class RowStatus { ok, outside, fit };
const char* to_string(RowStatus s);  // "ok", "OUTSIDE", "fit"

// A parameter no measurement gives, fitted to one published row (configs/fitted.json).
struct FittedParameter {
  std::string name;                                  // what it is, in words
  std::vector<std::pair<std::string, double>> values;  // key -> fitted value
  std::vector<std::string> locations;                // "file" or "file#object.path": where the keys are set
  std::string fitted_to;                             // published id of the row
  std::string why_not_measured;
  // Leave-one-out (scripts/calibrate_history.py): refitted without its row, to another one.
  std::string loo_fitted_to;                         // "" = none recorded
  std::vector<std::pair<std::string, double>> loo_values;  // key -> value so refitted; empty: not run yet
  double loo_error = 0;                              // its row's relative error with loo_values
};

// A gap explanation and the experiment that tests it (configs/gap-experiments.json).
struct GapExperiment {
  std::string explanation;
  std::vector<std::string> rows;                     // published ids it is about
  std::vector<std::pair<std::string, nlohmann::json>> set;  // dotted scenario path -> value
  bool claimed_support = true;                       // the file's verdict; validate recomputes it
};

struct ValidationInputs {
  std::filesystem::path published_dir;               // scenarios/published
  std::filesystem::path record_scenario;             // weak-scaled 256 -> 1,024 GPUs
  std::filesystem::path fitted_file;                 // configs/fitted.json; "" = none
  std::filesystem::path experiments_file;            // configs/gap-experiments.json; "" = none
  std::filesystem::path repo_root;                   // fitted locations are relative to it
  std::filesystem::path schedules_scenario;          // compared under DSV3 Table 2's schedules; "" = none
  // TorchTitan's and JAX's published runs (scenarios/frameworks/published); "" = none. Shown
  // apart, out of the statistics and the exit status: their own ratchet guards them.
  std::filesystem::path frameworks_dir;
};

struct ValidationRow {
  std::string file;                                  // scenario file name
  Published published;
  double simulated_tflops = 0;
  double relative_error = 0;                         // simulated / published - 1
  RowStatus status = RowStatus::ok;
  std::string fit_reason;                            // for fit rows: the parameter, or the fitted twin
  RunResult result;
};

// The record layout's scaling with one variability setting (what each source contributes).
struct ScalingVariant {
  std::string label;
  VariabilitySpec variability;
  bool force_balanced_routing = true;
  double step_time_s = 0;      // at from_gpus
  double efficiency_mid = 0;   // at 2 x from_gpus
  double efficiency = 0;       // at to_gpus
};

// Consecutive steps of the GB200 history: published and simulated gain (ratio of throughputs).
struct HistoryStep {
  int step = 0;
  std::string id, declared_change, modelled_change;  // modelled: derived from the scenario files
  double published_gain = 0, simulated_gain = 0;     // this step / the previous one
};

struct HardwarePair {  // a GB300 and a GB200 run on the same software and precision
  std::string gb300_id, gb200_id;
  double published_ratio = 0, simulated_ratio = 0;
};

struct ScalingCheck {
  int from_gpus = 0, to_gpus = 0;
  double efficiency = 0;       // per-GPU throughput at to_gpus / at from_gpus
  double published = 0.985;    // Megatron-Core, seeds
  double published_others = 0.97;  // TorchTitan and JAX, seeds (docs/frameworks.md)
  std::vector<ScalingVariant> sensitivity;  // the default first
};

struct ExperimentResult {
  GapExperiment experiment;
  struct Row { std::string id; double error_before = 0, error_after = 0; };
  std::vector<Row> rows;
  bool supports = false;       // every row's |error| shrank by at least half a point
};

// A published scenario run and compared with its figure: model TFLOP/s per GPU where published,
// else tokens/s per GPU (simulated_tflops then holds tokens/s); the row's status against the
// tolerance. `file` names the row.
ValidationRow published_row(const std::filesystem::path& file, const Scenario& s, const RunOptions& options);

// Whether an override's rows support the explanation it tests: every row's |error| shrinks by at
// least half a point (the ratchet's resolution); a smaller move does not explain a gap.
bool experiment_supports(const std::vector<ExperimentResult::Row>& rows);

struct Validation {
  std::vector<ValidationRow> runs;          // sorted by file name
  // The other frameworks' rows (ValidationInputs::frameworks_dir), against TFLOP/s per GPU where
  // published, else tokens/s per GPU (simulated_tflops then holds tokens/s).
  std::vector<ValidationRow> framework_runs;
  std::vector<FittedParameter> fitted;
  std::vector<HistoryStep> history;         // steps 1..n of the GB200 history
  double history_gain_correlation = 0;      // Pearson, simulated vs published gains
  double history_gain_rms = 0;              // RMS of simulated - published gain
  std::vector<HardwarePair> pairs;
  ScalingCheck scaling;
  std::vector<ExperimentResult> experiments;
  MemoryValidation memory;                  // peaks, measured memory (scenarios/memory/), estimator
  ScheduleComparison schedules;             // DeepSeek's own setup beside DSV3 Table 2 (if asked)

  // Over predicted rows (fit rows left out).
  int predicted() const;
  int predicted_inside() const;
  double mean_abs_error() const;
  double mean_signed_error() const;  // a lean: positive when moesim is too fast on average
  double max_abs_error() const;
  bool all_predicted_inside() const { return predicted_inside() == predicted(); }
};

// The rows a calibration moves (the same validation without and with --calibration's overlays):
// published, bundled and calibrated values and errors, and both summaries.
std::string calibration_effect_text(const Validation& bundled, const Validation& calibrated,
                                    const std::vector<std::string>& overlays);

// The *.json files of `published_dir`, sorted by name.
std::vector<std::filesystem::path> published_scenarios(const std::filesystem::path& published_dir);

// Progress of a validation (it takes a while): `start(total)` once the steps are known (each
// published file, the record's scaling, each sensitivity variant, the memory, the schedules,
// each gap experiment), then `step_done(what)` as each ends. Either may be empty.
struct ValidationProgress {
  std::function<void(int total)> start;
  std::function<void(const std::string& what)> step_done;
};

Validation validate(const ValidationInputs& inputs, const RunOptions& options, const ValidationProgress& progress = {});

// What fails `moesim validate` (exit 1): one line per predicted (not fitted) row outside the
// tolerance. Empty when the validation passes. The one place that decides it (the history, the
// ratios and the scaling are reported, not gated; CI gates the ratchet instead).
// Each line quotes its row's published id cut to kMaxQuotedIdChars, so that every line is
// shown whole however many rows fail (the CLI prints them one by one, not in one bounded error).
inline constexpr std::size_t kMaxQuotedIdChars = 200;
std::vector<std::string> validation_failures(const Validation& v);

// Reading the two validation inputs (strict: ConfigError naming file, JSON path, expectation).
// read_fitted also checks that each location still holds the recorded value.
std::vector<FittedParameter> read_fitted(const std::filesystem::path& file, const std::filesystem::path& repo_root);
std::vector<GapExperiment> read_experiments(const std::filesystem::path& file);

// `moesim validate`'s table: a line per row, the summary, the history, the ratios, the scaling,
// a line per gap experiment (its explanation only with `explain`), the schedules.
std::string validation_text(const Validation& v, bool explain);
// `moesim validate --format json`: the rows (name, file, published, simulated, error as a
// fraction, status ok/outside/fit, fit_reason) and the summary (with what fails validate), then
// the history, pairs, scaling, gap experiments and schedules. A function of `v` alone.
nlohmann::ordered_json validation_json(const Validation& v);

// docs/validation.md: summary, table, history, pairs, fits, gap experiments, the record step.
std::string validation_markdown(const Validation& v);

// The accuracy ratchet (tests/validation/baseline.json): each row's recorded error in percent.
nlohmann::json ratchet_baseline(const Validation& v);
// What moved against `baseline`: a row whose |error| grew by more than `slack_points`, a row
// that was inside the tolerance and left it, a row missing from either side. Empty: none.
std::vector<std::string> ratchet_violations(const nlohmann::json& current, const nlohmann::json& baseline,
                                            double slack_points = 0.5);
// Rows whose |error| shrank by more than `slack_points` (to be recorded).
std::vector<std::string> ratchet_improvements(const nlohmann::json& current, const nlohmann::json& baseline,
                                              double slack_points = 0.5);

}  // namespace moesim::driver
