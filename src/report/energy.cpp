// Energy per step from the per-state times of each pipeline rank (see energy.hpp).
#include "moesim/report/energy.hpp"

#include <algorithm>

namespace moesim::report {

namespace {

constexpr double kJoulesPerKwh = 3.6e6;

double computing_seconds(const engine::Breakdown& b, double busy_share) {
  return b.compute_s * busy_share + b.optimizer_s;
}

}  // namespace

double gpu_joules(const engine::Breakdown& b, const GpuSpec& gpu, double busy_share) {
  // The GPU computes busy_share of the observed one's kernel time; the rest of that time it
  // waits for slower peers at the collective that ends the stretch, as a GPU in a communication
  // kernel does. (A share above 1, a faster observed GPU, takes the extra compute out of its
  // waiting, then out of its idle time.)
  const double busy_s = b.compute_s * busy_share;
  const double computing_s = busy_s + b.optimizer_s;  // recompute is part of compute_s
  double communicating_s = b.exposed_tp_s + b.exposed_ep_dispatch_s + b.exposed_ep_combine_s + b.exposed_pp_s +
                           b.exposed_dp_s + (b.compute_s - busy_s);
  double idle_s = b.bubble_s + b.host_overhead_s;
  if (communicating_s < 0) {
    idle_s = std::max(0.0, idle_s + communicating_s);
    communicating_s = 0;
  }
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
    e.gpu_j += st.replicas * gpu_joules(st.breakdown, s.system.gpu, st.mean_busy_share);
    e.computing_gpu_s += st.replicas * computing_seconds(st.breakdown, st.mean_busy_share);
    counted += st.replicas;
  }
  if (counted > 0 && counted != s.gpus) {
    e.gpu_j *= static_cast<double>(s.gpus) / counted;
    e.computing_gpu_s *= static_cast<double>(s.gpus) / counted;
  }
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
