// Pipeline schedules: every pass once and in a causal order, Megatron's warm-up, and the bubble
// and activation memory of each schedule against the DeepSeek-V3 report's Table 2 (the same
// table is the DualPipe README's), replayed on the schedule order with given pass times.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "moesim/plan/layout.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/plan/schedule.hpp"
#include "scenario_fixtures.hpp"
#include "schedule_replay.hpp"

using namespace moesim;
using plan::Pass;
using test::Replay;
using test::Times;
using test::bubble;
using test::replay;

namespace {

plan::Layout layout_of(const std::string& schedule, int pp, int microbatches, int vpp = 1) {
  Scenario s = test::uniform_dense(pp, microbatches, vpp);
  s.layout.schedule = schedule;
  return plan::make_layout(s);
}

// Every (micro-batch, chunk) of the rank runs one forward, then one whole backward or a B
// followed later by its W.
void check_complete(const plan::Layout& l, int rank) {
  const auto order = plan::pipeline_schedule(l, rank);
  std::set<std::pair<int, int>> f, b, w;
  for (const auto& e : order) {
    INFO("rank " << rank << " mb " << e.microbatch << " chunk " << e.chunk);
    REQUIRE((e.microbatch >= 0 && e.microbatch < l.microbatches && e.chunk >= 0 && e.chunk < l.chunks));
    const auto key = std::make_pair(e.microbatch, e.chunk);
    switch (e.pass) {
      case Pass::forward: CHECK(f.insert(key).second); break;
      case Pass::backward:
        CHECK(f.count(key) == 1);
        CHECK(b.insert(key).second);
        CHECK(w.insert(key).second);
        break;
      case Pass::input_grad:
        CHECK(f.count(key) == 1);
        CHECK(b.insert(key).second);
        break;
      case Pass::weight_grad:
        CHECK(b.count(key) == 1);
        CHECK(w.insert(key).second);
        break;
    }
  }
  const size_t pairs = static_cast<size_t>(l.chunks) * l.microbatches / (l.schedule == plan::Schedule::dualpipe ? 2 : 1);
  CHECK(f.size() == pairs);
  CHECK(b.size() == pairs);
  CHECK(w.size() == pairs);
}

// Forwards before the first backward: the warm-up and the steady state's first forward.
int leading_forwards(const plan::Layout& l, int rank) {
  const auto order = plan::pipeline_schedule(l, rank);
  int n = 0;
  while (n < static_cast<int>(order.size()) && order[n].pass == Pass::forward) ++n;
  return n;
}

int max_inflight(const plan::Layout& l) {
  int n = 0;
  for (int r = 0; r < l.pp; ++r) n = std::max(n, plan::inflight_chunks(l, r));
  return n;
}

}  // namespace

TEST_CASE("Every schedule runs each pass once, backward after forward, W after B", "[plan][schedule]") {
  for (int pp : {1, 2, 4, 8}) {
    for (int m : {2 * pp, 2 * pp + 2, 4 * pp}) {
      INFO("pp " << pp << " micro-batches " << m);
      for (const auto& [schedule, vpp] : std::vector<std::pair<std::string, int>>{
               {"1f1b", 1}, {"1f1b", 2}, {"zb-h1", 1}, {"zb-v", 2}, {"dualpipev", 2}, {"dualpipe", 1}}) {
        if (schedule == "dualpipe" && pp % 2 != 0) continue;
        if (schedule == "1f1b" && vpp > 1 && m % pp != 0) continue;
        INFO(schedule << " vpp " << vpp);
        const plan::Layout l = layout_of(schedule, pp, m, vpp);
        for (int r = 0; r < pp; ++r) check_complete(l, r);
        replay(l, Times{});  // and every pass can run: no rank waits forever
      }
    }
  }
}

TEST_CASE("ZB-V runs for every micro-batch count, not only multiples of pp", "[plan][schedule]") {
  for (int pp : {1, 2, 3, 5})
    for (int m = 1; m <= 3 * pp + 1; ++m) {
      INFO("pp " << pp << " micro-batches " << m);
      const plan::Layout l = layout_of("zb-v", pp, m, 2);
      for (int r = 0; r < pp; ++r) check_complete(l, r);
      replay(l, Times{});
    }
}

TEST_CASE("1F1B runs every forward and backward once, warm-up pp - rank - 1", "[plan][schedule]") {
  const plan::Layout l = layout_of("1f1b", 4, 8);
  for (int r = 0; r < 4; ++r) CHECK(leading_forwards(l, r) == 4 - r - 1 + 1);
  const auto last = plan::pipeline_schedule(l, 3);
  CHECK(last[0].pass == Pass::forward);
  CHECK(last[1].pass == Pass::backward);  // the last stage alternates from the start
  CHECK(last[1].microbatch == 0);
}

TEST_CASE("Interleaved 1F1B follows Megatron's chunk order", "[plan][schedule]") {
  const plan::Layout l = layout_of("1f1b", 4, 8, 2);
  const auto order = plan::pipeline_schedule(l, 0);
  // Forwards run pp micro-batches of chunk 0, then the same ones on chunk 1, then the next pp.
  std::vector<std::pair<int, int>> first;
  for (int k = 0; k < 10; ++k) first.emplace_back(order[k].microbatch, order[k].chunk);
  CHECK(first == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1},
                                                  {1, 1}, {2, 1}, {3, 1}, {4, 0}, {5, 0}});
  // Backwards start from the last chunk.
  for (const auto& e : order)
    if (e.pass == Pass::backward) {
      CHECK(e.chunk == 1);
      CHECK(e.microbatch == 0);
      break;
    }
}

TEST_CASE("Warm-up and in-flight count replay Megatron's get_pp_rank_microbatches", "[plan][schedule]") {
  // megatron/core/pipeline_parallel/schedules.py, get_pp_rank_microbatches, with
  // microbatch_group_size_per_vp_stage = pp (its default):
  //   non-interleaved: warmup = pp - rank - 1
  //   interleaved:     warmup = (pp - rank - 1) * 2 + (vpp - 1) * pp, + 1 with
  //                    overlap_moe_expert_parallel_comm; at most microbatches * vpp.
  // The steady state then issues one more forward before each backward, so at most warmup + 1
  // (micro-batch, chunk) activations are held, never more than all of them.
  for (int pp : {2, 4, 8})
    for (int vpp : {1, 2, 4})
      for (int m : {pp, 2 * pp, 3 * pp})
        for (bool overlap : {false, true}) {
          Scenario s = test::uniform_dense(pp, m, vpp);
          s.recipe.ep_overlap = overlap;
          const plan::Layout l = plan::make_layout(s);
          for (int rank = 0; rank < pp; ++rank) {
            const int total = m * vpp;
            int warmup = vpp == 1 ? pp - rank - 1 : (pp - rank - 1) * 2 + (vpp - 1) * pp;
            if (overlap) warmup += 1;  // moesim applies the combined 1F1B's extra forward at vpp 1 too
            warmup = std::min(warmup, total);
            INFO("pp " << pp << " vpp " << vpp << " m " << m << " overlap " << overlap << " rank " << rank);
            CHECK(leading_forwards(l, rank) == std::min(warmup + 1, total));
            CHECK(plan::inflight_chunks(l, rank) == std::min(warmup + 1, total));
          }
        }
}

TEST_CASE("Memory's in-flight count is the schedule's peak of forwards issued minus backwards done",
          "[plan][schedule]") {
  for (const auto& [schedule, vpp] : std::vector<std::pair<std::string, int>>{
           {"1f1b", 1}, {"1f1b", 2}, {"zb-h1", 1}, {"zb-v", 2}, {"dualpipev", 2}, {"dualpipe", 1}}) {
    Scenario s = test::uniform_dense(4, 16, vpp);
    s.layout.schedule = schedule;
    const plan::Layout l = plan::make_layout(s);
    for (int r = 0; r < l.pp; ++r) {
      // Counted here from the order: a forward adds a pair, a whole backward or a W removes it.
      int held = 0, peak = 0;
      for (const auto& e : plan::pipeline_schedule(l, r)) {
        held += e.pass == Pass::forward ? 1 : e.pass == Pass::input_grad ? 0 : -1;
        peak = std::max(peak, held);
      }
      INFO(schedule << " rank " << r);
      CHECK(plan::rank_memory(s, l, r).inflight_chunks == peak);
      CHECK(plan::inflight_chunks(l, r) == peak);
    }
  }
}

// DSV3 §3.2.1, Table 2 ("Comparison of pipeline bubbles and memory usage across different
// pipeline parallel methods"), also deepseek-ai/DualPipe README.md. F: a forward chunk, B: a full
// backward chunk, W: a "backward for weights" chunk, F&B: two mutually overlapped forward and
// backward chunks (F + B with free communication), PP: pipeline stages.
//   1F1B      bubble (PP-1)(F+B)          parameters 1x  activations PP
//   ZB1P      bubble (PP-1)(F+B-2W)       parameters 1x  activations PP
//   DualPipe  bubble (PP/2-1)(F&B+B-3W)   parameters 2x  activations PP+1
//   DualPipeV bubble (PP/2-1)(F&B+B-3W)   parameters 2x  activations PP+1  (PP/2 devices)
namespace {

// One Table 2 row: for each set of pass times and (ranks, micro-batches) pair, the replayed
// bubble equals the row's formula in F, B (whole backward), W and PP, and the fullest rank holds
// the row's activations.
struct TableRow {
  std::string schedule;
  int vpp = 1;
  std::vector<Times> times;
  std::vector<int> ranks;
  std::function<std::vector<int>(int ranks)> microbatches;
  std::function<double(int pp, double f, double b, double w)> bubble;
  std::function<int(int pp)> activations;
};

void check_row(const TableRow& row) {
  for (const Times t : row.times)
    for (int ranks : row.ranks)
      for (int m : row.microbatches(ranks)) {
        const plan::Layout l = layout_of(row.schedule, ranks, m, row.vpp);
        const int pp = l.virtual_stages();  // the table counts stages (2 per rank on dualpipev)
        INFO(row.schedule << " ranks " << ranks << " m " << m << " F " << t.f << " B " << t.b + t.w << " W " << t.w);
        CHECK(bubble(replay(l, t)) == Approx(row.bubble(pp, t.f, t.b + t.w, t.w)));
        CHECK(max_inflight(l) == row.activations(pp));
      }
}

const std::vector<Times> kAnyTimes = {{1, 1, 1}, {1, 1.3, 0.9}, {2, 3, 1}};
// The DualPipe formula is exact when a forward chunk takes as long as a backward's input part
// (F = B - W) and W fits in it (W <= F), the balance DualPipe's F&B chunks are built for; with
// other times the replay differs from it (docs/method.md).
const std::vector<Times> kBalancedTimes = {{1, 1, 1}, {1, 1, 0.5}, {2, 2, 1}};
int same(int pp) { return pp; }
int one_more(int pp) { return pp + 1; }
// F&B: a forward and a backward overlapped, F + B with free communication.
double dualpipe_bubble(int pp, double f, double b, double w) { return (pp / 2.0 - 1) * ((f + b) + b - 3 * w); }

}  // namespace

TEST_CASE("Table 2 row 1F1B: bubble (PP-1)(F+B), activations PP", "[plan][schedule]") {
  check_row({"1f1b", 1, kAnyTimes, {2, 4, 8}, [](int p) { return std::vector<int>{p, 2 * p + 1, 4 * p}; },
             [](int pp, double f, double b, double) { return (pp - 1) * (f + b); }, same});
}

TEST_CASE("Table 2 row ZB1P (zb-h1): bubble (PP-1)(F+B-2W), activations PP", "[plan][schedule]") {
  check_row({"zb-h1", 1, kAnyTimes, {2, 4, 8}, [](int p) { return std::vector<int>{p, 2 * p + 1, 4 * p}; },
             [](int pp, double f, double b, double w) { return (pp - 1) * (f + b - 2 * w); }, same});
}

TEST_CASE("Table 2 row DualPipe: bubble (PP/2-1)(F&B+B-3W), activations PP+1", "[plan][schedule]") {
  check_row({"dualpipe", 1, kBalancedTimes, {2, 4, 8, 16},
             [](int p) { return std::vector<int>{2 * p, 2 * p + 2, 4 * p}; }, dualpipe_bubble, one_more});
}

TEST_CASE("Table 2 row DualPipeV: the same bubble with PP = 2 x ranks stages, activations PP+1",
          "[plan][schedule]") {
  check_row({"dualpipev", 2, kBalancedTimes, {1, 2, 4, 8},
             [](int r) { return std::vector<int>{2 * r, 2 * r + 1, 4 * r}; }, dualpipe_bubble, one_more});
}

// The zero-bubble paper's ZB-V (README: bubble rate 0 with T_F = T_B = T_W, activation memory as
// 1F1B, twice its pipeline messages). Its builder counts a stage's bubble from the stage's first
// forward on (zbv.py, stage_bubble); before it, rank r waits r forwards for its first input, as
// in any pipeline.
TEST_CASE("ZB-V: no bubble between a rank's first and last pass when F = B = W", "[plan][schedule]") {
  for (int pp : {2, 4, 8, 16})
    for (int m : {2 * pp, 2 * pp + 3, 3 * pp}) {
      const plan::Layout l = layout_of("zb-v", pp, m, 2);
      const Times t{1, 1, 1};
      const Replay x = replay(l, t);
      INFO("pp " << pp << " m " << m);
      for (int r = 0; r < pp; ++r) CHECK(x.last[r] - x.first[r] - x.busy[r] == Approx(0).margin(1e-9));
      CHECK(bubble(x) == Approx((pp - 1) * t.f));
      CHECK(max_inflight(l) == 2 * pp);  // half-size chunks: pp micro-batches' worth, as 1F1B
    }
}

TEST_CASE("V-shaped schedules place chunk 1 of rank r on stage 2 pp - 1 - r; dualpipe mirrors ranks",
          "[plan][schedule]") {
  const plan::Layout v = layout_of("dualpipev", 4, 8, 2);
  CHECK(v.stage_index(0, 0) == 0);
  CHECK(v.stage_index(0, 1) == 7);
  CHECK(v.stage_index(3, 1) == 4);
  CHECK(v.holder(4, 0).pp_rank == 3);
  CHECK(v.holder(4, 0).chunk == 1);
  const plan::Layout d = layout_of("dualpipe", 4, 8);
  CHECK(d.chunks == 2);
  CHECK(d.stage_index(0, 1) == 3);
  CHECK(d.stage_index(1, 1) == 2);
  CHECK(d.holder(0, 3).pp_rank == 0);  // micro-batches 0-3 enter at rank 0
  CHECK(d.holder(0, 4).pp_rank == 3);  // 4-7 at rank 3
  CHECK(d.mirror_pp_rank(1) == 2);
}
