// Sweep files: the points they expand to, and the mistakes they are refused for.
#include <catch2/catch.hpp>

#include "moesim/config/loader.hpp"
#include "moesim/sweep/point.hpp"
#include "moesim/sweep/run.hpp"
#include "moesim/sweep/shard.hpp"
#include "moesim/sweep/spec.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using moesim::test::config_error;
using moesim::test::TempTree;

TEST_CASE("bundled GB200-vs-GB300 sweep: four published layouts x three GPU counts", "[sweep]") {
  const sweep::SweepSpec spec = sweep::load_sweep(test::source_dir() / "scenarios/sweeps/gb200-vs-gb300.json");
  CHECK(spec.axis_columns() == std::vector<std::string>{"label", "gpus"});
  const std::vector<sweep::Point> points = sweep::expand(spec);
  REQUIRE(points.size() == 12);
  // Listed points outermost, the last axis fastest.
  CHECK(points[0].axis_values[0].second == "gb200-bf16");
  CHECK(points[0].gpus == 256);
  CHECK(points[2].gpus == 1024);
  CHECK(points[3].axis_values[0].second == "gb200-mxfp8");
  CHECK(points[11].base.path.filename() == "gb300-mxfp8-2511.json");
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(points[i].index == static_cast<int>(i));
}

TEST_CASE("a weak GPU-count point keeps the layout and grows the global batch", "[sweep]") {
  const sweep::SweepSpec spec = sweep::load_sweep(test::source_dir() / "scenarios/sweeps/scaling-gb300.json");
  const std::vector<sweep::Point> points = sweep::expand(spec);
  REQUIRE(points.size() == 3);
  const Scenario s = sweep::point_scenario(points[2], "");
  CHECK(s.gpus == 1024);
  CHECK(s.training.global_batch == 4 * 4096);
  CHECK(s.layout.pp == 2);
  CHECK(s.layout.ep == 32);
  CHECK_FALSE(s.published.has_value());
}

TEST_CASE("an invalid point's reason names the base as the sweep file does, not by where it ran", "[sweep]") {
  const sweep::SweepSpec spec = sweep::load_sweep(test::source_dir() / "scenarios/sweeps/scaling-gb300.json");
  sweep::Point p = sweep::expand(spec)[0];
  p.patches.emplace_back("training.precision", "fp7");
  const sweep::Json row = sweep::run_point(p, {});
  CHECK(row["status"] == "invalid");
  CHECK(row["reason"].get<std::string>().rfind("../gb300-256-record.json: $.training.precision: ", 0) == 0);
}

TEST_CASE("sweep paths set scenario fields and override referenced files", "[sweep]") {
  nlohmann::json j = {{"system", "gb300-nvl72"}, {"layout", {{"pp", 2}}}};
  sweep::set_at_path(j, "layout.pp", 4, "x");
  sweep::set_at_path(j, "system.nic_gbits_per_s", 400, "x");
  sweep::set_at_path(j, "stack.host_overhead_per_kernel_us", 5, "x");
  sweep::set_at_path(j, "recipe.dispatcher", "deepep", "x");
  CHECK(j["layout"]["pp"] == 4);
  CHECK(j["system"] == nlohmann::json({{"base", "gb300-nvl72"}, {"nic_gbits_per_s", 400}}));
  CHECK(j["recipe"]["dispatcher"] == "deepep");
  CHECK(j["stack"]["host_overhead_per_kernel_us"] == 5);
  const ConfigError e = config_error([&] { sweep::set_at_path(j, "layout.pp.x", 1, "x"); });
  CHECK(e.json_path() == "$.layout.pp");
}

TEST_CASE("sweep file mistakes are ConfigErrors naming the JSON path", "[sweep]") {
  const TempTree tree("sweep-spec");
  const std::string record = (test::source_dir() / "scenarios" / "gb300-256-record.json").string();
  const auto error_for = [&](const std::string& body) {
    const auto file = tree.write("bad.json", "{\"name\": \"bad\", \"base\": \"" + record + "\", " + body + "}");
    return config_error([&] { sweep::load_sweep(file); });
  };
  CHECK(error_for(R"("axis": [])").json_path() == "$.axis");
  CHECK(error_for(R"("axes": [{"path": "layout.pp", "values": []}])").json_path() == "$.axes[0].values");
  CHECK(error_for(R"("axes": [{"path": "layout..pp", "values": [1]}])").json_path() == "$.axes[0].path");
  CHECK(error_for(R"("axes": [{"gpus": [256, -1]}])").json_path() == "$.axes[0].gpus");
  CHECK(error_for(R"("axes": [{"gpus": [256], "mode": "sideways"}])").json_path() == "$.axes[0].mode");
  CHECK(error_for(R"("axes": [{"gpus": [256]}, {"gpus": [512], "name": "n"}])").json_path() == "$.axes");
  // A column name the results already use.
  CHECK(error_for(R"("axes": [{"path": "layout.pp", "values": [2], "name": "gpu_count"}])").json_path() ==
        "$.axes[0].name");
  CHECK(error_for(R"("axes": [{"path": "a", "values": [1], "name": "x"}, {"path": "b", "values": [1], "name": "x"}])")
            .json_path() == "$.axes[1].name");
  CHECK(error_for(R"("points": [{"label": "a"}, {"label": "a"}])").json_path() == "$.points[1].label");
  CHECK(error_for(R"("points": [{"base": "no-such.json"}])").json_path() == "$.points[0].base");
}

TEST_CASE("Shards (--shard i/n) are round-robin slices counted from 0", "[sweep]") {
  const sweep::Shard s = sweep::parse_shard("1/3");
  CHECK(s.index == 1);
  CHECK(s.count == 3);
  CHECK(s.owns(1));
  CHECK(s.owns(4));
  CHECK_FALSE(s.owns(2));
  for (const char* bad : {"3/3", "-1/2", "1", "a/2", "1/0", "1/2/3", " 1/2"})
    CHECK_THROWS_AS(sweep::parse_shard(bad), ConfigError);
}
