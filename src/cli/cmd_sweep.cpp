// moesim sweep SWEEP.json: run every point of a sweep (or of one shard) in worker processes and
// write CSV, JSON and Markdown (and plots) to a directory. docs/sweeps.md has the file format.
#include <fmt/format.h>

#include "commands.hpp"
#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/progress.hpp"
#include "moesim/sweep/run.hpp"
#include "moesim/sweep/writers.hpp"

namespace moesim::cli {

void add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run a sweep of scenarios in parallel and write CSV, JSON, Markdown and plots");
  struct Args {
    std::string sweep, output, shard, configs, fidelity = "folded";
    int jobs = 0, samples = 1;
    bool plot = false, quiet = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("sweep", a->sweep, "Sweep JSON file (docs/sweeps.md)")->required();
  auto* output = cmd->add_option("-o,--output", a->output, "Directory for sweep.json, sweep.csv, sweep.md (and plots); "
                                                           "without it the Markdown table goes to stdout");
  cmd->add_option("-j,--jobs", a->jobs, "Points simulated at once (default: the available cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--shard", a->shard, "Run only shard i of n (i/n, from 0/n): points i, i+n, i+2n, ...; "
                                       "combine the shards' directories with moesim merge");
  cmd->add_flag("--plot", a->plot, "Also draw plots (PNG and SVG) with gnuplot into the output directory")->needs(output);
  cmd->add_option("--samples", a->samples,
                  "Simulate every point at N seeds and report means with 95 % confidence intervals (error bars)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->add_option("--configs", a->configs, "configs/ directory (default: found from each base scenario)");
  cmd->add_option("--fidelity", a->fidelity, "folded: one GPU per symmetric role (default); full: every GPU")
      ->check(CLI::IsMember({"folded", "full"}));
  cmd->callback([a] {
    const sweep::SweepSpec spec = sweep::load_sweep(a->sweep);
    sweep::SweepOptions o;
    o.jobs = a->jobs;
    o.samples = a->samples;
    o.configs_dir = a->configs;
    o.fidelity = a->fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded;
    if (!a->shard.empty()) o.shard = sweep::parse_shard(a->shard);
    int mine = 0;
    for (const sweep::Point& p : sweep::expand(spec)) mine += !o.shard || o.shard->owns(p.index) ? 1 : 0;
    sweep::Progress progress(mine, spec.axis_columns(), sweep::Progress::stderr_is_terminal());
    if (!a->quiet) o.on_point = [&progress](const sweep::Json& row) { progress.point_done(row); };

    const sweep::SweepResult r = sweep::run_sweep(spec, o);
    if (!a->quiet) progress.finish();
    fmt::print(stderr, "{}\n", sweep::status_summary(r));
    if (a->output.empty()) {
      emit(sweep::result_markdown(r), "");
    } else {
      try {
        sweep::write_outputs(a->output, r);
      } catch (const std::exception& e) {
        throw OutputError(e.what());
      }
      fmt::print(stderr, "wrote {0}/sweep.json, {0}/sweep.csv, {0}/sweep.md\n", a->output);
      if (a->plot) fmt::print(stderr, "{}\n", sweep::draw_plots(a->output, r).message);
    }
    if (const int errors = sweep::error_rows(r); errors > 0)
      throw std::runtime_error(fmt::format("{} point(s) failed unexpectedly (status \"error\"; see the reason column)", errors));
  });
}

}  // namespace moesim::cli
