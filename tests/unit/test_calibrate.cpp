// moesim calibrate (issue 41): nccl-tests outputs read as nccl-tests prints them, NCCL parameters
// recovered from tables moesim itself generated with known values, overlays that name every key
// they set and layer under a scenario's own overrides, and bad tool outputs refused by file and
// line.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "moesim/calibrate/least_squares.hpp"
#include "moesim/calibrate/nccl_fit.hpp"
#include "moesim/calibrate/nccl_tests.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"
#include "moesim/driver/run.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using namespace moesim::calibrate;
using Catch::Matchers::Contains;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;

namespace {

const std::filesystem::path kConfigs = moesim::test::bundled_configs();

// A table as all_reduce_perf prints it (nccl-tests 2.17: root column, header rows, rank lines).
std::string nccl_tests_text(const std::string& binary, int ranks, const std::vector<std::pair<double, double>>& rows,
                            const std::string& extra_header = "") {
  std::string t = "# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807\n";
  t += "# Collective test starting: " + binary + "\n#\n# Using devices\n";
  for (int r = 0; r < ranks; ++r)
    t += fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on      node0 device {:2d} [0000:{:02x}:00] NVIDIA GB200\n", r,
                     1000 + r, r, r);
  t += extra_header;
  t += "#\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
       "busbw  #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  "
       "(GB/s)  (GB/s)\n";
  for (const auto& [size, us] : rows)
    t += fmt::format("{:12.0f}  {:12.0f}  {:>8}  {:>6}  {:6d}  {:7.2f}  {:6.2f}  {:6.2f}  {:6d}  {:7.2f}  {:6.2f}  "
                     "{:6.2f}  {:6d}\n",
                     size, size / 4, "float", "sum", -1, us, size / us / 1e3, size / us / 1e3, 0, us, size / us / 1e3,
                     size / us / 1e3, 0);
  return t + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n";
}

// moesim's own closed-form times for `sizes` with the system's NCCL keys `overrides` set: the
// measurement a cluster with exactly those values would print.
std::vector<double> model_us(const std::string& system, const std::string& op, int ranks, const std::string& algo,
                             const std::vector<double>& sizes, const json& overrides) {
  driver::CollectiveRequest r;
  r.system = system;
  r.op = op;
  r.ranks = ranks;
  r.algo = algo;
  r.system_overrides = overrides;
  std::string list;
  for (double s : sizes) list += fmt::format("{}{:.0f}", list.empty() ? "" : ",", s);
  r.sizes = list;
  std::vector<double> us;
  for (const auto& p : driver::plan_collective_request(r, kConfigs).plans) us.push_back(p.seconds * 1e6);
  return us;
}

std::vector<double> powers_of_two(int from, int to) {
  std::vector<double> v;
  for (int e = from; e <= to; ++e) v.push_back(std::ldexp(1.0, e));
  return v;
}

// A deterministic +-amplitude perturbation per row (no random engine: the same bytes every run).
double perturbation(std::size_t i, double amplitude) { return 1 + amplitude * std::sin(2.399963 * (i + 1)); }

NcclTestsTable generated(const std::string& system, const std::string& op, int ranks, const std::string& algo,
                         const std::vector<double>& sizes, const json& truth, double noise) {
  const std::vector<double> us = model_us(system, op, ranks, algo, sizes, truth);
  std::vector<std::pair<double, double>> rows;
  for (std::size_t i = 0; i < sizes.size(); ++i) rows.emplace_back(sizes[i], us[i] * perturbation(i, noise));
  const std::string binary = op == "all-reduce" ? "all_reduce_perf" : op == "all-to-all" ? "alltoall_perf" : "x";
  return parse_nccl_tests(nccl_tests_text(binary, ranks, rows), "generated.txt", {"", 0, algo});
}

std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

double fitted(const Calibration& c, const std::string& key) {
  for (const FittedParameter& p : c.parameters)
    if (p.key == key) return p.fitted;
  FAIL("no fitted " << key);
  return 0;
}

}  // namespace

TEST_CASE("nccl-tests output is read as its binaries print it", "[calibrate]") {
  const std::string text = nccl_tests_text("./build/all_reduce_perf", 4, {{1024, 16.17}, {1 << 30, 2489.86}},
                                           "NCCL INFO NCCL_ALGO set by environment to Ring\n");
  const NcclTestsTable t = parse_nccl_tests(text, "ar.txt");
  CHECK(t.op == "all-reduce");
  CHECK(t.ranks == 4);
  CHECK(t.algo == "ring");
  CHECK(t.nccl_version == "2.28");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[1].size_bytes == 1073741824.0);
  CHECK(t.rows[1].time_us == 2489.86);
  CHECK(t.rows[1].line == 14);
  CHECK(looks_like_nccl_tests(text));
  CHECK_FALSE(looks_like_nccl_tests("{\"name\": 1}"));

  SECTION("older versions: no root column, no banner (the op and ranks from the command line), NVLSTree") {
    const std::string old =
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        "     1048576        262144     float     sum    27.50   38.13   66.73  0e+00    27.31   38.40   67.20  0e+00\n"
        "NCCL INFO NCCL_ALGO set by environment to NVLSTree\n";
    const NcclTestsTable o = parse_nccl_tests(old, "old.txt", {"all-reduce", 8, ""});
    CHECK(o.op == "all-reduce");
    CHECK(o.ranks == 8);
    CHECK(o.algo == "nvls_tree");
    REQUIRE(o.rows.size() == 1);
    CHECK(o.rows[0].time_us == 27.50);
    CHECK(o.rows[0].in_place_time_us == 27.31);
  }
  SECTION("indented, as pasted in a Markdown page; size-0 rows time only the call and are left out") {
    std::string indented;
    std::istringstream in(nccl_tests_text("alltoall_perf", 2, {{0, 5.0}, {4096, 9.5}}));
    for (std::string line; std::getline(in, line);) indented += "    " + line + "\n";
    const NcclTestsTable a = parse_nccl_tests(indented, "md.txt");
    CHECK(a.op == "all-to-all");
    CHECK(a.ranks == 2);
    REQUIRE(a.rows.size() == 1);
    CHECK(a.rows[0].size_bytes == 4096);
  }
}

TEST_CASE("a tool output moesim cannot read is refused by file and line", "[calibrate][bad-inputs]") {
  const std::string good = nccl_tests_text("all_reduce_perf", 4, {{1024, 16.0}, {2048, 16.5}});
  auto error_of = [](const std::string& text, NcclTestsHints hints = {}) {
    try {
      parse_nccl_tests(text, "t.txt", hints);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };
  // A truncated row (the job killed mid-line).
  CHECK_THAT(error_of(good.substr(0, good.rfind("16.50") - 20)), Contains("t.txt") && Contains("line 13") &&
                                                                     Contains("a truncated output?"));
  // A collective moesim does not model.
  CHECK_THAT(error_of(nccl_tests_text("broadcast_perf", 4, {{1024, 10}})),
             Contains("line 2") && Contains("broadcast_perf"));
  // No header before the first row, no rows at all, no op, too few ranks, contradicting hints.
  CHECK_THAT(error_of("        1024   256  float  sum  -1  16.0  0.1  0.1  0  16.0  0.1  0.1  0\n", {"all-reduce", 4, ""}),
             Contains("line 1") && Contains("column header"));
  CHECK_THAT(error_of(good.substr(0, good.find("        1024"))), Contains("at least one result row"));
  CHECK_THAT(error_of("#       size         count      type   redop    root     time   algbw   busbw\n"
                      "        1024   256  float  sum  -1  16.0  0.1  0.1\n",
                      {"", 4, ""}),
             Contains("--op"));
  CHECK_THAT(error_of(nccl_tests_text("all_reduce_perf", 1, {{1024, 16.0}})), Contains("at least 2"));
  CHECK_THAT(error_of(good, {"all-gather", 0, ""}), Contains("--op given (all-gather)"));
  CHECK_THAT(error_of(good, {"", 8, ""}), Contains("--ranks (8)"));
  CHECK_THAT(error_of(replace_first(good, "16.50", "fast"), {}), Contains("line 13") && Contains("time \"fast\""));
}

TEST_CASE("least squares recovers a line's slope and intercept within its bounds", "[calibrate]") {
  // y = 3 x + 2 on x = 1..10, in log form so that the log-scaled parameter is tested too.
  const Residuals r = [](const std::vector<double>& v) {
    std::vector<double> out;
    for (int x = 1; x <= 10; ++x) out.push_back(std::log((v[0] * x + v[1]) / (3.0 * x + 2.0)));
    return out;
  };
  const LeastSquaresResult fit = least_squares(r, {{1.0, 0.1, 10, true}, {0.0, 0, 100, false}});
  CHECK(fit.values[0] == Approx(3.0).epsilon(1e-4));
  CHECK(fit.values[1] == Approx(2.0).epsilon(1e-3));
  CHECK(fit.cost_after < 1e-10);
  CHECK(fit.cost_before > fit.cost_after);
  // A bound holds: the slope may not exceed 2.
  const LeastSquaresResult bounded = least_squares(r, {{1.0, 0.1, 2.0, true}, {0.0, 0, 100, false}});
  CHECK(bounded.values[0] <= 2.0);
  CHECK(bounded.values[0] == Approx(2.0).epsilon(1e-6));
  CHECK_THROWS_AS(least_squares(r, {{5.0, 0.1, 2.0, true}}), std::invalid_argument);
}

TEST_CASE("calibrate recovers the NCCL parameters a table was generated with", "[calibrate][round-trip]") {
  // Tolerances fixed before the first run: without noise 0.1 % on a rate and 0.05 us on a fixed
  // cost; with +-2 % noise per size, 2 % and 1 us.
  const std::vector<double> sizes = powers_of_two(10, 33);
  const json truth = {{"nccl", {{"nvlink_efficiency", 0.68}, {"call_overhead_us", 7.5}}}};
  const CalibrationTarget target{"gb200-nvl72", kConfigs, 0};
  for (const double noise : {0.0, 0.02}) {
    const Calibration c =
        fit_nccl_tables(target, {generated("gb200-nvl72", "all-reduce", 4, "ring", sizes, truth, noise)});
    REQUIRE(c.parameters.size() == 2);
    CHECK(fitted(c, "nccl.nvlink_efficiency") == Approx(0.68).epsilon(noise == 0 ? 0.001 : 0.02));
    CHECK(fitted(c, "nccl.call_overhead_us") == Approx(7.5).margin(noise == 0 ? 0.05 : 1.0));
    CHECK(c.tables.front().rms_error_after_pct < c.tables.front().rms_error_before_pct);
    if (noise == 0) CHECK(c.tables.front().max_error_after_pct < 0.1);
  }
  SECTION("NVLS over a whole rack: the NVLS efficiency, not the ring's") {
    const json nvls = {{"nccl", {{"nvls_efficiency", 0.42}}}};
    const Calibration c = fit_nccl_tables(
        target, {generated("gb200-nvl72", "all-reduce", 72, "", powers_of_two(24, 33), nvls, 0.0)});
    CHECK(fitted(c, "nccl.nvls_efficiency") == Approx(0.42).epsilon(0.001));
    for (const FittedParameter& p : c.parameters) CHECK(p.key != "nccl.nvlink_efficiency");
  }
  SECTION("two tables share one value: the overlay holds it once, fitted to both") {
    NcclTestsTable a = generated("gb200-nvl72", "all-reduce", 4, "ring", sizes, truth, 0.0);
    NcclTestsTable b = generated("gb200-nvl72", "all-reduce", 8, "ring", sizes, truth, 0.0);
    a.file = "four.txt";
    b.file = "eight.txt";
    const Calibration c = fit_nccl_tables(target, {a, b, b});  // a table read twice counts once
    CHECK(c.parameters.size() == 2);
    CHECK(fitted(c, "nccl.nvlink_efficiency") == Approx(0.68).epsilon(0.001));
    CHECK(c.parameters.front().files == std::vector<std::string>{"four.txt", "eight.txt"});
  }
}

TEST_CASE("a fit that cannot follow its table, or rests on too few sizes, says so", "[calibrate]") {
  const CalibrationTarget target{"gb200-nvl72", kConfigs, 0};
  // Times that fall as the size grows: no NCCL parameter makes that; the residual stays.
  const NcclTestsTable odd = parse_nccl_tests(
      nccl_tests_text("all_reduce_perf", 4, {{1 << 20, 4000}, {1 << 24, 1000}, {1 << 28, 250}, {1u << 31, 60}}), "odd.txt",
      {"", 0, "ring"});
  const Calibration c = fit_nccl_tables(target, {odd});
  bool residual_warning = false;
  for (const std::string& w : c.warnings) residual_warning |= w.find("odd.txt") != std::string::npos &&
                                                              w.find("stay more than 10 % off") != std::string::npos;
  CHECK(residual_warning);
  // One size only: whatever is fitted rests on fewer than 3 sizes.
  const NcclTestsTable one =
      parse_nccl_tests(nccl_tests_text("all_reduce_perf", 4, {{1u << 31, 3000}}), "one.txt", {"", 0, "ring"});
  const Calibration c1 = fit_nccl_tables(target, {one});
  bool few = false;
  for (const std::string& w : c1.warnings) few |= w.find("fewer than 3") != std::string::npos;
  CHECK(few);
}

TEST_CASE("an overlay names what it sets, layers under the scenario's own overrides, and moves the run",
          "[calibrate][overlay]") {
  TempTree tree("calibrate-overlay");
  // An overlay as moesim calibrate writes it, of a scale-out network at 0.3 of its NIC (the round
  // trip above tests the fit; this, what the overlay does to a run).
  const json written = {{"moesim_calibration", 1},
                        {"system", "gb300-nvl72"},
                        {"overrides",
                         {{"system",
                           {{"nccl", {{"net_efficiency", 0.3}}},
                            {"sources", {{"nccl.net_efficiency", "moesim calibrate: a test's own table"}}}}}}},
                        {"fits", json::array()}};
  const auto overlay_file = tree.root() / "gb300.json";
  std::ofstream(overlay_file) << written.dump(2);
  const config::CalibrationOverlay overlay = config::read_calibration_overlay(overlay_file, kConfigs);
  CHECK(overlay.system == "gb300-nvl72");
  CHECK(overlay.keys == std::vector<std::string>{"nccl.net_efficiency"});

  const auto record = moesim::test::record_json_path();
  const Scenario plain = config::load_scenario(record, {kConfigs});
  const Scenario calibrated = config::load_scenario(record, {kConfigs, {overlay}});
  CHECK(plain.calibration.empty());
  CHECK(calibrated.calibration == overlay_file.string());
  CHECK(calibrated.system.nccl.net_efficiency == 0.3);
  CHECK(calibrated.system.nccl.nvlink_efficiency == plain.system.nccl.nvlink_efficiency);
  CHECK(calibrated.system.sources.at("nccl.net_efficiency").find("moesim calibrate") == 0);

  // The scenario's own override wins over the overlay's.
  json own = moesim::test::record_json();
  own["system"] = {{"base", "gb300-nvl72"}, {"nccl", {{"net_efficiency", 0.8}}}};
  const Scenario mine = config::load_scenario_json(own, "own.json", {kConfigs, {overlay}});
  CHECK(mine.system.nccl.net_efficiency == 0.8);
  // Another system's scenario is left alone.
  own["system"] = "gb200-nvl72";
  CHECK(config::load_scenario_json(own, "other.json", {kConfigs, {overlay}}).calibration.empty());

  // A slower scale-out network makes the record's step slower, never faster.
  driver::RunOptions ro;
  ro.configs_dir = kConfigs.string();
  const double t_plain = driver::run_scenario(plain, ro).metrics.step_time_s;
  const double t_calibrated = driver::run_scenario(calibrated, ro).metrics.step_time_s;
  CHECK(t_calibrated > t_plain);
}

TEST_CASE("a bad overlay is refused by file and JSON path", "[calibrate][overlay][bad-inputs]") {
  TempTree tree("calibrate-bad-overlay");
  const json good = {{"moesim_calibration", 1},
                     {"system", "gb200-nvl72"},
                     {"overrides",
                      {{"system",
                        {{"nccl", {{"nvlink_efficiency", 0.7}}},
                         {"sources", {{"nccl.nvlink_efficiency", "moesim calibrate: a test"}}}}}}}};
  auto error_of = [&](const json& doc) {
    const auto f = tree.root() / "o.json";
    std::ofstream(f) << doc.dump();
    try {
      config::read_calibration_overlay(f, kConfigs);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };
  std::ofstream(tree.root() / "g.json") << good.dump();
  CHECK_NOTHROW(config::read_calibration_overlay(tree.root() / "g.json", kConfigs));
  json j = good;
  j = good, j["moesim_calibration"] = 2;
  CHECK_THAT(error_of(j), Contains("$.moesim_calibration"));
  j = good, j["system"] = "gb900";
  CHECK_THAT(error_of(j), Contains("$.system") && Contains("no such file"));
  j = good, j["overrides"]["system"]["nccl"]["nvlink_efficiency"] = 1.5;
  CHECK_THAT(error_of(j), Contains("$.overrides.system.nccl.nvlink_efficiency") && Contains("out of range"));
  j = good, j["overrides"]["system"].erase("sources");
  CHECK_THAT(error_of(j), Contains("nccl.nvlink_efficiency") && Contains("source"));
  j = good, j["overrides"]["stack"] = json::object();
  CHECK_THAT(error_of(j), Contains("$.overrides.stack"));
  j = good, j["extra"] = 1;
  CHECK_THAT(error_of(j), Contains("$.extra") && Contains("unknown key"));
}

TEST_CASE("moesim calibrate writes an overlay run and collective accept, and refuses what it cannot use",
          "[calibrate][cli]") {
  TempTree tree("calibrate-cli");
  const auto example = moesim::test::source_dir() / "examples" / "calibration" / "gb200-tray-all_reduce_ring.txt";
  const auto overlay = tree.root() / "gb200.json";
  const auto r = run_cli({"calibrate", example.string(), "--system", "gb200-nvl72", "--ranks", "4", "--algo", "ring",
                          "-o", overlay.string()},
                         tree.root());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("nccl.nvlink_efficiency") && Contains("RMS error"));
  const json o = json::parse(moesim::test::slurp(overlay));
  CHECK(o["system"] == "gb200-nvl72");
  const auto coll = run_cli({"collective", "--system", "gb200-nvl72", "--op", "all-reduce", "--ranks", "4", "--algo",
                             "ring", "--bytes", "8G", "--fidelity", "closed", "--calibration", overlay.string()},
                            tree.root());
  CHECK(coll.code == 0);
  const double eff = o["overrides"]["system"]["nccl"]["nvlink_efficiency"];
  CHECK(eff < 0.755);  // the tray's whole table asks for less than its 8 GiB row alone
  // An overlay of another system is an error for one scenario, not a silent no-op.
  const auto other = run_cli({"run", moesim::test::record_json_path().string(), "--calibration", overlay.string()},
                             tree.root());
  CHECK(other.code == 2);
  CHECK_THAT(other.err, Contains("--calibration") && Contains("calibrates other systems"));
  // The overlay may not overwrite its own input.
  const auto clash = run_cli({"calibrate", example.string(), "--system", "gb200-nvl72", "--ranks", "4", "-o",
                              example.string()},
                             tree.root());
  CHECK(clash.code == 2);
  // Not a tool output moesim reads.
  const auto json_in = run_cli({"calibrate", overlay.string(), "--system", "gb200-nvl72"}, tree.root());
  CHECK(json_in.code == 2);
  CHECK_THAT(json_in.err, Contains("nccl-tests output"));
}
