// Overlap has to pay where it should and cost nothing where it cannot help: EP overlap on the
// record layout, DP overlap hiding the gradient and parameter collectives, and the merged
// forward/backward step losing on an unbalanced, non-interleaved pipeline (docs/method.md).
#include <catch2/catch.hpp>

#include "moesim/driver/run.hpp"
#include "moesim/workload/step_builder.hpp"
#include "run_support.hpp"

using namespace moesim;

namespace {

}  // namespace

TEST_CASE("EP overlap on the record layout is worth at least 2 % of the step", "[engine][overlap]") {
  Scenario on = test::record_gb300();
  REQUIRE(on.recipe.ep_overlap);
  Scenario off = on;
  off.recipe.ep_overlap = false;
  const double with = test::run(on).metrics.step_time_s;
  const double without = test::run(off).metrics.step_time_s;
  INFO("with " << with << " s, without " << without << " s");
  CHECK(with <= 0.98 * without);
}

TEST_CASE("DP overlap hides every chunk's collectives but the first gather and the last reduction", "[engine][overlap]") {
  // Interleaved, 2 chunks per rank, 8 micro-batches; expert-DP of 1, so every DP collective is
  // a dense one over the same DP group and takes a time proportional to its bytes. Overlapped,
  // chunk 1's all-gather runs under chunk 0's forwards and its reduce-scatter under chunk 0's
  // backwards; chunk 0's gather (before the first forward) and reduction (after the last
  // backward) have nothing to hide behind.
  Scenario on = test::small_moe(4);
  on.layout.vpp = 2;
  on.layout.pipeline_layout = "Et|t|t|tL";
  on.training.global_batch = 256;
  on.recipe.overlap_grad_reduce = true;
  on.recipe.overlap_param_gather = true;
  Scenario off = on;
  off.recipe.overlap_grad_reduce = false;
  off.recipe.overlap_param_gather = false;
  const auto a = test::run(on);
  const auto b = test::run(off);
  const plan::Layout l = plan::make_layout(on);
  REQUIRE(l.edp == 1);
  const auto program = workload::build_step(on, l, test::calibration(on));
  for (int r = 0; r < l.pp; ++r) {
    double chunk0 = 0, all = 0;
    for (const auto& t : program.stages[r].tasks)
      if (t.kind == workload::TaskKind::collective && t.phase == workload::Phase::step) {
        all += t.bytes;
        if (t.label.rfind("chunk 0 ", 0) == 0) chunk0 += t.bytes;
      }
    const double exposed_on = a.sim.stages[r].breakdown.exposed_dp_s;
    const double exposed_off = b.sim.stages[r].breakdown.exposed_dp_s;
    INFO("rank " << r << ": exposed DP overlapped " << exposed_on << " s, not " << exposed_off
                 << " s; chunk 0 holds " << chunk0 / all << " of the DP bytes");
    REQUIRE(exposed_off > 0);
    CHECK(exposed_on < exposed_off);
    // On rank 0 chunk 1 is one MoE layer, whose gather hides under two forwards of chunk 0; on
    // rank 1 it holds the output head, whose gather takes longer than the two forwards of chunk
    // 0 that run before chunk 1's first forward, so part of it stays exposed there.
    if (r == 0) CHECK(exposed_on <= 1.1 * chunk0 / all * exposed_off);
  }
  // What is no longer exposed comes off the step, less what the overlapped collectives take
  // from the EP all-to-alls on shared ports.
  const double hidden = b.sim.stages[0].breakdown.exposed_dp_s - a.sim.stages[0].breakdown.exposed_dp_s;
  CHECK(b.metrics.step_time_s - a.metrics.step_time_s >= 0.9 * hidden);
}

TEST_CASE("EP overlap loses on an unbalanced, non-interleaved pipeline", "[engine][overlap]") {
  // Megatron's merged forward/backward step waits for both inputs: with one chunk per rank and
  // a heavier first stage, the last rank's merged steps wait for the slow rank's forwards that
  // they would otherwise not need yet.
  Scenario on = test::small_moe(4);
  on.layout.pipeline_layout = "Ettt|tL";
  on.training.global_batch = 256;  // 8 micro-batches
  on.recipe.ep_overlap = true;
  Scenario off = on;
  off.recipe.ep_overlap = false;
  const double with = test::run(on).metrics.step_time_s;
  const double without = test::run(off).metrics.step_time_s;
  INFO("with " << with << " s, without " << without << " s");
  CHECK(with > without);
}
