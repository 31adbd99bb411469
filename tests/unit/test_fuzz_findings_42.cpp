// Issue 42's extended fuzz target (search files, sweep files, collective options): what it found,
// and the entry points it calls without the command line (JSON-level readers, the collective
// request), held to what the CLI does with the same input.
#include <catch2/catch.hpp>

#include <climits>

#include "config_test_support.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/search/spec.hpp"
#include "moesim/sweep/point.hpp"
#include "moesim/sweep/spec.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

// A sweep file as if it stood in scenarios/sweeps/ (its base named relative to it).
std::filesystem::path bundled_sweep_file() { return test::source_dir() / "scenarios" / "sweeps" / "test.json"; }

sweep::SweepSpec sweep_of(const std::string& text) { return sweep::load_sweep_json(json::parse(text), bundled_sweep_file()); }

InfeasibleError infeasible_error(const std::function<void()>& f) {
  return test::thrown<InfeasibleError>(f, "an InfeasibleError");
}

driver::CollectiveOptionError option_error(const std::function<void()>& f) {
  return test::thrown<driver::CollectiveOptionError>(f, "a CollectiveOptionError");
}

}  // namespace

TEST_CASE("a sweep's GPU count beyond 2^24 is refused where it is written, not run modulo 2^32", "[fuzz-findings]") {
  // Found by the fuzzer's check that a point runs at the GPU count its row shows: 4294967552 =
  // 2^32 + 256 ran the record at 256 GPUs under a gpus column of 4294967552.
  const ConfigError e = test::config_error(
      [] { sweep_of(R"({"name": "s", "base": "../gb300-256-record.json", "axes": [{"gpus": [256, 4294967552]}]})"); });
  CHECK(e.json_path() == "$.axes[0].gpus");
  CHECK_THAT(e.expected(), Contains("from 1 to 16777216") && Contains("4294967552"));
  // The bound itself is a count like any other: each point runs at its column's count.
  const std::vector<sweep::Point> points = sweep::expand(
      sweep_of(R"({"name": "s", "base": "../gb300-256-record.json", "axes": [{"gpus": [256, 16777216]}]})"));
  REQUIRE(points.size() == 2);
  CHECK(points[1].gpus == 16777216);
  CHECK(points[1].axis_values[0].second == 16777216);
}

TEST_CASE("weak scaling whose global batch would pass 2^31 - 1 is infeasible, not a negative batch", "[fuzz-findings]") {
  // The record cut to 64 GPUs with a global batch of 2^24, weak-scaled to 10,368 GPUs: 2^24 x
  // 10368 / 64 = 2,717,908,992 sequences. It wrapped to -1,577,058,304, and the point's row said
  // "global batch -1577058304 is not divisible by micro_batch*dp".
  const std::vector<sweep::Point> points = sweep::expand(sweep_of(R"({"name": "s", "base": "../gb300-256-record.json",
      "points": [{"set": {"gpus": 64, "training.global_batch": 16777216, "layout.ep": 32, "layout.pp": 2}}],
      "axes": [{"gpus": [128, 10368]}]})"));
  REQUIRE(points.size() == 2);
  const Scenario fits = sweep::point_scenario(points[0], test::bundled_configs());
  CHECK(fits.training.global_batch == 2 * 16777216);
  const InfeasibleError e = infeasible_error([&] { sweep::point_scenario(points[1], test::bundled_configs()); });
  CHECK_THAT(e.what(), Contains("10368 GPUs") && Contains("2717908992") && Contains("2^31 - 1"));
  // Strong scaling keeps the global batch: nothing grows.
  sweep::Point strong = points[1];
  strong.scaling = sweep::GpuScaling::strong;
  CHECK(sweep::point_scenario(strong, test::bundled_configs()).training.global_batch == 16777216);
}

TEST_CASE("weak scaling that would leave less than one sequence is infeasible, not a batch of 0", "[fuzz-findings]") {
  // Found by the fuzzer: a sweep of the two-rack EP64 scenario (256 GPUs) with a global batch of
  // 1 on a GPU axis from 128: 1 x 128 / 256 truncated to 0, and the point's row blamed "global
  // batch 0". The same scaling serves `run --gpus` and a search's "gpus".
  const std::vector<sweep::Point> points = sweep::expand(sweep_of(R"({"name": "s",
      "base": "../gb300-256-ep64-two-racks.json",
      "axes": [{"gpus": [128, 512]}, {"path": "training.global_batch", "values": [1, 64]}]})"));
  REQUIRE(points.size() == 4);
  const InfeasibleError e = infeasible_error([&] { sweep::point_scenario(points[0], test::bundled_configs()); });
  CHECK_THAT(e.what(), Contains("128 GPUs") && Contains("from 1 at 256 GPUs to 0.5 sequences"));
  CHECK(sweep::point_scenario(points[1], test::bundled_configs()).training.global_batch == 32);
  CHECK(sweep::point_scenario(points[2], test::bundled_configs()).training.global_batch == 2);
  // Down from 512 GPUs and a batch of 128; at the boundary, exactly one sequence is a batch.
  const Scenario large = sweep::point_scenario(points[3], test::bundled_configs());
  CHECK(driver::scaled_to(large, 128).training.global_batch == 32);
  CHECK(driver::scaled_to(large, 4).training.global_batch == 1);
  CHECK_THROWS_AS(driver::scaled_to(large, 3), InfeasibleError);
}

TEST_CASE("the JSON-level search and sweep readers read what the file readers read", "[fuzz-findings]") {
  const std::filesystem::path search_file = test::source_dir() / "scenarios" / "search" / "gb300-1024.json";
  const search::SearchSpec from_file = search::load_search(search_file);
  const search::SearchSpec from_json = search::load_search_json(config::read_json_file(search_file), search_file);
  CHECK(from_json.name == from_file.name);
  CHECK(from_json.base.path == from_file.base.path);
  CHECK(from_json.gpus == from_file.gpus);
  CHECK(from_json.simulate == from_file.simulate);
  // Errors name the file the document stands for.
  const ConfigError e = test::config_error([] {
    search::load_search_json(json::parse(R"({"name": "x", "base": "../gb300-256-record.json", "simulate": -1})"),
                             test::source_dir() / "scenarios" / "search" / "mine.json");
  });
  CHECK_THAT(e.file(), Contains("mine.json"));
  CHECK(e.json_path() == "$.simulate");
  const std::filesystem::path sweep_file = test::source_dir() / "scenarios" / "sweeps" / "gb200-vs-gb300.json";
  CHECK(sweep::expand(sweep::load_sweep_json(config::read_json_file(sweep_file), sweep_file)).size() ==
        sweep::expand(sweep::load_sweep(sweep_file)).size());
}

TEST_CASE("collective options are checked and planned without a command line", "[fuzz-findings]") {
  const std::filesystem::path configs = test::bundled_configs();
  // The command's defaults: an EP dispatch of 32 ranks with DeepEP on GB300, inside one domain.
  const driver::PlannedCollective ep = driver::plan_collective_request({}, configs);
  CHECK(ep.group.ranks.size() == 32);
  CHECK(ep.placement.domains_spanned == 1);
  CHECK(ep.exchange_plan.seconds > 0);
  // An NCCL collective: one plan per size, an all-to-all's bytes per peer.
  driver::CollectiveRequest a2a;
  a2a.op = "all-to-all";
  a2a.ranks = 8;
  a2a.sizes = "1M,8M";
  const driver::PlannedCollective planned = driver::plan_collective_request(a2a, configs);
  REQUIRE(planned.plans.size() == 2);
  CHECK(planned.bytes[1] == 8.0 * 1024 * 1024 / 8);
  CHECK(planned.plans[1].seconds > planned.plans[0].seconds);
  // Each refusal names its option, as the command line's usage error (exit 2) does.
  const auto option_of = [&](const driver::CollectiveRequest& r) {
    return option_error([&] { driver::plan_collective_request(r, configs); }).option();
  };
  driver::CollectiveRequest r;
  r.ranks = 72;  // 256 experts do not divide over 72 ranks
  CHECK(option_of(r) == "--ranks/--ep");
  r = {};
  r.ranks = 0;  // what CLI11's range check refuses before the command runs
  CHECK(option_of(r) == "--ranks");
  r.ranks = 1;  // one rank moves nothing: nccl-tests' bandwidths would print inf and NaN
  CHECK(option_of(r) == "--ranks");
  r = {};
  r.sms = 0;
  CHECK(option_of(r) == "--sms");
  r = {};
  r.op = "broadcast";
  CHECK(option_of(r) == "--op");
  r = {};
  r.op = "all-reduce";
  r.sizes = "abc";
  CHECK(option_of(r) == "--bytes");
  r.sizes = "1025G";
  CHECK(option_of(r) == "--bytes");
  r = {};
  r.op = "reduce-scatter";
  r.system = "hgx-h100";
  r.algo = "tree";  // NCCL's tree runs all-reduce only
  CHECK(option_of(r) == "--algo");
  r = {};
  r.algo = "ring";  // an EP exchange is no NCCL collective
  CHECK(option_of(r) == "--algo");
  // A system that does not load is the configuration's error, naming the file.
  r = {};
  r.system = "no-such-system";
  CHECK(test::config_error([&] { driver::plan_collective_request(r, configs); }).json_path().rfind('$', 0) == 0);
}
