// moesim calibrate: what a user measured on their own cluster (nccl-tests tables, DeepEP's and
// HybridEP's benchmark outputs), fitted into the system's NCCL parameters and the dispatchers'
// kernel rates and written as an overlay that --calibration layers over the bundled system
// (src/calibrate, docs/calibration.md).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/calibrate/dispatcher_fit.hpp"
#include "moesim/calibrate/kernel_fit.hpp"
#include "moesim/calibrate/nccl_fit.hpp"
#include "moesim/calibrate/nccl_tests.hpp"
#include "moesim/calibrate/tool_output.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::cli {

namespace {

struct CalibrateOptions {
  std::vector<std::string> inputs;
  calibrate::ToolHints hints;
  std::string kernels;
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

  std::vector<calibrate::NcclTestsTable> nccl_tables;
  std::vector<calibrate::DispatcherTestsOutput> dispatcher_outputs;
  std::vector<calibrate::KernelTable> kernel_tables;
  for (const std::string& in : o.inputs) {
    calibrate::ToolOutput read = calibrate::parse_tool_output(config::read_text_file(in), in, o.hints);
    switch (read.tool) {
      case calibrate::Tool::nccl_tests: nccl_tables.push_back(std::move(read.nccl)); break;
      case calibrate::Tool::dispatcher_tests: dispatcher_outputs.push_back(std::move(read.dispatcher)); break;
      case calibrate::Tool::kernel_table: kernel_tables.push_back(std::move(read.kernels)); break;
    }
  }
  std::vector<calibrate::MeasuredTable> tables = calibrate::nccl_measured_tables(target, nccl_tables);
  for (calibrate::MeasuredTable& t : calibrate::dispatcher_measured_tables(target, dispatcher_outputs, o.kernels))
    tables.push_back(std::move(t));
  for (calibrate::MeasuredTable& t : calibrate::kernel_measured_tables(target, kernel_tables))
    tables.push_back(std::move(t));
  const calibrate::Calibration fit = calibrate::fit_tables(target.system, tables);
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
      "calibrate", "Fit a system's NCCL parameters, its dispatchers' and its kernels' rates to nccl-tests, DeepEP, "
                   "HybridEP and kernel timing outputs measured on it and write a calibration overlay for --calibration "
                   "(docs/calibration.md)");
  auto o = std::make_shared<CalibrateOptions>();
  cmd->add_option("inputs", o->inputs, "outputs as printed: nccl-tests (all_reduce_perf, all_gather_perf, "
                                       "reduce_scatter_perf, alltoall_perf, sendrecv_perf), DeepEP's test_intranode.py "
                                       "and test_internode.py, HybridEP's test_hybrid_ep.py, kernel timing tables "
                                       "(CSV)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--system", o->target.system, "the system in configs/systems/ they were measured on")->required();
  cmd->add_option("--configs", o->configs, "configs/ directory (default: found from the current directory)");
  cmd->add_option("--op", o->hints.nccl.op,
                  "the collective, for outputs without nccl-tests' banner (all-reduce, all-gather, reduce-scatter, "
                  "all-to-all, send-recv)")
      ->check(CLI::IsMember({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send-recv"}));
  cmd->add_option("--ranks", o->hints.nccl.ranks,
                  "ranks of the runs, for outputs that do not list every rank (DeepEP's tests: always)")
      ->check(CLI::Range(2, driver::kMaxCollectiveCount));
  cmd->add_option("--algo", o->hints.nccl.algo, "NCCL_ALGO the runs forced, when NCCL's log is not in the output")
      ->check(CLI::IsMember(driver::forceable_algorithm_names()));
  cmd->add_option("--gpus-per-domain", o->target.gpus_per_domain,
                  "GPUs the runs used per NVLink domain (0: whole domains), as `moesim collective` takes it")
      ->check(CLI::Range(0, driver::kMaxCollectiveCount));
  cmd->add_option("--kernels", o->kernels,
                  "the file of configs/dispatchers/ the DeepEP or HybridEP outputs calibrate (default: deepep, "
                  "hybridep)");
  auto& d = o->hints.dispatcher;
  cmd->add_option("--experts", d.experts, "experts of the DeepEP or HybridEP runs (default: the tests' own, 256 for "
                                          "DeepEP, 8 per rank for HybridEP)")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount));
  cmd->add_option("--sms", d.sms, "SMs of the HybridEP runs (NUM_SMS_DISPATCH; default: the library's, 24 in one "
                                  "NVLink domain, 8 across); DeepEP prints its own")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount));
  cmd->add_option("--tokens", d.tokens, "tokens per rank of the HybridEP runs (NUM_TOKENS_PER_RANK; default 4096)")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount));
  cmd->add_option("--hidden", d.hidden, "hidden size of the HybridEP runs (HIDDEN_DIM; default 7168)")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount));
  cmd->add_option("--topk", d.topk, "top-k of the HybridEP runs (TOPK; default 8)")
      ->check(CLI::Range(1, driver::kMaxCollectiveCount));
  cmd->add_option("-o,--output", o->output, "the overlay to write (JSON)");
  cmd->add_option("--format", o->format, "text (the residual tables) or json (the overlay, on stdout without -o)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace moesim::cli
