// Issue 42, item 8: behaviour that one-line bugs could change without any other test noticing.
//  (a) the search's memory screen rejects a candidate when ANY pipeline stage exceeds usable HBM
//      (a heavy first stage, a heavy last stage);
//  (b) `search --simulate N` overrides the search file's "simulate";
//  (c) DualPipe's and DualPipeV's step order on EVERY rank: against a transcription of the
//      reference step() (deepseek-ai/DualPipe dualpipe.py and dualpipev.py, steps 1 to 8) for
//      several pipeline sizes and micro-batch counts, and against the rows of the schedule
//      figures (the DeepSeek-V3 report's Figure 5, the DualPipe README's dualpipe.png: 8 ranks,
//      20 micro-batches; dualpipev.png: 4 ranks, 10 micro-batches).
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "moesim/config/loader.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/plan/schedule.hpp"
#include "moesim/search/screen.hpp"
#include "moesim/search/space.hpp"
#include "scenario_fixtures.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using moesim::test::run_cli;
using moesim::test::TempTree;
using plan::Pass;
using nlohmann::json;

namespace {

// ---- (a) ----------------------------------------------------------------------------------

// The record's candidate with pp 2, vpp 1 and DeepSeek-V3's 61 layers (+ 1 MTP) split
// `first` / 61 - `first` between the two stages.
search::Candidate pinned_two_stage_candidate(const Scenario& record, int first) {
  search::Candidate c = search::reference_candidate(record);
  c.pp = 2;
  c.vpp = 1;
  // Megatron overlaps the EP exchanges only with a virtual pipeline: off, and the delayed weight
  // gradients that need it.
  c.ep_overlap = false;
  c.delay_wgrad = false;
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "E" + std::string(...).
  std::string layout = "E";
  layout.append(static_cast<std::size_t>(first), 't').append("|");
  layout.append(static_cast<std::size_t>(61 - first), 't').append("mL");
  c.pipeline_layout = layout;
  return c;
}

std::vector<plan::MemoryBreakdown> pinned_stage_memory(const Scenario& record, const search::Candidate& c) {
  Scenario s = record;
  search::apply(c, s);
  return plan::memory_per_stage(s, plan::make_layout(s));
}

// ---- (c) ----------------------------------------------------------------------------------

// DualPipe.step() / DualPipeV.step() of the reference, transcribed with its own names: phases,
// is_in_second_half, is_middle_rank, WeightGradStore's FIFO queue, step_1 .. step_8. Emits what
// each _forward_chunk, _backward_chunk, _forward_backward_chunk and _weight_chunk computes, as
// moesim's entries: the chunk is the phase after the second half's flip (the direction of
// micro-batches entering at rank 0 is chunk 0), DualPipe's micro-batch of chunk c and chunk id i
// is c * num_chunks / 2 + i, DualPipeV's is i.
class DualPipeReference {
 public:
  DualPipeReference(int num_ranks, int rank, int num_chunks, bool v)
      : num_ranks_(num_ranks), rank_(rank), num_chunks_(num_chunks), v_(v) {}

  std::vector<plan::ScheduleEntry> step() {
    const int num_half_ranks = v_ ? num_ranks_ : num_ranks_ / 2;
    const int half_rank = v_ ? rank_ : std::min(rank_, num_ranks_ - 1 - rank_);
    const int half_num_chunks = num_chunks_ / 2;
    // dualpipev.py: the last rank plays the middle rank's part.
    const bool is_middle_rank = v_ ? rank_ == num_ranks_ - 1
                                   : rank_ == num_ranks_ / 2 - 1 || rank_ == num_ranks_ / 2;
    is_in_second_half_ = v_ ? 0 : (rank_ >= num_ranks_ / 2 ? 1 : 0);

    const int step_1 = (num_half_ranks - half_rank - 1) * 2;
    for (int i = 0; i < step_1; ++i) forward_chunk(0);
    const int step_2 = half_rank + 1;
    for (int i = 0; i < step_2; ++i) {
      forward_chunk(0);
      forward_chunk(1);
    }
    const int step_3 = num_half_ranks - half_rank - 1;
    for (int i = 0; i < step_3; ++i) {
      backward_chunk(1, true);
      weight_chunk();
      forward_chunk(1);
    }
    const int step_4 = v_ ? num_chunks_ - num_ranks_ * 2 + rank_ + 1 : half_num_chunks - num_ranks_ + half_rank + 1;
    for (int i = 0; i < step_4; ++i) {
      if (i == 0 && is_middle_rank) {
        forward_chunk(0);  // "We don't overlap these two chunks to further reduce bubble size."
        backward_chunk(1);
      } else {
        forward_backward_chunk(0, 1);
      }
      forward_backward_chunk(1, 0);
    }
    const int step_5 = num_half_ranks - half_rank - 1;
    for (int i = 0; i < step_5; ++i) {
      backward_chunk(1);
      forward_backward_chunk(1, 0);
    }
    const int step_6 = half_rank + 1;
    bool enable_zb = false;
    for (int i = 0; i < step_6; ++i) {
      if (i == step_6 / 2 && half_rank % 2 == 1) enable_zb = true;
      backward_chunk(1, enable_zb);
      if (i == step_6 / 2 && half_rank % 2 == 0) enable_zb = true;
      backward_chunk(0, enable_zb);
    }
    const int step_7 = num_half_ranks - half_rank - 1;
    for (int i = 0; i < step_7; ++i) {
      weight_chunk();
      backward_chunk(0, true);
    }
    const int step_8 = half_rank + 1;
    for (int i = 0; i < step_8; ++i) weight_chunk();
    REQUIRE(funcs_queue_.empty());  // assert WeightGradStore.funcs_queue.empty()
    return out_;
  }

 private:
  int microbatch(int phase, int chunk_id) const { return v_ ? chunk_id : phase * (num_chunks_ / 2) + chunk_id; }

  void forward_chunk(int phase) {
    phase ^= is_in_second_half_;
    const int chunk_id = current_f_chunk_id_[phase]++;
    out_.push_back({Pass::forward, microbatch(phase, chunk_id), phase, false});
  }

  // With enable_zb the weight gradients go to WeightGradStore (flushed as one queue entry).
  void backward_chunk(int phase, bool enable_zb = false, bool overlapped = false) {
    phase ^= is_in_second_half_;
    const int chunk_id = current_b_chunk_id_[phase]++;
    const int mb = microbatch(phase, chunk_id);
    out_.push_back({enable_zb ? Pass::input_grad : Pass::backward, mb, phase, overlapped});
    if (enable_zb) funcs_queue_.emplace_back(mb, phase);
  }

  // _forward_backward_compute_chunk: the forward of phase0 overlapped with the backward of
  // phase1, whose weight gradients are not deferred.
  void forward_backward_chunk(int phase0, int phase1) {
    forward_chunk(phase0);
    backward_chunk(phase1, false, true);
  }

  void weight_chunk() {  // WeightGradStore.pop(): FIFO
    REQUIRE_FALSE(funcs_queue_.empty());
    out_.push_back({Pass::weight_grad, funcs_queue_.front().first, funcs_queue_.front().second, false});
    funcs_queue_.pop_front();
  }

  int num_ranks_, rank_, num_chunks_;
  bool v_;
  int is_in_second_half_ = 0;
  int current_f_chunk_id_[2] = {0, 0}, current_b_chunk_id_[2] = {0, 0};
  std::deque<std::pair<int, int>> funcs_queue_;
  std::vector<plan::ScheduleEntry> out_;
};

plan::Layout pinned_dualpipe_layout(bool v, int pp, int microbatches) {
  Scenario s = test::uniform_dense(pp, microbatches, v ? 2 : 1);
  s.layout.schedule = v ? "dualpipev" : "dualpipe";
  return plan::make_layout(s);
}

// A rank's order as the figures draw it, one token per cell: F, B (a whole backward or its input
// half: both green) or W; chunk 0 upper case with its micro-batch, chunk 1 lower case, with its
// micro-batch only where the figure prints it (DualPipeV; DualPipe's figure omits the reverse
// direction's); an overlapped forward and backward as one "F&B" cell.
std::string figure_row(const std::vector<plan::ScheduleEntry>& order, bool number_chunk_1) {
  auto cell = [&](const plan::ScheduleEntry& e) {
    const char letter = e.pass == Pass::forward ? 'F' : e.pass == Pass::weight_grad ? 'W' : 'B';
    std::string out(1, e.chunk == 0 ? letter : static_cast<char>(letter - 'A' + 'a'));
    if (e.chunk == 0 || number_chunk_1) out += std::to_string(e.microbatch);
    return out;
  };
  std::string row;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!row.empty()) row += ' ';
    row += cell(order[i]);
    if (order[i].pass == Pass::forward && i + 1 < order.size() && order[i + 1].paired) row += "&" + cell(order[++i]);
  }
  return row;
}

}  // namespace

TEST_CASE("The search's memory screen rejects a candidate when any pipeline stage exceeds HBM",
          "[pinned][screen]") {
  const Scenario record = config::load_scenario(test::record_json_path());
  const cost::KernelCalibration& cal = test::default_calibration();
  // 58 of the 61 layers on the first stage: it alone does not fit; the second (3 layers, the MTP
  // layer and the loss) does. Then the mirror image.
  const search::Candidate heavy_first = pinned_two_stage_candidate(record, 58);
  const search::Candidate heavy_last = pinned_two_stage_candidate(record, 3);
  const auto first = pinned_stage_memory(record, heavy_first);
  const auto last = pinned_stage_memory(record, heavy_last);
  REQUIRE(first.size() == 2);
  REQUIRE(last.size() == 2);
  REQUIRE_FALSE(first[0].fits());
  REQUIRE(first[1].fits());
  REQUIRE(last[0].fits());
  REQUIRE_FALSE(last[1].fits());

  for (const search::Candidate* c : {&heavy_first, &heavy_last}) {
    INFO(c->pipeline_layout.substr(0, 12));
    const search::Screened s = search::screen_one(record, *c, cal);
    REQUIRE(s.rejections.size() == 1);
    CHECK(s.rejections[0].rfind("memory:", 0) == 0);
    CHECK_FALSE(s.survives());
    // The fullest stage is the one reported.
    const double fullest = std::max(first[0].total_bytes(), first[1].total_bytes());
    if (c == &heavy_first) CHECK(s.max_memory_bytes == fullest);
  }
  // A balanced split of the same candidate passes the screen.
  CHECK(search::screen_one(record, pinned_two_stage_candidate(record, 30), cal).survives());
}

TEST_CASE("search --simulate overrides the file's number of simulated candidates", "[pinned][search-cli]") {
  const TempTree tree("pinned-simulate");
  // The record's base with 4 candidates, none of them the record's own layout (ep 32): no
  // reference is added to the simulated ones. The file asks for 3 simulations.
  const std::string record = test::record_json_path().string();
  const auto file = tree.write("search.json", R"({
    "name": "simulate override, test",
    "base": ")" + record + R"(",
    "simulate": 3,
    "space": {
      "layout": {"tp": [1], "pp": [2], "vpp": [4, 8], "ep": [64, 128], "etp": [1], "cp": [1], "schedule": ["1f1b"],
                 "pipeline_layout": [""]},
      "training": {"micro_batch": [1]},
      "recipe": {"recompute": [[]], "ep_overlap": [true], "delay_wgrad": [true], "dispatcher": ["hybridep"],
                 "cuda_graphs": ["full_iteration"]}
    }
  })");
  const auto search = [&](const std::string& simulate) {
    const test::CliResult r =
        run_cli({"search", file.string(), "--simulate", simulate, "--format", "json", "--quiet", "-j", "1"}, tree.root());
    INFO(r.err);
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  };
  const json none = search("0");
  REQUIRE(none.at("survivors").get<int>() >= 2);  // so that 1 and the file's 3 differ
  CHECK(none.at("reference").is_null());
  CHECK(none.at("best_estimates") == 0);
  CHECK(none.at("plan").empty());
  CHECK(none.at("candidates").empty());
  const json one = search("1");
  CHECK(one.at("best_estimates") == 1);
  CHECK(one.at("plan").size() == 1);
  CHECK(one.at("candidates").size() == 1);
  // A negative count is invalid input naming the option.
  const test::CliResult bad = run_cli({"search", file.string(), "--simulate", "-1"}, tree.root());
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--simulate") != std::string::npos);
}

TEST_CASE("DualPipe and DualPipeV issue the reference step() order on every rank", "[pinned][dualpipe]") {
  for (const bool v : {false, true}) {
    for (const int pp : {2, 4, 6, 8}) {
      for (const int extra : {0, 2, 4, 10}) {
        const int m = 2 * pp + extra;  // the reference's minimum, 2 x ranks, and more
        const plan::Layout l = pinned_dualpipe_layout(v, pp, m);
        for (int rank = 0; rank < pp; ++rank) {
          INFO((v ? "dualpipev" : "dualpipe") << " pp " << pp << " micro-batches " << m << " rank " << rank);
          const auto expected = DualPipeReference(pp, rank, m, v).step();
          const auto got = plan::pipeline_schedule(l, rank);
          REQUIRE(got.size() == expected.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            INFO("entry " << i);
            CHECK(got[i].pass == expected[i].pass);
            CHECK(got[i].microbatch == expected[i].microbatch);
            CHECK(got[i].chunk == expected[i].chunk);
            CHECK(got[i].paired == expected[i].paired);
          }
        }
      }
    }
  }
}

TEST_CASE("DualPipe's and DualPipeV's ranks match the rows of the published schedule figures", "[pinned][dualpipe]") {
  // dualpipe.png (the DeepSeek-V3 report's Figure 5): 8 ranks, 20 micro-batches. Devices 0 and 7
  // (the ends) and 3 (a middle rank, whose first main step does not overlap), read cell by cell.
  const plan::Layout dual = pinned_dualpipe_layout(false, 8, 20);
  CHECK(figure_row(plan::pipeline_schedule(dual, 0), false) ==
        "F0 F1 F2 F3 F4 F5 F6 f b w f b w f b w f F7&b f&B0 F8&b f&B1 F9&b f&B2 b f&B3 b f&B4 b f&B5 "
        "b B6 W6 B7 W7 B8 W8 B9 W9");
  CHECK(figure_row(plan::pipeline_schedule(dual, 3), false) ==
        "F0 f F1 f F2 f F3 f F4 b f&B0 F5&b f&B1 F6&b f&B2 F7&b f&B3 F8&b f&B4 F9&b f&B5 "
        "b B6 b B7 b B8 b B9 w W8 w W9");
  CHECK(figure_row(plan::pipeline_schedule(dual, 7), false) ==
        "f f f f f f f F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 f&B3 F4&b f&B4 F5&b f&B5 F6&b "
        "B6 F7&b B7 F8&b B8 F9&b B9 b w b w b w b w");
  // dualpipev.png: 4 ranks (8 stages), 10 micro-batches, every row.
  const plan::Layout vee = pinned_dualpipe_layout(true, 4, 10);
  const char* const rows[] = {
      "F0 F1 F2 F3 F4 F5 F6 f0 b0 w0 f1 b1 w1 f2 b2 w2 f3 F7&b3 f4&B0 F8&b4 f5&B1 F9&b5 f6&B2 "
      "b6 f7&B3 b7 f8&B4 b8 f9&B5 b9 B6 W6 B7 W7 B8 W8 B9 W9",
      "F0 F1 F2 F3 F4 f0 F5 f1 b0 w0 f2 b1 w1 f3 F6&b2 f4&B0 F7&b3 f5&B1 F8&b4 f6&B2 F9&b5 f7&B3 "
      "b6 f8&B4 b7 f9&B5 b8 B6 b9 B7 w9 B8 W7 B9 W8 W9",
      "F0 F1 F2 f0 F3 f1 F4 f2 b0 w0 f3 F5&b1 f4&B0 F6&b2 f5&B1 F7&b3 f6&B2 F8&b4 f7&B3 F9&b5 f8&B4 "
      "b6 f9&B5 b7 B6 b8 B7 b9 B8 W7 B9 w9 W8 W9",
      "F0 f0 F1 f1 F2 f2 F3 f3 F4 b0 f4&B0 F5&b1 f5&B1 F6&b2 f6&B2 F7&b3 f7&B3 F8&b4 f8&B4 F9&b5 f9&B5 "
      "b6 B6 b7 B7 b8 B8 b9 B9 w8 W8 w9 W9",
  };
  for (int rank = 0; rank < 4; ++rank) {
    INFO("DualPipeV device " << rank);
    CHECK(figure_row(plan::pipeline_schedule(vee, rank), true) == rows[rank]);
  }
}
