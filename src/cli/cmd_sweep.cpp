// moesim sweep SWEEP.json: run every point of a sweep (or of one shard) in worker processes and
// write CSV, JSON and Markdown (and plots) to a directory. docs/sweeps.md has the file format.
#include <fmt/format.h>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/sweep/from_runs.hpp"
#include "moesim/sweep/journal.hpp"
#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/progress.hpp"
#include "moesim/sweep/run.hpp"
#include "moesim/sweep/writers.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

// What a journal must match to be resumed: the same sweep, shard, fidelity and input bytes.
sweep::Json journal_identity(const sweep::SweepSpec& spec, const sweep::SweepOptions& o,
                             const std::vector<std::filesystem::path>& inputs) {
  sweep::Json id;
  id["format"] = "moesim-sweep-rows/1";
  id["sweep"] = spec.name;
  id["points"] = static_cast<int>(sweep::expand(spec).size());
  id["shard"] = o.shard ? fmt::format("{}/{}", o.shard->index, o.shard->count) : "all";
  id["fidelity"] = o.fidelity == platform::Fidelity::full ? "full" : "folded";
  id["inputs"] = sweep::inputs_fingerprint(inputs);
  return id;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run a sweep of scenarios in parallel and write CSV, JSON, Markdown and plots");
  struct Args {
    std::string sweep, output, shard, configs, fidelity = "folded";
    std::vector<std::string> calibrations;
    int jobs = 0, samples = 1;
    bool plot = false, quiet = false, resume = false, progress = false, force = false;
    GateOptions gates;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("sweep", a->sweep, "Sweep JSON file (docs/sweeps.md)")->required();
  auto* output = cmd->add_option("-o,--output", a->output, "Directory for sweep.json, sweep.csv, sweep.md (and plots); "
                                                           "without it the Markdown table goes to stdout");
  cmd->add_option("-j,--jobs", a->jobs, "Points simulated at once (default: the available cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--shard", a->shard, "Run only shard i of n (i/n, from 0/n): points i, i+n, i+2n, ...; "
                                       "combine the shards' directories with moesim merge");
  cmd->add_flag("--plot", a->plot, "Also draw plots (PNG and SVG) with gnuplot into the output directory")->needs(output);
  cmd->add_option("--samples", a->samples,
                  "Simulate every point at N seeds and report means with 95 % confidence intervals (error bars)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--resume", a->resume, "Continue an interrupted sweep from the finished points kept in the output "
                                       "directory (sweep.rows.jsonl)")->needs(output);
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->add_flag("--progress", a->progress, "With --samples, also a line every few seconds as seeds finish when "
                                           "stderr is not a terminal (CI logs; a terminal shows a bar of seeds)");
  cmd->add_flag("--force", a->force, "Run the sweep even when it holds more than 100,000 simulations (points x "
                                     "samples) or its estimate exceeds this machine's memory");
  cmd->add_option("--configs", a->configs, "configs/ directory (default: found from each base scenario)");
  add_calibration_option(cmd, a->calibrations);
  cmd->add_option("--fidelity", a->fidelity, "folded: one GPU per symmetric role (default); full: every GPU")
      ->check(CLI::IsMember({"folded", "full"}));
  add_gate_options(cmd, a->gates, "a point of a series (rows equal on every axis but the GPU-count one)");
  cmd->callback([a] {
    const sweep::SweepSpec spec = sweep::load_sweep(a->sweep);
    const driver::Gates gates = a->gates.gates();
    sweep::SweepOptions o;
    o.jobs = a->jobs;
    o.samples = a->samples;
    o.configs_dir = a->configs;
    o.calibration_overlays = read_calibrations(a->calibrations, config::find_configs_dir(a->sweep, a->configs));
    o.fidelity = a->fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded;
    if (!a->shard.empty()) o.shard = sweep::parse_shard(a->shard);
    require_whole_series(gates, spec.gpu_axis() != nullptr, o.shard.has_value(), a->sweep);

    // Sized before a point is built: loading a million points' scenarios alone takes minutes.
    sweep::refuse_oversized_sweep(spec, o, a->force);
    // Before any work: no output may overwrite the sweep file, a scenario or a config it reads.
    std::vector<std::filesystem::path> inputs = sweep::input_files(spec, o);
    for (const std::string& f : a->calibrations) inputs.push_back(f);  // in the journal's fingerprint too
    CommandFiles files;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      files.input(inputs[i], i == 0 ? "the sweep file" : "a scenario or configuration file the sweep reads");
    if (!a->output.empty())
      for (const std::string& name : sweep::output_file_names(a->plot))
        files.output(std::filesystem::path(a->output) / name, "--output's " + name);
    files.refuse_clashes();

    std::optional<sweep::RowJournal> journal;
    if (!a->output.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(a->output, ec);
      if (ec) throw OutputError("cannot create " + a->output + ": " + ec.message());
      try {
        journal.emplace(a->output, journal_identity(spec, o, inputs), a->resume, o.finished);
      } catch (const ConfigError&) {
        throw;
      } catch (const std::runtime_error& e) {
        throw OutputError(e.what());
      }
      if (a->resume) fmt::print(stderr, "resuming: {} point(s) already finished\n", o.finished.size());
    }
    int mine = 0;
    for (const sweep::Point& p : sweep::expand(spec))
      mine += (!o.shard || o.shard->owns(p.index)) && !o.finished.count(p.index) ? 1 : 0;
    sweep::Progress progress(mine, spec.axis_columns(), sweep::Progress::stderr_is_terminal(), stderr, o.samples,
                             a->progress);
    o.on_point = [&](const sweep::Json& row) {
      if (journal) journal->append(row);
      if (!a->quiet) progress.point_done(row);
    };
    o.on_seed = [&] {
      if (!a->quiet) progress.seed_done();
    };

    const sweep::SweepResult r = sweep::run_sweep(spec, o);
    if (!a->quiet) progress.finish();
    fmt::print(stderr, "{}\n", sweep::status_summary(r));
    const int errors = sweep::error_rows(r);
    if (a->output.empty()) {
      emit(sweep::result_markdown(r), "");
    } else {
      try {
        sweep::write_outputs(a->output, r);
      } catch (const std::exception& e) {
        throw OutputError(e.what());
      }
      if (errors == 0) journal->remove();
      fmt::print(stderr, "wrote {0}/sweep.json, {0}/sweep.csv, {0}/sweep.md\n", a->output);
      if (a->plot) fmt::print(stderr, "{}\n", sweep::draw_plots(a->output, r).message);
    }
    if (errors > 0)
      throw std::runtime_error(fmt::format("{} point(s) failed unexpectedly (status \"error\"; see the reason column){}",
                                           errors, a->output.empty() ? "" : "; --resume runs only those again"));
    enforce_gates(gates, sweep::gate_points(r));
  });
}

}  // namespace moesim::cli
