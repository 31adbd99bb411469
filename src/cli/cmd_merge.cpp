// moesim merge DIR... --output DIR: the shards of one sweep (moesim sweep --shard i/n) combined
// into the output the unsharded sweep would have written, byte for byte.
#include <fmt/format.h>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/result.hpp"
#include "moesim/sweep/writers.hpp"

namespace moesim::cli {

void add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("merge", "Combine the output directories of a sweep's shards into one");
  struct Args {
    std::vector<std::string> inputs;
    std::string output;
    bool plot = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("inputs", a->inputs, "Shard output directories (or their sweep.json files)")->required();
  cmd->add_option("-o,--output", a->output, "Directory for the merged sweep.json, sweep.csv, sweep.md")->required();
  cmd->add_flag("--plot", a->plot, "Also draw plots (PNG and SVG) with gnuplot into the output directory");
  cmd->callback([a] {
    CommandFiles files;
    for (const std::string& in : a->inputs)
      files.input(std::filesystem::is_directory(in) ? std::filesystem::path(in) / "sweep.json" : std::filesystem::path(in),
                  "merge input " + in);
    for (const std::string& name : sweep::output_file_names(a->plot))
      files.output(std::filesystem::path(a->output) / name, "--output's " + name);
    files.refuse_clashes();
    std::vector<sweep::SweepResult> parts;
    for (const std::string& in : a->inputs) parts.push_back(sweep::read_result(in));
    const sweep::SweepResult r = sweep::merge_results(parts);
    try {
      sweep::write_outputs(a->output, r);
    } catch (const std::exception& e) {
      throw OutputError(e.what());
    }
    fmt::print(stderr, "{0}\nwrote {1}/sweep.json, {1}/sweep.csv, {1}/sweep.md\n", sweep::status_summary(r), a->output);
    if (a->plot) fmt::print(stderr, "{}\n", sweep::draw_plots(a->output, r).message);
  });
}

}  // namespace moesim::cli
