// moesim merge DIR... --output DIR: the shards of one sweep (moesim sweep --shard i/n) or of one
// search (moesim search --shard i/n) combined into the output the unsharded run would have
// written, byte for byte.
#include <fmt/format.h>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/search/result.hpp"
#include "moesim/search/writers.hpp"
#include "moesim/sweep/from_runs.hpp"
#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/result.hpp"
#include "moesim/sweep/writers.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool plot = false;
  GateOptions gates;
};

// A search's shard directory holds search.json; a sweep's, sweep.json.
bool is_search(const std::string& input) {
  const std::filesystem::path p(input);
  if (std::filesystem::is_directory(p)) return std::filesystem::exists(p / "search.json") && !std::filesystem::exists(p / "sweep.json");
  try {
    config::JsonNodeBudget budget(p.string());
    const auto counted = [&budget](int, search::Json::parse_event_t event, search::Json&) {
      budget.count(event);
      return true;
    };
    return search::is_search_result(search::Json::parse(config::read_text_file(p), counted));
  } catch (const std::exception&) {
    return false;  // the sweep reader reports what is wrong with it
  }
}

void merge_searches(const MergeArgs& a) {
  if (const std::string gate = a.gates.given(); !gate.empty())
    throw ConfigError(gate, "$", "no CI gate on a search's merge (a search ranks candidates; gate a run or a sweep of "
                                 "the layout it finds)");
  CommandFiles files;
  for (const std::string& in : a.inputs)
    files.input(std::filesystem::is_directory(in) ? std::filesystem::path(in) / "search.json" : std::filesystem::path(in),
                "merge input " + in);
  for (const std::string& name : search::output_file_names())
    files.output(std::filesystem::path(a.output) / name, "--output's " + name);
  files.refuse_clashes();
  std::vector<search::SearchResult> parts;
  for (const std::string& in : a.inputs) parts.push_back(search::read_result(in));
  const search::SearchResult r = search::merge_results(parts);
  batch::PlotOutcome plot;
  try {
    plot = search::write_outputs(a.output, r);
  } catch (const std::exception& e) {
    throw OutputError(e.what());
  }
  fmt::print(stderr, "{0} planned simulations merged\nwrote {1}/search.json, {1}/search.csv, {1}/search.md\n{2}\n",
             r.plan.size(), a.output, plot.message);
}

}  // namespace

void add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("merge", "Combine the output directories of a sweep's or a search's shards into one");
  auto a = std::make_shared<MergeArgs>();
  cmd->add_option("inputs", a->inputs, "Shard output directories (or their sweep.json / search.json files)")->required();
  cmd->add_option("-o,--output", a->output, "Directory for the merged results (sweep.json ... or search.json ...)")->required();
  cmd->add_flag("--plot", a->plot, "Sweeps: also draw plots (PNG and SVG) with gnuplot into the output directory "
                                   "(a search's plot is always drawn)");
  add_gate_options(cmd, a->gates, "a point of a series (rows equal on every axis but the GPU-count one)");
  cmd->callback([a] {
    if (is_search(a->inputs.front())) return merge_searches(*a);
    const driver::Gates gates = a->gates.gates();
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
    // The merged sweep is whole: every series has its reference point (docs/sweeps.md).
    require_whole_series(gates, !r.gpu_column.empty(), false, "the merged sweep " + r.name);
    try {
      sweep::write_outputs(a->output, r);
    } catch (const std::exception& e) {
      throw OutputError(e.what());
    }
    fmt::print(stderr, "{0}\nwrote {1}/sweep.json, {1}/sweep.csv, {1}/sweep.md\n", sweep::status_summary(r), a->output);
    if (a->plot) fmt::print(stderr, "{}\n", sweep::draw_plots(a->output, r).message);
    enforce_gates(gates, sweep::gate_points(r));  // as sweep does: the outputs first, then the verdict
  });
}

}  // namespace moesim::cli
