#include "moesim/driver/run.hpp"

#include "moesim/model/flops.hpp"

#include <fmt/format.h>

#include <climits>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/checks.hpp"
#include "moesim/driver/work_estimate.hpp"
#include "moesim/model/flops.hpp"
#include "moesim/workload/expert_load.hpp"
#include "moesim/workload/step_builder.hpp"

namespace moesim::driver {

std::filesystem::path calibration_path(const Scenario& s, const RunOptions& options) {
  if (!options.calibration_file.empty()) return options.calibration_file;
  const auto dir = options.configs_dir.empty() ? config::find_configs_dir(s.file)
                                               : std::filesystem::path(options.configs_dir);
  return cost::default_calibration_file(dir);
}

cost::KernelCalibration load_kernel_calibration(const Scenario& s, const RunOptions& options) {
  cost::KernelCalibration c = cost::load_calibration(calibration_path(s, options), s.calibrated_kernels,
                                                     s.calibrated_kernel_sources, s.calibration);
  cost::use_cudnn_version(c, s.stack.cudnn_version);
  return c;
}

RunResult run_scenario(const Scenario& s, const RunOptions& options) {
  RunResult r;
  r.scenario = s;
  r.layout = plan::make_layout(s);
  r.memory = plan::memory_per_stage(s, r.layout);
  for (const auto& m : r.memory) {
    if (m.fits()) continue;
    r.fits_in_memory = false;
    r.warnings.push_back(fmt::format(
        "pipeline rank {} needs {:.1f} GB but the {} has {:.1f} GB usable: this layout would run "
        "out of memory (simulated anyway); `moesim plan` simulates the changes that would make it fit",
        m.pp_rank, m.total_bytes() / 1e9, s.system.gpu.name, m.usable_bytes / 1e9));
  }
  const cost::KernelCalibration calibration = load_kernel_calibration(s, options);
  const WorkEstimate work = estimate_work(r.layout, workload::task_counts(s, r.layout, calibration), options.engine);
  refuse_oversized(work, available_memory_bytes(), options.force);
  const workload::StepProgram program = workload::build_step(s, r.layout, calibration);
  check_simulation_inputs(s, program, options.engine.fidelity);
  r.sim = engine::simulate(s, r.layout, program, options.engine);
  if (options.engine.record_timeline) r.program = program;

  Metrics& m = r.metrics;
  m.step_time_s = r.sim.step_time_s;
  m.model_flop_per_gpu = program.model_flop_per_gpu;
  m.tflops_per_gpu = m.model_flop_per_gpu / m.step_time_s / 1e12;
  m.tokens_per_s_per_gpu =
      static_cast<double>(s.training.global_batch) * s.training.seq_len / m.step_time_s / s.gpus;
  m.dropped_token_fraction = workload::expert_load(s, r.layout).dropped_fraction();
  m.framework_tflops_per_gpu = m.tokens_per_s_per_gpu * model::framework_flops_per_token(s.model, s.training.seq_len,
                                                                                      s.training.mtp_layers,
                                                                                      s.stack.flops_formula) / 1e12;
  m.peak_tflops = s.system.gpu.peak_flop_per_s(s.training.precision) / 1e12;
  m.mfu = m.tflops_per_gpu / m.peak_tflops;
  check_result(s, m.step_time_s, m.tflops_per_gpu, m.peak_tflops);
  return r;
}

Scenario scaled_to(const Scenario& s, int gpus) {
  Scenario out = s;
  out.gpus = gpus;
  // Weak scaling keeps the per-replica batch: the global batch grows with data parallelism. It
  // must stay a whole, positive int: a sweep's or a search's GPU count once wrapped it negative
  // or shrank it to 0 sequences, and the layout's refusal blamed that batch (found by fuzzing).
  const long long batch = static_cast<long long>(s.training.global_batch) * gpus / s.gpus;
  if (batch > INT_MAX)
    throw InfeasibleError(fmt::format("{} GPUs: weak scaling would grow the global batch from {} at {} GPUs to {}, "
                                      "beyond 2^31 - 1 = {}: use fewer GPUs or a smaller global batch",
                                      gpus, s.training.global_batch, s.gpus, batch, INT_MAX));
  if (batch < 1)
    throw InfeasibleError(fmt::format("{} GPUs: weak scaling would shrink the global batch from {} at {} GPUs to {:g} "
                                      "sequences: use more GPUs or a larger global batch",
                                      gpus, s.training.global_batch, s.gpus,
                                      static_cast<double>(s.training.global_batch) * gpus / s.gpus));
  out.training.global_batch = static_cast<int>(batch);
  out.layout.dp = 0;
  out.name = fmt::format("{} @ {} GPUs", s.name, gpus);
  if (out.published) out.published.reset();  // the published figure belongs to the original size
  return out;
}

}  // namespace moesim::driver
