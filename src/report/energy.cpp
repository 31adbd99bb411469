// Energy per step from the per-state times of each pipeline rank (see energy.hpp).
#include "moesim/report/energy.hpp"

namespace moesim::report {

namespace {

constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace

double gpu_joules(const engine::Breakdown& b, const GpuSpec& gpu) {
  const double computing_s = b.compute_s + b.optimizer_s;  // recompute is part of compute_s
  const double communicating_s =
      b.exposed_tp_s + b.exposed_ep_dispatch_s + b.exposed_ep_combine_s + b.exposed_pp_s + b.exposed_dp_s;
  const double idle_s = b.bubble_s + b.host_overhead_s;
  return computing_s * gpu.tdp_w + communicating_s * gpu.communication_w + idle_s * gpu.idle_w;
}

StepEnergy step_energy(const driver::RunResult& r) {
  StepEnergy e;
  const Scenario& s = r.scenario;
  const double step_s = r.metrics.step_time_s;
  if (step_s <= 0 || s.gpus <= 0) return e;
  // Each observed rank stands for `replicas` GPUs; a rank that finishes early idles until the
  // step ends (its breakdown covers the whole step already).
  int counted = 0;
  for (const auto& st : r.sim.stages) {
    e.gpu_j += st.replicas * gpu_joules(st.breakdown, s.system.gpu);
    counted += st.replicas;
  }
  if (counted > 0 && counted != s.gpus) e.gpu_j *= static_cast<double>(s.gpus) / counted;
  e.node_j = s.system.node_watts_per_gpu * s.gpus * step_s;
  e.average_gpu_w = e.gpu_j / s.gpus / step_s;
  e.j_per_gpu = e.total_j() / s.gpus;
  const double tokens = static_cast<double>(s.training.global_batch) * s.training.seq_len;
  e.tokens_per_kwh = tokens / (e.total_j() / kJoulesPerKwh);
  e.gpu_tokens_per_kwh = tokens / (e.gpu_j / kJoulesPerKwh);
  e.tflops_per_kw = r.metrics.tflops_per_gpu / (e.average_gpu_w / 1e3);
  e.cluster_tflops_per_kw = r.metrics.tflops_per_gpu * s.gpus / (e.total_j() / step_s / 1e3);
  return e;
}

}  // namespace moesim::report
