// moesim compare A B: two scenarios, sweep files or sweep results side by side, with B/A.
#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/sweep/compare.hpp"

namespace moesim::cli {

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "Compare two scenarios, sweeps or sweep results side by side with ratios");
  struct Args {
    std::string a, b, format = "table", configs, output, fidelity = "folded";
    int jobs = 0;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("a", args->a, "Scenario file, sweep file, or sweep result (sweep.json or its directory)")->required();
  cmd->add_option("b", args->b, "The same kinds, compared with A (ratios are B/A)")->required();
  cmd->add_option("--format", args->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--configs", args->configs, "configs/ directory (default: found from each scenario)");
  cmd->add_option("-j,--jobs", args->jobs, "Points simulated at once for sweep files (default: the available cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("-o,--output", args->output, "Write to this file instead of stdout");
  cmd->add_option("--fidelity", args->fidelity, "folded: one GPU per symmetric role (default); full: every GPU")
      ->check(CLI::IsMember({"folded", "full"}));
  cmd->callback([args] {
    sweep::SweepOptions o;
    o.fidelity = args->fidelity == "full" ? platform::Fidelity::full : platform::Fidelity::folded;
    o.jobs = args->jobs;
    o.configs_dir = args->configs;
    CommandFiles files;
    for (const auto& [side, path] : {std::pair{"A", args->a}, std::pair{"B", args->b}})
      for (const auto& f : sweep::comparison_input_files(path, o))
        files.input(f, f == std::filesystem::path(path) ? std::string("compared file ") + side
                                                        : std::string("a file that compared input ") + side + " reads");
    files.output(args->output, "--output");
    files.refuse_clashes();
    const sweep::SweepResult a = sweep::comparison_input(args->a, o);
    const sweep::SweepResult b = sweep::comparison_input(args->b, o);
    emit(args->format == "json" ? sweep::compare_json(a, b).dump(2) + "\n" : sweep::compare_table(a, b), args->output);
  });
}

}  // namespace moesim::cli
