// Energy per step from the per-state times: hand-computed on a made-up breakdown, and the
// invariants of a simulated step (GPU energy between idle and TDP power, tokens per kWh from
// the step's tokens).
#include <catch2/catch.hpp>

#include "moesim/report/energy.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

TEST_CASE("a GPU's step energy is its time in each state at that state's power", "[energy]") {
  GpuSpec g;
  g.tdp_w = 1000;
  g.communication_w = 400;
  g.idle_w = 100;
  engine::Breakdown b;
  b.compute_s = 2.0;
  b.recompute_s = 0.5;  // part of compute_s, not counted twice
  b.optimizer_s = 0.1;
  b.exposed_ep_dispatch_s = 0.2;
  b.exposed_ep_combine_s = 0.1;
  b.exposed_tp_s = 0.05;
  b.exposed_pp_s = 0.05;
  b.exposed_dp_s = 0.1;
  b.bubble_s = 0.3;
  b.host_overhead_s = 0.1;
  // Computing 2.1 s at 1 kW, communicating 0.5 s at 400 W, idle 0.4 s at 100 W.
  CHECK(report::gpu_joules(b, g) == Approx(2100 + 200 + 40));
}

TEST_CASE("the energy of a simulated step is bounded by idle and TDP power", "[energy]") {
  driver::RunOptions o;
  o.configs_dir = test::configs_dir().string();
  const driver::RunResult r = driver::run_scenario(test::small_moe(), o);
  const report::StepEnergy e = report::step_energy(r);
  const Scenario& s = r.scenario;
  const double step = r.metrics.step_time_s;
  CHECK(e.gpu_j > s.gpus * step * s.system.gpu.idle_w);
  CHECK(e.gpu_j < s.gpus * step * s.system.gpu.tdp_w);
  CHECK(e.node_j == Approx(s.gpus * step * s.system.node_watts_per_gpu));
  CHECK(e.average_gpu_w == Approx(e.gpu_j / s.gpus / step));
  const double tokens = double(s.training.global_batch) * s.training.seq_len;
  CHECK(e.tokens_per_kwh == Approx(tokens / (e.total_j() / 3.6e6)));
  CHECK(e.gpu_tokens_per_kwh > e.tokens_per_kwh);
  CHECK(e.tflops_per_kw == Approx(r.metrics.tflops_per_gpu / (e.average_gpu_w / 1e3)));
}
