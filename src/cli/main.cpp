// moesim: a discrete-event simulator of rack-scale Mixture-of-Experts pre-training.
// Exit codes: 0 success, 1 unexpected failure or a failed check (a CI gate: --min-scaling-efficiency,
// --max-step-time, --min-tflops; validate: a predicted row outside +-5 %), 2 invalid input (named
// file and JSON path), 3 infeasible layout or a run too large for the machine (explained), 4 output
// could not be written.
#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "commands.hpp"
#include "moesim/config/error.hpp"
#include "moesim/util/terminal_text.hpp"

int main(int argc, char** argv) {
  CLI::App app{"moesim: simulate MoE pre-training steps on GB300/GB200 NVL72 and HGX clusters"};
  app.set_version_flag("--version", std::string("moesim ") + MOESIM_VERSION);
  app.require_subcommand(1);
  // A message may quote a value from the command line or a file: its control characters are
  // shown, not obeyed by the terminal (util::terminal_safe).
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return moesim::util::terminal_safe(CLI::FailureMessage::simple(a, e));
  });
  moesim::cli::add_plan_command(app);
  moesim::cli::add_run_command(app);
  moesim::cli::add_schema_command(app);
  moesim::cli::add_ops_command(app);
  moesim::cli::add_validate_command(app);
  moesim::cli::add_sweep_command(app);
  moesim::cli::add_merge_command(app);
  moesim::cli::add_compare_command(app);
  moesim::cli::add_collective_command(app);
  moesim::cli::add_search_command(app);
  moesim::cli::add_campaign_command(app);
  moesim::cli::add_calibrate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end with 0; any other command-line error is invalid input (2), not
    // one of CLI11's own codes (105, 106, ...) that the documented exit codes do not include.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const moesim::ConfigError& e) {
    // Options (--gpus, --output) are not configuration keys: no pointer to the key reference.
    const bool option = !e.file().empty() && e.file()[0] == '-';
    fmt::print(stderr, "error: {}\n{}", moesim::util::terminal_safe(e.what()),
               option ? "" : "  (see docs/scenarios.md for every key)\n");
    return 2;
  } catch (const moesim::InfeasibleError& e) {
    const bool layout = std::string_view(e.what()).rfind("infeasible layout", 0) == 0;
    fmt::print(stderr, "error: {}\n{}", moesim::util::terminal_safe(e.what()),
               layout ? "  (see docs/scenarios.md, section layout)\n" : "");
    return 3;
  } catch (const moesim::cli::OutputError& e) {
    fmt::print(stderr, "error: {}\n", moesim::util::terminal_safe(moesim::bounded_message(e.what())));
    return 4;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", moesim::util::terminal_safe(moesim::bounded_message(e.what())));
    return 1;
  }
  return 0;
}
