// Pipeline schedules: Megatron's (interleaved) 1F1B order.
#include <catch2/catch.hpp>

#include <set>

#include "moesim/workload/step_builder.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;
using workload::Phase;

namespace {

void check_complete(const plan::Layout& l, int rank) {
  const auto order = workload::pipeline_schedule(l, rank);
  REQUIRE(order.size() == static_cast<size_t>(2 * l.microbatches * l.vpp));
  std::set<std::pair<int, int>> forward_done;
  std::set<std::pair<int, int>> seen_f, seen_b;
  for (const auto& e : order) {
    const auto key = std::make_pair(e.microbatch, e.chunk);
    if (e.phase == Phase::forward) {
      CHECK(seen_f.insert(key).second);
    } else {
      CHECK(seen_f.count(key) == 1);  // a backward never precedes its forward
      CHECK(seen_b.insert(key).second);
    }
  }
  CHECK(seen_f.size() == static_cast<size_t>(l.microbatches * l.vpp));
  CHECK(seen_b.size() == seen_f.size());
}

int warmup_of(const plan::Layout& l, int rank) {
  const auto order = workload::pipeline_schedule(l, rank);
  int n = 0;
  while (order[n].phase == Phase::forward && !(n + 1 < static_cast<int>(order.size()) && order[n + 1].paired)) ++n;
  return n;
}

}  // namespace

TEST_CASE("1F1B runs every forward and backward once, warm-up pp - rank - 1", "[workload]") {
  const plan::Layout l = plan::make_layout(test::uniform_dense(4, 8));
  for (int r = 0; r < 4; ++r) {
    check_complete(l, r);
    CHECK(warmup_of(l, r) == 4 - r - 1);
  }
  const auto last = workload::pipeline_schedule(l, 3);
  CHECK(last[0].phase == Phase::forward);
  CHECK(last[1].phase == Phase::backward);  // the last stage alternates from the start
  CHECK(last[1].microbatch == 0);
}

TEST_CASE("Interleaved 1F1B follows Megatron's chunk order", "[workload]") {
  const plan::Layout l = plan::make_layout(test::uniform_dense(4, 8, 2));
  for (int r = 0; r < 4; ++r) {
    check_complete(l, r);
    CHECK(warmup_of(l, r) == (4 - r - 1) * 2 + (2 - 1) * 4);
  }
  const auto order = workload::pipeline_schedule(l, 0);
  // Forwards run pp micro-batches of chunk 0, then the same ones on chunk 1, then the next pp.
  std::vector<std::pair<int, int>> first;
  for (int k = 0; k < 10; ++k) first.emplace_back(order[k].microbatch, order[k].chunk);
  CHECK(first == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1},
                                                  {1, 1}, {2, 1}, {3, 1}, {4, 0}, {5, 0}});
  // Backwards start from the last chunk.
  for (const auto& e : order)
    if (e.phase == Phase::backward) {
      CHECK(e.chunk == 1);
      CHECK(e.microbatch == 0);
      break;
    }
}
