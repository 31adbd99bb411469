// Activation offloading (recipe.offload): what leaves the GPU's memory, the copies over the host
// link and when they would cost time.
#include <catch2/catch.hpp>

#include <cmath>

#include "config_test_support.hpp"
#include "moesim/config/error.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/plan/saved_tensors.hpp"
#include "moesim/workload/expert_load.hpp"
#include "moesim/workload/step_builder.hpp"
#include "run_support.hpp"

using namespace moesim;

namespace {

Scenario jax_gb300() { return test::bundled("scenarios/frameworks/published/jax-gb300-256.json"); }

}  // namespace

TEST_CASE("Offloading moe_act moves the experts' fc1 output to host memory, nothing else", "[offload][memory]") {
  Scenario s = jax_gb300();
  REQUIRE(s.recipe.offloads("moe_act"));
  // By hand: 6 x 4,096 tokens x top-8 rows of the fc1 output (2 x 2,048 wide), BF16.
  const double per_layer = 6.0 * 4096 * 8 * 2 * 2048 * 2;
  CHECK(plan::offloaded_activation_bytes(s, true) == Approx(per_layer).epsilon(1e-12));
  CHECK(plan::offloaded_activation_bytes(s, false) == 0);
  const plan::Layout l = plan::make_layout(s);
  const double with = plan::rank_memory(s, l, 0).activations_bytes;
  Scenario kept = s;
  kept.recipe.offload.clear();
  const double without = plan::rank_memory(kept, l, 0).activations_bytes;
  CHECK(without - with == Approx(58 * per_layer).epsilon(1e-9));  // 58 MoE layers, one micro-batch in flight
  // A recomputed activation keeps nothing to offload.
  kept = s;
  kept.recipe.recompute = {"moe_act"};
  CHECK(plan::offloaded_activation_bytes(kept, true) == 0);
}

TEST_CASE("Each MoE layer's offloaded activations go out once and come back once over the host link",
          "[offload][bytes]") {
  const Scenario s = jax_gb300();
  const plan::Layout l = plan::make_layout(s);
  const auto prog = workload::build_step(s, l, test::calibration(s));
  int out = 0, back = 0;
  const double per_layer = plan::offloaded_activation_bytes(s, true);
  for (const auto& t : prog.stages[0].tasks) {
    if (t.kind != workload::TaskKind::host_copy) continue;
    CHECK(t.stream == workload::Stream::host_copy);
    CHECK(t.bytes == Approx(per_layer).epsilon(1e-12));
    CHECK(t.seconds == Approx(per_layer / 225e9).epsilon(1e-12));  // GB300's NVLink-C2C share, per direction
    (t.phase == workload::Phase::forward ? out : back) += 1;
  }
  CHECK(out == 58);
  CHECK(back == 58);
}

TEST_CASE("Offload copies hide behind the layers when the host link keeps up, and cost time when it does not",
          "[offload][overlap]") {
  Scenario s = jax_gb300();
  Scenario kept = s;
  kept.recipe.offload.clear();
  const double base = test::run(kept).metrics.step_time_s;
  const auto fast = test::run(s);
  // C2C: 1.6 GB in 7 ms per layer beside about 60 ms of its compute: hidden but for the first reload.
  CHECK(fast.metrics.step_time_s == Approx(base).epsilon(0.005));
  s.system.host_link_bytes_per_s = 2e9;  // 0.8 s per copy: the backward waits for every reload
  const auto slow = test::run(s);
  const double copy_s = plan::offloaded_activation_bytes(s, true) / 2e9;
  CHECK(slow.metrics.step_time_s > base + 20 * copy_s);
  CHECK(slow.sim.stages[0].breakdown.host_overhead_s > 20 * copy_s);
}

TEST_CASE("Offloading is refused without a host link or by a stack that cannot", "[offload][config]") {
  test::TempTree tree("offload-refusals");
  const auto no_link = tree.write("s1.json", R"({"name": "x", "system": {"base": "gb300-nvl72", "host_link_gbytes_per_s": 0},
    "gpus": 256, "model": "deepseek-v3", "stack": "maxtext-jax-toolbox-26.09",
    "training": {"global_batch": 1536, "micro_batch": 6, "precision": "mxfp8"},
    "layout": {"ep": 8, "gpus_per_domain": 64, "sharding": "fsdp"}})");
  const auto e = test::thrown<ConfigError>([&] { config::load_scenario(no_link, {tree.configs()}); }, "no host link");
  CHECK(std::string(e.what()).find("recipe.offload") != std::string::npos);
  const auto megatron = tree.write("s2.json", R"({"name": "x", "system": "gb300-nvl72", "gpus": 256, "model": "deepseek-v3",
    "stack": "megatron-bridge-26.06", "recipe": {"offload": ["moe_act"]},
    "training": {"global_batch": 4096, "precision": "mxfp8", "mtp_layers": 1},
    "layout": {"pp": 2, "vpp": 8, "ep": 32, "gpus_per_domain": 64}})");
  const auto m = test::thrown<ConfigError>([&] { config::load_scenario(megatron, {tree.configs()}); }, "stack offload");
  CHECK(std::string(m.what()).find("cannot offload moe_act") != std::string::npos);
}

TEST_CASE("A capacity factor drops the normal's partial expectation of the load above it", "[offload][routing]") {
  workload::ExpertLoad e;
  e.balanced = false;
  e.step_cv = 0.3;
  e.capacity = 1;
  // At the mean: sigma x phi(0) = 0.3 / sqrt(2 pi).
  CHECK(e.dropped_fraction() == Approx(0.3 / std::sqrt(2 * M_PI)).epsilon(1e-12));
  e.capacity = 1.6;  // two sigmas up: sigma phi(2) - 0.6 (1 - Phi(2))
  CHECK(e.dropped_fraction() == Approx(0.3 * 0.05399096651318806 - 0.6 * 0.022750131948179195).epsilon(1e-9));
  e.capacity = 0;  // dropless
  CHECK(e.dropped_fraction() == 0);
  // The JAX reference routes by a trained router at capacity 1.0: its run reports the drop.
  const auto r = test::run(jax_gb300());
  CHECK(r.metrics.dropped_token_fraction > 0.001);
  CHECK(r.metrics.dropped_token_fraction == Approx(workload::expert_load(jax_gb300(), r.layout).dropped_fraction()));
}
