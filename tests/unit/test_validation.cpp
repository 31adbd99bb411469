// Published figures reproduced (ctest label `validation`). Every row is held to one tolerance
// (+-5 %); what CI guards is the accuracy ratchet: no row's error may grow by more than half a
// point, and no row inside +-5 % may leave it, unless tests/validation/baseline.json is
// re-recorded deliberately (scripts/update-validation-baseline.sh, which sets
// MOESIM_UPDATE_VALIDATION_BASELINE=1 for this test and shows the diff). The ratchet's own logic,
// and the statistics of the page, are unit-tested on made-up rows below.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

#include "moesim/driver/schedule_comparison.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/validate.hpp"
#include "moesim/util/atomic_file.hpp"
#include "config_test_support.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;
using nlohmann::json;

namespace {

driver::ValidationInputs bundled_inputs() {
  return {test::repo() / "scenarios" / "published", test::repo() / "scenarios" / "gb300-256-record.json",
          test::configs_dir() / "fitted.json", test::configs_dir() / "gap-experiments.json", test::repo(),
          {},   // no schedule comparison here
          {}};  // nor the other frameworks (their own ratchet: test_frameworks_validation.cpp)
}

const driver::Validation& validation() {
  static const driver::Validation v = [] {
    driver::RunOptions o;
    o.configs_dir = test::configs_dir().string();
    return driver::validate(bundled_inputs(), o);
  }();
  return v;
}

const driver::ValidationRow& row(const std::string& id) {
  for (const auto& r : validation().runs)
    if (r.published.id == id) return r;
  FAIL("no published scenario " << id);
  throw std::logic_error("unreachable");
}

std::filesystem::path baseline_file() { return test::repo() / "tests" / "validation" / "baseline.json"; }

driver::ValidationRow made_up(const std::string& id, double error, driver::RowStatus status) {
  driver::ValidationRow r;
  r.published.id = id;
  r.published.tflops_per_gpu = 1000;
  r.relative_error = error;
  r.simulated_tflops = 1000 * (1 + error);
  r.status = status;
  return r;
}

json rows(std::initializer_list<std::pair<const char*, double>> errors_percent) {
  json out = {{"rows", json::object()}, {"ratios", json::object()}};
  for (const auto& [id, e] : errors_percent) out["rows"][id] = e;
  return out;
}

}  // namespace

// One test case, so that the published runs are simulated once per process (about 45 runs);
// each claim is its own section.
TEST_CASE("Published runs: accuracy ratchet, fit labels, history changes, gap experiments, scaling", "[validation]") {
  SECTION("Accuracy ratchet: no published row gets worse unnoticed") {
    const json current = driver::ratchet_baseline(validation());
    const char* update = std::getenv("MOESIM_UPDATE_VALIDATION_BASELINE");
    if (update && std::string(update) == "1") {
      json recorded = current;
      recorded["about"] =
          "Each published row's error (moesim / published - 1, in percent) and each GB300/GB200 ratio's error, as "
          "simulated when recorded. Written by scripts/update-validation-baseline.sh; the [validation] test fails "
          "when a |error| grows by more than 0.5 points or a row inside +-5 % leaves it.";
      util::write_file_atomically(baseline_file(), recorded.dump(2) + "\n");
      WARN("baseline re-recorded: " << baseline_file().string());
    }
    const json baseline = config::read_json_file(baseline_file());
    const auto moved = driver::ratchet_violations(current, baseline);
    std::string message;
    for (const auto& m : moved) message += "\n  " + m;
    INFO("rows that moved against " << baseline_file().string() << ":" << message
                                    << "\nIf the change is intended, run scripts/update-validation-baseline.sh and say "
                                       "in the commit which rows moved and why.");
    CHECK(moved.empty());
    for (const auto& better : driver::ratchet_improvements(current, baseline))
      WARN("improved, not yet recorded (scripts/update-validation-baseline.sh): " << better);
  }
  SECTION("Rows a parameter was fitted to are labelled fit, twins included") {
    const auto& v = validation();
    REQUIRE(!v.fitted.empty());
    for (const auto& p : v.fitted) {
      INFO(p.name);
      CHECK(row(p.fitted_to).status == driver::RowStatus::fit);
    }
    // HybridEP's rates come from its own microbenchmarks (configs/stacks/*.json hybridep), no
    // longer from a fit to step 10, so step 10 and its twin step 11 ("more CPU-side reductions",
    // step 10's configuration) are predictions. (Before the communication mechanisms, step 11
    // was labelled fit as "same configuration as gb200-history-step10".)
    CHECK(row("gb200-history-step10").status != driver::RowStatus::fit);
    CHECK(row("gb200-history-step11").status != driver::RowStatus::fit);
    // Step 6 equals step 5, which nothing was fitted to: a prediction (of no gain).
    CHECK(row("gb200-history-step6").status != driver::RowStatus::fit);
    int fits = 0;
    for (const auto& r : v.runs) fits += r.status == driver::RowStatus::fit;
    CHECK(v.predicted() == static_cast<int>(v.runs.size()) - fits);
  }
  SECTION("Each history step declares the kind of change its scenario files make") {
    REQUIRE(validation().history.size() == 12);
    for (const auto& h : validation().history) {
      INFO("step " << h.step << ": declared " << h.declared_change << ", scenario files " << h.modelled_change);
      CHECK(h.declared_change == h.modelled_change);
      // A software step never makes moesim slower. Except step 3 (DeepEP replaces NCCL's
      // all-to-all): predicted from DeepEP's own microbenchmark on GB200 (MLM-G §2.2.1: 400 / 190
      // GB/s at EP32 with 24 SMs, configs/stacks/*.json deepep) against NCCL's all-to-all from
      // nccl-tests, it comes out level with step 2 instead of faster; before the communication
      // mechanisms both dispatchers had fitted efficiencies. The bound was 0.995 (0.2 % slower)
      // until the kernel model's faster GEMMs exposed more of DeepEP's SM-bound exchange (0.9 %
      // slower, recorded when comm met kernels), then 0.95 (4.6 % slower) when issue 37 gave the
      // 2025 stack one GroupedLinear launch per local expert and the launch gap fitted to step 0
      // fell from 49.9 to 28.0 us: the all-to-all dispatcher's extra kernels (chunk sorts, its
      // preprocessing) no longer cost what DeepEP's slower exchange does. It may not fall further.
      CHECK(h.simulated_gain >= (h.step == 3 ? 0.95 : 1 - 1e-9));
    }
  }
  SECTION("Every gap explanation is still what its experiment shows") {
    REQUIRE(!validation().experiments.empty());
    for (const auto& e : validation().experiments) {
      std::string rows;
      for (const auto& r : e.rows) rows += "\n  " + r.id + ": " + std::to_string(100 * r.error_before) + " % -> " +
                                           std::to_string(100 * r.error_after) + " %";
      INFO(e.experiment.explanation << rows);
      CHECK(e.supports == e.experiment.claimed_support);
    }
  }
  SECTION("GB300 record layout keeps its per-GPU throughput from 256 to 1,024 GPUs") {
    const auto& s = validation().scaling;
    INFO("simulated efficiency " << 100 * s.efficiency << " %");
    // The published 98.5 % includes straggler and jitter losses that a deterministic, symmetric
    // simulation does not have; moesim stays within 2 points of it.
    CHECK(s.efficiency == Approx(s.published).margin(0.02));
    // Above 100 % only by what the distributed optimizer saves: its per-GPU work shrinks as the
    // data-parallel group that shards it grows (about 0.1 % of the step here).
    CHECK(s.efficiency <= 1.001);
  }
}

TEST_CASE("Ratchet: a row that grows by more than half a point, or leaves +-5 %, is named", "[validation-logic]") {
  const json baseline = rows({{"a", 3.0}, {"b", -12.0}, {"c", 4.8}, {"gone", 1.0}});
  const json current = rows({{"a", -3.4}, {"b", -12.6}, {"c", 5.1}, {"new", 0.0}});
  const auto moved = driver::ratchet_violations(current, baseline);
  auto names = [&](const std::string& what) {
    return std::count_if(moved.begin(), moved.end(), [&](const std::string& m) { return m.find(what) != std::string::npos; });
  };
  CHECK(names("row a:") == 0);   // |3.4| - |3.0| = 0.4 points: inside the slack, sign flips are not moves
  CHECK(names("row b:") == 1);   // 12.0 -> 12.6: grew by 0.6 points
  CHECK(names("row c:") == 1);   // 4.8 -> 5.1: left the band by less than the slack
  CHECK(names("row new:") == 1);
  CHECK(names("row gone:") == 1);
  CHECK(moved.size() == 4);
  const auto better = driver::ratchet_improvements(rows({{"a", 2.4}, {"b", -11.6}}), rows({{"a", 3.0}, {"b", -12.0}}));
  REQUIRE(better.size() == 1);   // a: 0.6 points better; b: 0.4, not worth a re-recording
  CHECK(better.front().rfind("a:", 0) == 0);
}

TEST_CASE("Summary statistics count predicted rows only", "[validation-logic]") {
  driver::Validation v;
  v.runs = {made_up("fit", 0.30, driver::RowStatus::fit), made_up("in", -0.02, driver::RowStatus::ok),
            made_up("out", 0.10, driver::RowStatus::outside), made_up("in2", 0.04, driver::RowStatus::ok)};
  CHECK(v.predicted() == 3);
  CHECK(v.predicted_inside() == 2);
  CHECK(v.mean_abs_error() == Approx((0.02 + 0.10 + 0.04) / 3));
  CHECK(v.mean_signed_error() == Approx((-0.02 + 0.10 + 0.04) / 3));  // the lean, fit row left out
  CHECK(v.max_abs_error() == Approx(0.10));  // the fit row's 30 % is not counted
  CHECK_FALSE(v.all_predicted_inside());
  const std::string page = driver::validation_markdown(v);
  CHECK(page.find("**2 of 3** (1 rows are `fit`") != std::string::npos);
  CHECK(page.find("| out | ") != std::string::npos);
  CHECK(page.find("**OUTSIDE**") != std::string::npos);
}

TEST_CASE("The fitted-parameter registry must still match the configs", "[validation-logic]") {
  test::TempTree tree("fitted-registry");
  tree.write("configs/stacks/x.json", R"({"speed": 0.5, "nested": {"speed": 0.25}})");
  const auto registry = [&](const std::string& in, double value) {
    return tree.write("fitted.json", json{{"parameters",
                                            {{{"name", "speed"},
                                              {"values", {{"speed", value}}},
                                              {"in", {in}},
                                              {"fitted_to", "row"},
                                              {"why_not_measured", "no measurement"}}}}}
                                         .dump());
  };
  CHECK(driver::read_fitted(registry("configs/stacks/x.json", 0.5), tree.root()).size() == 1);
  CHECK(driver::read_fitted(registry("configs/stacks/x.json#nested", 0.25), tree.root()).front().values.front().second ==
        0.25);
  const auto drifted = test::config_error([&] { driver::read_fitted(registry("configs/stacks/x.json", 0.6), tree.root()); });
  CHECK(drifted.json_path() == "$.parameters[0].in[0]");
  CHECK(std::string(drifted.what()).find("it holds 0.5") != std::string::npos);
  const auto missing = test::config_error([&] { driver::read_fitted(registry("configs/stacks/y.json", 0.5), tree.root()); });
  CHECK(missing.json_path() == "$.parameters[0].in[0]");
}

TEST_CASE("A gap experiment names its verdict", "[validation-logic]") {
  test::TempTree tree("gap-experiments");
  const auto file = [&](const json& experiment) {
    return tree.write("gaps.json", json{{"experiments", {experiment}}}.dump());
  };
  const json good = {{"explanation", "why"}, {"rows", {"r"}}, {"set", {{"stack.x", 1}}}, {"verdict", "rejects"}};
  const auto read = driver::read_experiments(file(good));
  REQUIRE(read.size() == 1);
  CHECK_FALSE(read.front().claimed_support);
  CHECK(read.front().set.front().first == "stack.x");
  json bad = good;
  bad["verdict"] = "maybe";
  CHECK(test::config_error([&] { driver::read_experiments(file(bad)); }).json_path() == "$.experiments[0].verdict");
  bad = good;
  bad["set"] = json::object();
  CHECK(test::config_error([&] { driver::read_experiments(file(bad)); }).json_path() == "$.experiments[0].set");
}

TEST_CASE("A gap experiment supports its explanation only if every row moves half a point closer",
          "[validation-logic]") {
  using Row = driver::ExperimentResult::Row;
  CHECK(driver::experiment_supports({{"a", +0.10, +0.04}, {"b", -0.08, -0.02}}));
  CHECK(driver::experiment_supports({{"a", +0.10, -0.09}}));        // past the figure, but closer
  CHECK_FALSE(driver::experiment_supports({{"a", +0.10, +0.097}}));  // 0.3 points: within the ratchet's resolution
  CHECK_FALSE(driver::experiment_supports({{"a", +0.10, +0.04}, {"b", +0.02, +0.03}}));  // one row moves away
  CHECK_FALSE(driver::experiment_supports({{"a", +0.10, -0.11}}));  // overshoots: further than before
  CHECK(driver::experiment_supports(std::vector<Row>{}) == true);   // nothing to contradict it
}

TEST_CASE("DeepSeek's own setup runs under DualPipe with DSV3 Table 2's activation counts and bubbles", "[validation]") {
  driver::RunOptions o;
  o.configs_dir = test::configs_dir().string();
  const driver::ScheduleComparison c =
      driver::compare_schedules(test::repo() / "scenarios" / "deepseek-v3-h800-dualpipe.json", o);
  REQUIRE(c.rows.size() == 3);
  const auto& f1b = c.rows[0];
  const auto& zb = c.rows[1];
  const auto& dual = c.rows[2];
  REQUIRE(dual.schedule == "dualpipe");
  // DSV3 §3.2: 2,048 H800 GPUs, PP16 with DualPipe, EP64 over 8 nodes, ZeRO-1; it trained in
  // 80 GB. moesim's memory is Megatron-Core/TE's, which keeps the experts' SwiGLU inputs in BF16
  // where DeepSeek caches them in FP8 (DSV3 §3.3.2): the peak comes out above the H800's usable
  // memory, and docs/validation.md says so; `dual.fits` is therefore not asserted here.
  // Table 2's activations per device: PP for 1F1B and ZB1P, PP + 1 for DualPipe.
  CHECK(f1b.inflight_chunks == 16);
  CHECK(zb.inflight_chunks == 16);
  CHECK(dual.inflight_chunks == 17);
  // Table 2's order of bubbles: ZB1P and DualPipe below 1F1B.
  CHECK(zb.simulated_bubble_s < f1b.simulated_bubble_s);
  CHECK(dual.simulated_bubble_s < f1b.simulated_bubble_s);
  CHECK(dual.times.f_and_b > 0);
  CHECK(dual.times.w > 0);
}
