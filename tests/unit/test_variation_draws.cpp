// Full fidelity's per-GPU draws (workload/variation.hpp) against the spreads they are meant to
// have: a task's kernel jitter over sqrt(kernels), and a rank's routed tokens split into the
// per-step share all its micro-batches keep and the per-micro-batch count around it, capped at
// the capacity factor. Thousands of counter-based draws each; the bars (5 % of a spread) were set
// before the runs, about five standard errors of the estimates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "moesim/plan/layout.hpp"
#include "moesim/workload/variation.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

double sample_sd(const std::vector<double>& x) {
  double mean = 0, sq = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) sq += (v - mean) * (v - mean);
  return std::sqrt(sq / static_cast<double>(x.size() - 1));
}

// The small MoE with no spread of any kind; each test turns on the one it checks.
Scenario without_spread() {
  Scenario s = test::small_moe(4);
  s.variability = VariabilitySpec{};
  s.recipe.force_balanced_routing = true;
  return s;
}

}  // namespace

TEST_CASE("a task's kernel jitter averages over its kernels", "[variability]") {
  Scenario s = without_spread();
  s.variability.kernel_jitter_cv = 0.08;
  const plan::Layout l = plan::make_layout(s);
  const workload::StepProgram program;  // full fidelity draws per GPU and task, not per program
  const workload::Variation v(s, l, program, workload::VariationMode::full);
  REQUIRE(v.active());
  workload::Task t;
  t.seconds = 1.5;  // 0.5 s of host launches, which do not jitter
  t.gpu_seconds = 1;
  t.kernels = 16;
  std::vector<double> gpu_s;
  for (int rank = 0; rank < l.world; ++rank)
    for (int task = 0; task < 200; ++task) gpu_s.push_back(v.compute_seconds(rank, 0, task, t) - 0.5);
  CHECK(sample_sd(gpu_s) == Approx(0.08 / std::sqrt(16.0)).epsilon(0.05));
}

TEST_CASE("a rank's routed tokens: a share per step and layer, a count per micro-batch, capped", "[variability]") {
  Scenario s = without_spread();
  s.variability.expert_load_sigma = 0.6;
  s.recipe.force_balanced_routing = false;
  const plan::Layout l = plan::make_layout(s);
  const workload::StepProgram program;
  const workload::Variation v(s, l, program, workload::VariationMode::full);
  const workload::ExpertLoad& load = v.expert_load();
  REQUIRE_FALSE(load.balanced);
  // Two micro-batches of each (rank, layer): their mean carries the step's share (plus half the
  // micro-batch variance), their difference only the micro-batches' counts (sqrt 2 of one).
  std::vector<double> share, difference;
  for (int rank = 0; rank < l.world; ++rank)
    for (int layer = 0; layer < 200; ++layer) {
      const double a = v.routed_load(rank, layer, 0), b = v.routed_load(rank, layer, 1);
      share.push_back((a + b) / 2);
      difference.push_back(a - b);
    }
  const double mb = load.microbatch_cv;
  CHECK(sample_sd(difference) / std::sqrt(2.0) == Approx(mb).epsilon(0.05));
  CHECK(sample_sd(share) == Approx(std::sqrt(load.step_cv * load.step_cv + mb * mb / 2)).epsilon(0.05));

  SECTION("a capacity factor caps every draw, and the cap is reached") {
    s.recipe.capacity_factor = 1.1;
    const workload::Variation capped(s, l, program, workload::VariationMode::full);
    double highest = 0;
    for (int rank = 0; rank < l.world; ++rank)
      for (int layer = 0; layer < 50; ++layer) highest = std::max(highest, capped.routed_load(rank, layer, 0));
    CHECK(highest == 1.1);
  }
}
