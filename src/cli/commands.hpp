#pragma once
// Private to src/cli: one function per subcommand, registered on the CLI11 app.
#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

namespace moesim::cli {

void add_plan_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_schema_command(CLI::App& app);
void add_ops_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_campaign_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);

// An output file that could not be written (exit code 4).
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Prints `text` to stdout, or writes it atomically to `output` when given, with control
// characters other than newline and tab escaped (util::terminal_safe).
void emit(const std::string& text, const std::string& output);

}  // namespace moesim::cli
