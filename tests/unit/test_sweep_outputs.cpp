// What a sweep writes: CSV, Markdown, sweep.json read back, merges refused, plots.
#include <catch2/catch.hpp>

#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/writers.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using moesim::test::config_error;
using moesim::test::TempTree;

TEST_CASE("scaling efficiency is relative to the first row of each series", "[sweep]") {
  const sweep::SweepResult r = test::synthetic_result();
  CHECK(r.rows[0]["scaling_efficiency"] == 1.0);
  CHECK(r.rows[1]["scaling_efficiency"].get<double>() == Approx(0.99));
  CHECK(r.rows[2]["scaling_efficiency"] == 1.0);
  CHECK(r.rows[3]["scaling_efficiency"].is_null());
  // A shard cannot know its rows' references: no efficiency at all.
  sweep::SweepResult shard = r;
  shard.rows.pop_back();
  sweep::fill_scaling_efficiency(shard);
  for (const auto& row : shard.rows) CHECK(row["scaling_efficiency"].is_null());
}

TEST_CASE("CSV has every column, quoted where needed, numbers that read back exactly", "[sweep]") {
  const std::string csv = sweep::result_csv(test::synthetic_result());
  CHECK(csv.rfind("index,label,gpus,status,reason,scenario,", 0) == 0);
  CHECK(csv.find("\n2,b,256,ok,,") != std::string::npos);
  CHECK(csv.find(",1200.5,") != std::string::npos);
  CHECK(csv.find("\"bad, \"\"quoted\"\" | piped\"") != std::string::npos);
  CHECK(sweep::plain_value(sweep::Json(0.1 + 0.2)) == "0.30000000000000004");
  CHECK(sweep::plain_value(sweep::Json(nullptr)).empty());
}

TEST_CASE("Markdown shows the main columns and why points have no result", "[sweep]") {
  const std::string md = sweep::result_markdown(test::synthetic_result());
  CHECK(md.find("| 1 | a | 512 | ok | 512 |") != std::string::npos);
  CHECK(md.find("| 99.0 |") != std::string::npos);
  CHECK(md.find("- point 3 (label=b, gpus=512): invalid: bad, \"quoted\" \\| piped") != std::string::npos);
}

TEST_CASE("sweep.json reads back to the same outputs", "[sweep]") {
  const TempTree tree("sweep-json");
  const sweep::SweepResult r = test::synthetic_result();
  sweep::write_outputs(tree.root() / "a", r);
  const sweep::SweepResult back = sweep::read_result(tree.root() / "a");
  CHECK(sweep::result_json_text(back) == sweep::result_json_text(r));
  CHECK(sweep::result_csv(back) == sweep::result_csv(r));
  CHECK(sweep::result_markdown(back) == sweep::result_markdown(r));
  const auto other = tree.write("other.json", R"({"name": "a scenario, not a result"})");
  CHECK(config_error([&] { sweep::read_result(other); }).json_path() == "$.format");
}

TEST_CASE("merge refuses missing, repeated and foreign points", "[sweep]") {
  const sweep::SweepResult r = test::synthetic_result();
  sweep::SweepResult even = r, odd = r;
  even.shard = sweep::Shard{0, 2};
  odd.shard = sweep::Shard{1, 2};
  even.rows = {r.rows[0], r.rows[2]};
  odd.rows = {r.rows[1], r.rows[3]};
  const sweep::SweepResult merged = sweep::merge_results({odd, even});
  CHECK(sweep::result_json_text(merged) == sweep::result_json_text(r));
  CHECK(std::string(config_error([&] { sweep::merge_results({even}); }).what()).find("points 1, 3 are in no input") !=
        std::string::npos);
  CHECK(std::string(config_error([&] { sweep::merge_results({even, odd, even}); }).what()).find("points 0, 2") !=
        std::string::npos);
  sweep::SweepResult foreign = odd;
  foreign.name = "another sweep";
  CHECK_THROWS_AS(sweep::merge_results({even, foreign}), ConfigError);
}

TEST_CASE("plots: script and data always, images when gnuplot is there", "[sweep]") {
  const TempTree tree("sweep-plot");
  const sweep::SweepResult r = test::synthetic_result();
  const sweep::PlotOutcome missing = sweep::draw_plots(tree.root(), r, "no-such-gnuplot-for-moesim");
  CHECK_FALSE(missing.drawn);
  CHECK(missing.message.find("gnuplot-nox") != std::string::npos);
  CHECK(std::filesystem::exists(tree.root() / "plot.gp"));
  CHECK(test::read_text(tree.root() / "plot-series.dat").find("# b\n256 1200.5 100 1200500 1\n") != std::string::npos);

  if (!sweep::draw_plots(tree.root(), r).drawn) WARN("gnuplot is not installed: images not checked");
  else
    for (const std::string& image : sweep::plot_images()) CHECK(std::filesystem::file_size(tree.root() / image) > 1000);
}
