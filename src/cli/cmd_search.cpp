// moesim search SEARCH.json: every candidate layout of a search space checked and estimated, the
// most promising simulated in worker processes, a ranked table (and JSON, CSV, Markdown, a
// plot). docs/search.md has the file format.
#include <fmt/format.h>

#include <chrono>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/batch/progress.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/search/compare_systems.hpp"
#include "moesim/search/run.hpp"
#include "moesim/search/writers.hpp"
#include "moesim/sweep/row.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

struct SearchArgs {
  std::string search, output, shard, configs, format = "table", fidelity = "folded", compare_systems;
  std::vector<std::string> calibrations;
  int jobs = 0, simulate = -1;
  bool quiet = false, progress = false, force = false;
};

std::vector<std::string> split_systems(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  for (const std::string& s : out)
    if (s.empty()) throw ConfigError("--compare-systems", "$", "system names separated by commas, e.g. gb200-nvl72,gb300-nvl72; got \"" + text + "\"");
  if (out.size() < 2) throw ConfigError("--compare-systems", "$", "at least two systems; got \"" + text + "\"");
  return out;
}

std::string formatted(const search::SearchResult& r, const std::string& format) {
  if (format == "json") return search::result_json_text(r);
  if (format == "csv") return search::result_csv(r);
  if (format == "md") return search::result_markdown(r);
  return search::result_table(r);
}

// Progress on stderr: the screening (a bar on a terminal, a line every few seconds with
// --progress), its outcome, then one line (or a bar) per simulation.
struct SearchProgress {
  SearchProgress(bool quiet, bool screening_shown, const std::string& label)
      : quiet_(quiet), screening_shown_(screening_shown), label_(label) {}

  void screening(int done, int total, int candidates) {
    if (quiet_ || !screening_shown_) return;
    constexpr double kLinesEvery_s = 5.0;
    if (!screening_bar_)
      screening_bar_.emplace(total, fmt::format("search{}: screening {} candidates", label_, candidates), "slices",
                             batch::Progress::stderr_is_terminal(), stderr, kLinesEvery_s);
    screening_bar_->tick();
    if (done == total) screening_bar_->finish();
  }

  void screened(const search::SearchResult& r, int simulations) {
    if (quiet_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    fmt::print(stderr, "search{}: {} candidates checked and estimated in {:.1f} s: {} pass, {} rejected; simulating {}\n",
               label_, r.evaluated, s, r.survivors, r.rejected_candidates, simulations);
    bar_.emplace(simulations, "search" + label_, "simulations", batch::Progress::stderr_is_terminal());
  }

  void simulated(const search::Json& row) {
    if (quiet_ || !bar_) return;
    const std::string outcome = sweep::has_status(row, sweep::kStatusOk)
                                    ? fmt::format("{:.1f} TFLOP/s/GPU", row["tflops_per_gpu"].get<double>())
                                    : batch::plain_value(row["status"]) + ": " + batch::plain_value(row["reason"]);
    bar_->job_done(fmt::format("{}: {}", search::candidate_name(row), outcome));
  }

  void finish() {
    if (bar_) bar_->finish();
  }

 private:
  bool quiet_, screening_shown_;
  std::string label_;
  std::optional<batch::Progress> screening_bar_, bar_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

search::SearchResult run_with_progress(const search::SearchSpec& spec, search::SearchOptions o, const SearchArgs& a,
                                       const std::string& label) {
  SearchProgress progress(a.quiet, show_progress(a.quiet, a.progress), label);
  o.on_screening = [&](int done, int total, int candidates) { progress.screening(done, total, candidates); };
  o.on_screened = [&](const search::SearchResult& r) {
    int mine = 0;
    for (int k = 0; k < static_cast<int>(r.plan.size()); ++k) mine += !o.shard || o.shard->owns(k) ? 1 : 0;
    progress.screened(r, mine);
  };
  o.on_simulated = [&](const search::Json& row) { progress.simulated(row); };
  search::SearchResult r = search::run_search(spec, o);
  progress.finish();
  return r;
}

int error_rows(const search::SearchResult& r) {
  int n = 0;
  for (const auto& row : r.candidates) n += sweep::has_status(row, sweep::kStatusError) ? 1 : 0;
  return n;
}

void write(const std::filesystem::path& dir, const search::SearchResult& r) {
  batch::PlotOutcome plot;
  try {
    plot = search::write_outputs(dir, r);
  } catch (const std::exception& e) {
    throw OutputError(e.what());
  }
  fmt::print(stderr, "wrote {0}/search.json, {0}/search.csv, {0}/search.md\n{1}\n", dir.string(), plot.message);
}

void run_comparison(const SearchArgs& a, const search::SearchSpec& spec, const search::SearchOptions& o) {
  if (o.shard)
    throw ConfigError("--compare-systems", "$", "a whole search per system, not one shard: shard each system's search "
                                                "instead (a search file per system, or \"set\": {\"system\": ...})");
  std::vector<search::SearchResult> results;
  for (const std::string& system : split_systems(a.compare_systems)) {
    const search::SearchSpec one = search::on_system(spec, system);
    results.push_back(run_with_progress(one, o, a, " [" + system + "]"));
    if (!a.output.empty()) write(std::filesystem::path(a.output) / system, results.back());
  }
  const std::string table = search::comparison_table(results);
  const std::string json = search::comparison_json(results).dump(2) + "\n";
  emit(a.format == "json" ? json : table, "");
  if (a.output.empty()) return;
  emit(json, (std::filesystem::path(a.output) / "compare.json").string());
  emit(table, (std::filesystem::path(a.output) / "compare.txt").string());
  fmt::print(stderr, "wrote {0}/compare.json, {0}/compare.txt\n", a.output);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("search", "Find the fastest layout: check every candidate of a search space, estimate "
                                           "the survivors, simulate the best and rank them");
  auto a = std::make_shared<SearchArgs>();
  cmd->add_option("search", a->search, "Search JSON file (docs/search.md)")->required();
  cmd->add_option("-o,--output", a->output, "Directory for search.json, search.csv, search.md and the plot");
  cmd->add_option("--format", a->format, "What goes to stdout: the ranked table (default), json, csv or md")
      ->check(CLI::IsMember({"table", "json", "csv", "md"}));
  cmd->add_option("-j,--jobs", a->jobs, "Worker processes at once (default: the available cores)")->check(CLI::Range(0, 4096));
  cmd->add_option("--simulate", a->simulate, "Candidates to simulate, best estimates first (default: the file's "
                                             "\"simulate\", else 50)")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--shard", a->shard, "Simulate only shard i of n (i/n, from 0/n) of the planned candidates; "
                                       "combine the shards' directories with moesim merge");
  cmd->add_option("--compare-systems", a->compare_systems,
                  "Run the search on each of these systems (comma-separated names in configs/systems/) and show "
                  "the best of each side by side");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->add_flag("--progress", a->progress, "Progress of the screening even when stderr is not a terminal (CI logs: "
                                           "a line every few seconds)");
  cmd->add_flag("--force", a->force, "Screen the space even when it holds more than 1,000,000 candidates or its "
                                     "estimate exceeds this machine's memory");
  cmd->add_option("--configs", a->configs, "configs/ directory (default: found from the base scenario)");
  add_calibration_option(cmd, a->calibrations);
  cmd->add_option("--fidelity", a->fidelity, "folded: one GPU per symmetric role (default); full: every GPU")
      ->check(CLI::IsMember({"folded", "full"}));
  cmd->callback([a] {
    const search::SearchSpec spec = search::load_search(a->search);
    search::SearchOptions o;
    o.jobs = a->jobs;
    if (a->simulate >= 0) o.simulate = a->simulate;
    o.configs_dir = a->configs;
    o.calibration_overlays = read_calibrations(a->calibrations, config::find_configs_dir(a->search, a->configs));
    o.force = a->force;
    o.fidelity = a->fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded;
    if (!a->shard.empty()) o.shard = batch::parse_shard(a->shard);

    // Before any work: no output may overwrite the search file, the scenario or a config it reads.
    const std::vector<std::filesystem::path> inputs = search::input_files(spec, o);
    CommandFiles files;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      files.input(inputs[i], i == 0 ? "the search file" : "a scenario or configuration file the search reads");
    for (const std::string& f : a->calibrations) files.input(f, "a --calibration overlay");
    if (!a->output.empty())
      for (const std::string& name : search::output_file_names())
        files.output(std::filesystem::path(a->output) / name, "--output's " + name);
    files.refuse_clashes();

    if (!a->compare_systems.empty()) return run_comparison(*a, spec, o);
    const search::SearchResult r = run_with_progress(spec, o, *a, "");
    emit(formatted(r, a->format), "");
    if (!a->output.empty()) write(a->output, r);
    if (const int errors = error_rows(r); errors > 0)
      throw std::runtime_error(fmt::format("{} simulation(s) failed unexpectedly (status \"error\"; see the reason)", errors));
  });
}

}  // namespace moesim::cli
