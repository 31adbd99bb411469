// moesim compare: pairing points and the B/A ratios.
#include <catch2/catch.hpp>

#include "moesim/sweep/compare.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;

TEST_CASE("compare pairs sweep points by their axis values", "[sweep]") {
  const sweep::SweepResult a = test::synthetic_result();
  sweep::SweepResult b = a;
  b.name = "faster";
  std::swap(b.rows[0], b.rows[1]);  // order does not matter, axis values do
  b.rows[1]["tflops_per_gpu"] = 1500.0;
  b.rows.pop_back();
  const std::string table = sweep::compare_table(a, b);
  CHECK(table.find("A: synthetic\nB: faster\n") == 0);
  CHECK(table.find("label=a, gpus=256") != std::string::npos);
  CHECK(table.find("1000.0    1500.0    1.500") != std::string::npos);
  CHECK(table.find("only in A: label=b, gpus=512") != std::string::npos);
  const sweep::Json j = sweep::compare_json(a, b);
  CHECK(j["pairs"].size() == 3);
  CHECK(j["pairs"][0]["tflops_per_gpu"]["ratio"] == 1.5);
  CHECK(j["only_in_a"] == sweep::Json::array({"label=b, gpus=512"}));
}

TEST_CASE("compare of two scenarios shows every metric of the single pair", "[sweep]") {
  sweep::SweepOptions o;
  const auto a = sweep::comparison_input(test::source_dir() / "scenarios/published/gb200-mxfp8-2511.json", o);
  const auto b = sweep::comparison_input(test::source_dir() / "scenarios/published/gb300-mxfp8-2511.json", o);
  const std::string table = sweep::compare_table(a, b);
  CHECK(table.find("GB200 NVL72") != std::string::npos);
  CHECK(table.find("GB300 NVL72") != std::string::npos);
  CHECK(table.find("pipeline bubble") != std::string::npos);
  CHECK(table.find("tokens per kWh") != std::string::npos);  // the energy columns
  const sweep::Json j = sweep::compare_json(a, b);
  REQUIRE(j["pairs"].size() == 1);
  const auto& tflops = j["pairs"][0]["tflops_per_gpu"];
  CHECK(tflops["a"].get<double>() > 0);
  CHECK(tflops["ratio"].get<double>() == tflops["b"].get<double>() / tflops["a"].get<double>());
}
