// moesim calibrate: what a user measured on their own cluster (nccl-tests tables), fitted into the
// system's NCCL parameters and written as an overlay that --calibration layers over the bundled
// system (src/calibrate, docs/calibration.md).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/calibrate/nccl_fit.hpp"
#include "moesim/calibrate/nccl_tests.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::cli {

namespace {

struct CalibrateOptions {
  std::vector<std::string> inputs;
  calibrate::NcclTestsHints hints;
  calibrate::CalibrationTarget target;
  std::string configs, output, format = "text";
};

void run_calibrate(const CalibrateOptions& o) {
  calibrate::CalibrationTarget target = o.target;
  target.configs_dir = config::find_configs_dir(std::filesystem::current_path() / "calibrate", o.configs);
  CommandFiles files;
  for (const std::string& in : o.inputs) files.input(in, "a measured output");
  files.output(o.output, "--output");
  files.refuse_clashes();

  std::vector<calibrate::NcclTestsTable> tables;
  for (const std::string& in : o.inputs) {
    const std::string text = config::read_text_file(in);
    if (!calibrate::looks_like_nccl_tests(text))
      throw ConfigError(in, "line 1",
                        "nccl-tests output (its banner \"# Collective test starting:\" or its column header \"#  size  "
                        "count  type ...\"); DeepEP, HybridEP and kernel tables are not read yet");
    tables.push_back(calibrate::parse_nccl_tests(text, in, o.hints));
  }
  const calibrate::NcclCalibration fit = calibrate::fit_nccl_tables(target, tables);
  const std::string overlay = calibrate::overlay_json(fit).dump(2) + "\n";
  if (o.format == "json") {  // to the file, or to stdout without one
    emit(overlay, o.output);
    return;
  }
  const bool to_file = !o.output.empty() && o.output != "-";  // "-": the table is stdout already
  if (to_file) emit(overlay, o.output);
  std::string text = calibrate::calibration_text(fit);
  text += !to_file ? "\nWrite the overlay with -o FILE; use it with --calibration FILE (run, sweep, search, "
                             "collective, validate).\n"
                           : fmt::format("\nOverlay written to {}; use it with --calibration {}\n", o.output, o.output);
  emit(text, "");
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit a system's NCCL parameters to nccl-tests outputs measured on it and write a calibration "
                   "overlay for --calibration (docs/calibration.md)");
  auto o = std::make_shared<CalibrateOptions>();
  cmd->add_option("inputs", o->inputs, "nccl-tests outputs (all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
                                       "alltoall_perf, sendrecv_perf), as printed")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--system", o->target.system, "the system in configs/systems/ they were measured on")->required();
  cmd->add_option("--configs", o->configs, "configs/ directory (default: found from the current directory)");
  cmd->add_option("--op", o->hints.op,
                  "the collective, for outputs without nccl-tests' banner (all-reduce, all-gather, reduce-scatter, "
                  "all-to-all, send-recv)")
      ->check(CLI::IsMember({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send-recv"}));
  cmd->add_option("--ranks", o->hints.ranks, "ranks of the runs, for outputs that do not list every rank")
      ->check(CLI::Range(2, driver::kMaxCollectiveCount));
  cmd->add_option("--algo", o->hints.algo, "NCCL_ALGO the runs forced, when NCCL's log is not in the output")
      ->check(CLI::IsMember(driver::forceable_algorithm_names()));
  cmd->add_option("--gpus-per-domain", o->target.gpus_per_domain,
                  "GPUs the runs used per NVLink domain (0: whole domains), as `moesim collective` takes it")
      ->check(CLI::Range(0, driver::kMaxCollectiveCount));
  cmd->add_option("-o,--output", o->output, "the overlay to write (JSON)");
  cmd->add_option("--format", o->format, "text (the residual tables) or json (the overlay, on stdout without -o)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace moesim::cli
