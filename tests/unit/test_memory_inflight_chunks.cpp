// Which chunks' activations memory holds at the schedule's peak, on an interleaved pipeline
// whose chunks differ in size (the in-flight count alone cannot tell them apart).
#include <catch2/catch.hpp>

#include "moesim/plan/memory.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;

TEST_CASE("Interleaved memory holds the chunks the schedule has in flight at its peak, by hand", "[plan][memory]") {
  // Rank 0 of pp 2 x 2 chunks, 8 micro-batches: chunk 0 has 3 dense layers, chunk 1 one.
  Scenario s = test::uniform_dense(2, 8, 2);
  s.model.layers = 6;
  s.layout.pipeline_layout = "Ettt|t|t|tL";
  REQUIRE_FALSE(s.recipe.ep_overlap);
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.chunks == 2);
  const double layer = plan::layer_activation_bytes(s, false);
  // Megatron's interleaved 1F1B on rank 0: warm-up (pp - 1) x 2 + (chunks - 1) x pp = 4
  // forwards (micro-batches 0, 1 of chunk 0, then of chunk 1), then forward/backward pairs:
  //   F c0 mb2 (held c0 3, c1 2: 11 layers), B c1 mb0 (3, 1), F c0 mb3 (4, 1: 13 layers),
  //   B c1 mb1 (4, 0), F c1 mb2 (4, 1: 13), B c0 mb0 (3, 1), ...
  // The peak holds 4 micro-batches of chunk 0 and 1 of chunk 1: 13 layers.
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 0);
  CHECK(m.activations_bytes == Approx(13 * layer).epsilon(1e-12));
  CHECK(m.inflight_chunks == 5);
}
