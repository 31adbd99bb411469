// The full fidelity's event core (src/engine/event_core.cpp) against closed forms where only it
// decides the answer: when it sees a NIC transfer end while the GPUs' own events run ahead of
// SimGrid's clock, and whether a transfer keeps the rate NCCL achieves below the port's.
#include <catch2/catch.hpp>

#include "moesim/engine/simulate.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/platform/nccl.hpp"
#include "moesim/plan/layout.hpp"
#include "run_support.hpp"

using namespace moesim;

TEST_CASE("A pipeline message over the NICs takes its closed form, whatever the GPUs do meanwhile",
          "[engine][event-core]") {
  // Two stages in two racks: the only NIC traffic is the pipeline's, one message at a time per
  // NIC and direction, so each takes bytes / NIC rate + the route's latency exactly. With the
  // default variability every GPU's compute events come at dates of their own while a message
  // is in flight; the core runs them ahead of SimGrid's clock only up to the earliest date a
  // transfer could end, so it sees each end at its date.
  Scenario s = test::small_moe(4);
  const driver::RunResult r = test::run(s, platform::Fidelity::full, true);
  const platform::Topology topo =
      platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision);
  int checked = 0;
  for (const engine::StageResult& st : r.sim.stages) {
    const auto& tasks = r.program.stages[static_cast<std::size_t>(st.pp_rank)].tasks;
    for (const engine::TaskInterval& iv : st.timeline) {
      const workload::Task& t = tasks[static_cast<std::size_t>(iv.task)];
      if (t.kind != workload::TaskKind::pp_send || t.bytes <= 0) continue;
      const double expected = static_cast<double>(static_cast<std::uint64_t>(t.bytes)) / topo.nic_bytes_per_s +
                              topo.scaleout_latency_s();
      INFO("stage " << st.pp_rank << ", task " << iv.task << " from " << iv.start_s << " s");
      CHECK(iv.end_s - iv.start_s == Approx(expected).epsilon(1e-9));
      ++checked;
    }
  }
  CHECK(checked >= 4);  // forward activations and backward gradients of 2 micro-batches
}

TEST_CASE("A collective across racks keeps NCCL's achieved NIC rate in full fidelity", "[engine][event-core]") {
  // One all-reduce between two GPUs in two racks (an expert-data-parallel group of 64 GPUs with
  // EP 32): NIC bytes only, at the rate NCCL achieves below the NIC's, so the step is its plan's
  // closed form; a transfer at the port's rate would end early.
  Scenario s = test::identical_gpus(test::small_moe(4));
  s.layout.pp = 1;
  const plan::Layout l = plan::make_layout(s);
  const platform::Topology topo =
      platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision);
  const platform::Group edp{l.edp_group(0)};
  REQUIRE(edp.ranks.size() == 2);
  REQUIRE(topo.domain_of(edp.ranks[0]) != topo.domain_of(edp.ranks[1]));
  const double bytes = 4e9;
  const platform::CollectivePlan plan = platform::plan_collective(topo, platform::CollectiveKind::all_reduce, edp, bytes, 0);
  REQUIRE(plan.load.nvlink_bytes == 0);
  REQUIRE(plan.load.nic_bytes > 0);
  REQUIRE(plan.load.nic_bytes_per_s > 0);
  REQUIRE(plan.load.nic_bytes_per_s < 0.95 * topo.nic_bytes_per_s);
  workload::Task t;
  t.kind = workload::TaskKind::collective;
  t.stream = workload::Stream::dp_comm;
  t.activity = workload::Activity::dp_grad_sync;
  t.collective = platform::CollectiveKind::all_reduce;
  t.group = workload::GroupRole::edp;
  t.bytes = bytes;
  t.label = "all-reduce";
  workload::StepProgram program;
  program.stages.resize(1);
  program.stages[0].tasks = {t};
  engine::Options o;
  o.fidelity = platform::Fidelity::full;
  const engine::SimResult r = engine::simulate(s, l, program, o);
  CHECK(r.step_time_s == Approx(plan.seconds).epsilon(1e-6));
}

TEST_CASE("A GPU's kept collective plans change nothing: the same step as planning every run anew",
          "[engine][event-core]") {
  // The core keeps each GPU's plan of a collective from its first run (KeptPlan). Under routed-load
  // imbalance an EP exchange moves each micro-batch's own tokens, so nothing may be kept: a plan
  // kept there would price every later exchange at the first one's load.
  Scenario imbalanced = test::small_moe(4);
  imbalanced.recipe.force_balanced_routing = false;
  imbalanced.variability.expert_load_sigma = 0.3;
  for (const Scenario& s : {test::identical_gpus(test::small_moe(4)), imbalanced}) {
    driver::RunOptions o;
    o.engine.fidelity = platform::Fidelity::full;
    o.configs_dir = test::configs_dir().string();
    const driver::RunResult kept = driver::run_scenario(s, o);
    o.engine.reuse_plans = false;
    const driver::RunResult anew = driver::run_scenario(s, o);
    INFO("balanced routing: " << s.recipe.force_balanced_routing);
    CHECK(kept.metrics.step_time_s == anew.metrics.step_time_s);
    REQUIRE(kept.sim.stages.size() == anew.sim.stages.size());
    for (std::size_t k = 0; k < kept.sim.stages.size(); ++k) {
      CHECK(kept.sim.stages[k].finish_s == anew.sim.stages[k].finish_s);
      CHECK(kept.sim.stages[k].traffic.ep_nvlink_bytes == anew.sim.stages[k].traffic.ep_nvlink_bytes);
    }
  }
}
