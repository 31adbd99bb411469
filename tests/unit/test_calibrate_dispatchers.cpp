// moesim calibrate on DeepEP's and HybridEP's outputs (issue 41): the lines their tests print,
// read; kernel rates recovered from outputs moesim itself generated with known values; overlays
// with a dispatchers layer that patch every stack shipping that file; a scenario's own
// "calibration" key; the before/after of collective and validate.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>

#include "moesim/calibrate/dispatcher_fit.hpp"
#include "moesim/calibrate/dispatcher_tests.hpp"
#include "moesim/config/calibration_overlay.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/collective_request.hpp"
#include "moesim/driver/validate.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using namespace moesim::calibrate;
using Catch::Matchers::Contains;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;

namespace {

const std::filesystem::path kBundledConfigs = moesim::test::bundled_configs();

struct Exchange {
  std::string kernel;  // dispatch, combine
  bool fp8 = false, torch_api = false;
};

// moesim's own closed-form time of one exchange as the fit prices it, with the dispatcher file's
// keys `truth` ({"dispatch": {...}}): what a cluster with exactly those kernels would measure.
double ep_model_us(const std::string& system, const std::string& tool, int ranks, int sms, int groups, int topk_groups,
                int experts, const Exchange& e, const json& truth) {
  driver::CollectiveRequest r;
  r.system = system;
  r.stack = "megatron-bridge-26.06";
  r.op = "ep-" + e.kernel;
  r.dispatcher = tool;
  r.kernels = tool;
  r.ranks = ranks;
  r.sms = sms;
  r.groups = groups;
  r.topk_groups = topk_groups;
  r.experts = experts;
  r.fp8 = e.kernel == "dispatch" && e.fp8;
  if (!truth.empty()) {
    json slot = truth;
    slot["base"] = tool;
    r.stack_overrides[tool] = slot;
  }
  if (e.torch_api) r.stack_overrides["hybridep_call"] = "torch_api";
  return driver::plan_collective_request(r, kBundledConfigs).exchange_plan.seconds * 1e6;
}

// test_intranode.py's (or, with `internode`, test_internode.py's) tuned best lines.
std::string deepep_text(const std::string& system, int ranks, bool internode, const json& truth) {
  const int nodes = ranks / 8;
  std::string t = internode ? "[config] num_tokens=4096, hidden=7168, num_topk_groups=None, num_topk=8\n"
                            : "[config] num_tokens=4096, hidden=7168, num_topk=8\n";
  t += "[layout] Kernel performance: 0.052 ms\n\n[testing] Running with BF16, without top-k ... passed\n";
  for (const Exchange& e : {Exchange{"dispatch", true}, Exchange{"dispatch", false}, Exchange{"combine"}}) {
    const double us = ep_model_us(system, "deepep", ranks, 24, internode ? nodes : 1, internode ? std::min(nodes, 4) : 0,
                               256, e, truth);
    const std::string label = e.kernel == "dispatch" ? fmt::format("dispatch ({})", e.fp8 ? "FP8" : "BF16") : "combine";
    t += fmt::format("[tuning] SMs 24, NVL chunk 4: 1.00 GB/s (NVL), {:.2f} us\n", us * 1.2);  // a slower try
    if (internode)
      t += fmt::format("[tuning] Best {}: SMs 24, NVL chunk 8, RDMA chunk 16{} 21 + {:.0f} us, 40.00 GB/s (RDMA), "
                       "130.00 GB/s (NVL)\n\n",
                       label, e.kernel == "dispatch" ? ":" : ",", us);
    else
      t += fmt::format("[tuning] Best {}: SMs 24, NVL chunk 6{} 150.00 GB/s (NVL), t: {:.2f} us\n\n", label,
                       e.kernel == "dispatch" ? "," : ":", us);
  }
  return t;
}

// test_hybrid_ep.py's benchmark of one precision: the Torch API lines, then the kernel lines.
std::string hybridep_text(const std::string& system, int ranks, int sms, bool fp8, const json& truth) {
  const std::string p = fp8 ? "FP8" : "BF16";
  const auto us = [&](const Exchange& e) { return ep_model_us(system, "hybridep", ranks, sms, 1, 0, 8 * ranks, e, truth); };
  std::string t = fmt::format("\n=== Torch API Benchmark ({}, {} ranks) ===\n", p, ranks);
  t += fmt::format("dispatch ({}):{:>36} GB/s (NVL), t: {:.1f} us [min=1.0, max=2.0], nvl_recv_bytes: 1.00 MB\n", p,
                   "500.00", us({"dispatch", fp8, true}));
  t += fmt::format("combine:{:>42} GB/s (NVL), t: {:.1f} us [min=1.0, max=2.0], combine_send_bytes: 1.00 MB\n",
                   "500.00", us({"combine", false, true}));
  t += fmt::format("dispatch+permute ({}):{:>28} GB/s (NVL), t: 9999.0 us [min=1.0, max=2.0], nvl_recv_bytes: 1 MB\n", p,
                   "1.00");  // not what moesim models: skipped
  t += fmt::format("\n=== Kernel Benchmark ({}, {} ranks) ===\n", p, ranks);
  t += fmt::format("dispatch kernel ({})(NVL):{:>25} GB/s, avg_t={:.1f} us [min=1.0, max=2.0]\n", p, "600.00",
                   us({"dispatch", fp8, false}));
  t += fmt::format("combine kernel(NVL):{:>31} GB/s, avg_t={:.1f} us [min=1.0, max=2.0]\n", "600.00",
                   us({"combine", false, false}));
  return t;
}

double fitted_value(const Calibration& c, const std::string& key) {
  for (const FittedParameter& p : c.parameters)
    if (p.key == key) return p.fitted;
  FAIL("not fitted: " + key);
  return 0;
}

Calibration fit(const std::string& system, const std::vector<DispatcherTestsOutput>& outputs, int gpus_per_domain = 0) {
  const CalibrationTarget target{system, kBundledConfigs, gpus_per_domain};
  return fit_tables(system, dispatcher_measured_tables(target, outputs));
}

std::string error_of(const std::string& text, const DispatcherTestsHints& hints = {}) {
  try {
    parse_dispatcher_tests(text, "out.txt", hints);
  } catch (const ConfigError& e) {
    CHECK(e.file() == "out.txt");
    CHECK(e.json_path().rfind("line ", 0) == 0);
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("DeepEP's and HybridEP's outputs are read as their tests print them", "[calibrate][dispatchers]") {
  SECTION("DeepEP intranode: the tuned best of each kernel, its SMs and time; the sweep lines skipped") {
    const DispatcherTestsOutput o = parse_dispatcher_tests(deepep_text("hgx-h800", 8, false, {}), "intra.txt", {8});
    CHECK(o.tool == "deepep");
    CHECK_FALSE(o.internode);
    CHECK(o.ranks == 8);
    CHECK(o.experts == 256);
    CHECK(o.tokens == 4096);
    REQUIRE(o.runs.size() == 3);
    CHECK(o.runs[0].what() == "dispatch (FP8)");
    CHECK(o.runs[1].what() == "dispatch (BF16)");
    CHECK(o.runs[2].what() == "combine");
    CHECK(o.runs[0].sms == 24);
    CHECK(o.runs[0].line == 6);
    CHECK(o.runs[0].time_us > 0);
  }
  SECTION("DeepEP internode: the kernel's time without the notify kernel; a router group per node") {
    const DispatcherTestsOutput o = parse_dispatcher_tests(deepep_text("hgx-h800", 32, true, {}), "inter.txt", {32});
    CHECK(o.internode);
    CHECK(o.groups == 4);
    CHECK(o.topk_groups == 4);  // num_topk_groups=None: min(nodes, 4)
    const DispatcherTestsOutput two = parse_dispatcher_tests(
        "[config] num_tokens=1024, hidden=4096, num_topk_groups=1, num_topk=6\n[tuning] Best combine: SMs 20, NVL "
        "chunk 2, RDMA chunk 12, 30.50 + 812.25 us, 41.00 GB/s (RDMA), 131.00 GB/s (NVL)\n",
        "two.txt", {16, 64});
    CHECK(two.runs.at(0).time_us == 812.25);
    CHECK(two.runs.at(0).sms == 20);
    CHECK(two.tokens == 1024);
    CHECK(two.hidden == 4096);
    CHECK(two.topk == 6);
    CHECK(two.topk_groups == 1);
    CHECK(two.groups == 2);
    CHECK(two.experts == 64);
  }
  SECTION("HybridEP: both sections, the rank count printed, the permute variants skipped") {
    const DispatcherTestsOutput o = parse_dispatcher_tests(hybridep_text("gb200-nvl72", 32, 32, true, {}) +
                                                               hybridep_text("gb200-nvl72", 32, 32, false, {}),
                                                           "hep.txt", {0, 0, 32});
    CHECK(o.tool == "hybridep");
    CHECK(o.ranks == 32);
    CHECK(o.experts == 256);  // 8 local experts per rank
    REQUIRE(o.runs.size() == 8);
    CHECK(o.runs[0].torch_api);
    CHECK(o.runs[0].what() == "dispatch (FP8), Torch API");
    CHECK(o.runs[2].what() == "dispatch (FP8)");
    CHECK(o.runs[3].what() == "combine");
    CHECK(o.runs[4].what() == "dispatch (BF16), Torch API");
    CHECK(o.runs[0].sms == 32);
    // --ranks is for outputs that do not print it: HybridEP's own count stands (a calibration
    // mixing it with an nccl-tests table of 4 ranks).
    CHECK(parse_dispatcher_tests(hybridep_text("gb200-nvl72", 32, 32, true, {}), "hep.txt", {4}).ranks == 32);
  }
  SECTION("what cannot be read is refused by file and line") {
    CHECK_THAT(error_of("[tuning] Best dispatch (FP8): SMs 24, NVL chunk 6, 150.00 GB/s (NVL), t: 9 us\n"),
               Contains("--ranks"));
    CHECK_THAT(error_of("[config] num_tokens=4096, hidden=7168, num_topk=8\n[tuning] Best dispatch (FP8): SMs 24, NVL "
                        "chunk 6, t: 9 us\n",
                        {8}),
               Contains("line 2") && Contains("GB/s (NVL)"));
    CHECK_THAT(error_of("[tuning] Best dispatch: SMs 24, NVL chunk 6, 150.00 GB/s (NVL), t: 9 us\n", {8}),
               Contains("precision"));
    CHECK_THAT(error_of("[tuning] Best combine: SMs 24, NVL chunk 1, RDMA chunk 12, 30 us, 41.00 GB/s (RDMA), 131.00 "
                        "GB/s (NVL)\n",
                        {16}),
               Contains("notify"));
    CHECK_THAT(error_of("[config] num_tokens=4096, hidden=0, num_topk=8\n", {8}), Contains("hidden"));
    CHECK_THAT(error_of("[config] num_tokens=4096, hidden=7168, num_topk=8\n[testing] Running ...\n", {8}),
               Contains("at least one measured kernel"));
    CHECK_THAT(error_of("dispatch kernel (FP8)(NVL):  538.86 GB/s, avg_t=408.3 us\n=== Kernel Benchmark (FP8, 32 "
                        "ranks) ===\n"),
               Contains("line 1") && Contains("under its section header"));
    CHECK_THAT(error_of("=== Kernel Benchmark (FP8, 32 ranks) ===\n=== Kernel Benchmark (BF16, 16 ranks) ===\n"),
               Contains("line 2") && Contains("one rank count"));
    CHECK_THAT(error_of("dispatch (FP8): 1 GB/s\n"), Contains("DeepEP's test output"));
  }
}

TEST_CASE("calibrate recovers the dispatcher kernels an output was generated with", "[calibrate][dispatchers]") {
  SECTION("DeepEP intranode on H800: each kernel's NVLink efficiency") {
    const json truth = {{"dispatch", {{"nvlink_efficiency", 0.6}}}, {"combine", {{"nvlink_efficiency", 0.62}}}};
    const Calibration c = fit("hgx-h800", {parse_dispatcher_tests(deepep_text("hgx-h800", 8, false, truth), "a.txt", {8})});
    CHECK(fitted_value(c, "dispatchers.deepep.dispatch.nvlink_efficiency") == Approx(0.6).epsilon(0.001));
    CHECK(fitted_value(c, "dispatchers.deepep.combine.nvlink_efficiency") == Approx(0.62).epsilon(0.001));
    for (const TableFit& t : c.tables) CHECK(t.max_error_after_pct < 0.1);
  }
  SECTION("DeepEP internode on 4 H800 nodes: the RDMA efficiency") {
    const json truth = {{"dispatch", {{"rdma_efficiency", 0.8}}}};
    const Calibration c =
        fit("hgx-h800", {parse_dispatcher_tests(deepep_text("hgx-h800", 32, true, truth), "b.txt", {32})});
    CHECK(fitted_value(c, "dispatchers.deepep.dispatch.rdma_efficiency") == Approx(0.8).epsilon(0.001));
    for (const TableFit& t : c.tables) CHECK(t.max_error_after_pct < 0.1);
  }
  SECTION("HybridEP on GB200: the kernel's link and SM law apart, the call's share from the Torch API lines") {
    const json truth = {{"dispatch", {{"nvlink_efficiency", 0.66}, {"sm_copy_ns_per_peer", 4.2},
                                      {"torch_api_share", 0.7}}}};
    const std::string text =
        hybridep_text("gb200-nvl72", 32, 32, true, truth) + hybridep_text("gb200-nvl72", 32, 32, false, truth);
    const Calibration c = fit("gb200-nvl72", {parse_dispatcher_tests(text, "c.txt", {0, 0, 32})});
    CHECK(fitted_value(c, "dispatchers.hybridep.dispatch.nvlink_efficiency") == Approx(0.66).epsilon(0.002));
    CHECK(fitted_value(c, "dispatchers.hybridep.dispatch.sm_copy_ns_per_peer") == Approx(4.2).epsilon(0.002));
    CHECK(fitted_value(c, "dispatchers.hybridep.dispatch.torch_api_share") == Approx(0.7).epsilon(0.002));
    for (const TableFit& t : c.tables) CHECK(t.max_error_after_pct < 0.2);
  }
  SECTION("DeepEP's README figures, as the bundled file derived them, give the bundled values back") {
    const auto example = moesim::test::source_dir() / "examples" / "calibration" / "h800-deepep-intranode.txt";
    const Calibration c =
        fit("hgx-h800", {parse_dispatcher_tests(moesim::test::slurp(example), example.string(), {8})});
    const EpDispatcherSpec bundled = config::load_dispatcher("deepep", kBundledConfigs);
    CHECK(fitted_value(c, "dispatchers.deepep.dispatch.nvlink_efficiency") ==
          Approx(bundled.dispatch.nvlink_efficiency).epsilon(0.005));
    CHECK(fitted_value(c, "dispatchers.deepep.combine.nvlink_efficiency") ==
          Approx(bundled.combine.nvlink_efficiency).epsilon(0.005));
  }
}

TEST_CASE("an overlay's dispatchers layer patches every stack that ships the file", "[calibrate][overlay]") {
  TempTree tree("calibrate-dispatchers-overlay");
  const json layer = {{"dispatch", {{"nvlink_efficiency", 0.5}}},
                      {"sources", {{"dispatch.nvlink_efficiency", "moesim calibrate: a test's own output"}}}};
  const json written = {{"moesim_calibration", 1},
                        {"system", "gb300-nvl72"},
                        {"overrides", {{"dispatchers", {{"hybridep", layer}}}}}};
  const auto file = tree.root() / "hep.json";
  std::ofstream(file) << written.dump(2);
  const config::CalibrationOverlay overlay = config::read_calibration_overlay(file, kBundledConfigs);
  CHECK(overlay.keys == std::vector<std::string>{"dispatchers.hybridep.dispatch.nvlink_efficiency"});
  CHECK(overlay.system_overrides.empty());

  const json record = moesim::test::record_json();
  const Scenario plain = config::load_scenario_json(record, "r.json", {kBundledConfigs});
  const Scenario calibrated = config::load_scenario_json(record, "r.json", {kBundledConfigs, {overlay}});
  REQUIRE(plain.recipe.dispatcher == "hybridep");
  CHECK(calibrated.stack.hybridep.dispatch.nvlink_efficiency == 0.5);
  CHECK(calibrated.stack.hybridep.combine == plain.stack.hybridep.combine);
  CHECK(calibrated.stack.deepep == plain.stack.deepep);
  CHECK(calibrated.system == plain.system);
  // The scenario's own override of the same key wins.
  json own = record;
  own["stack"] = {{"base", record["stack"]}, {"hybridep", {{"dispatch", {{"nvlink_efficiency", 0.9}}}}}};
  CHECK(config::load_scenario_json(own, "own.json", {kBundledConfigs, {overlay}}).stack.hybridep.dispatch.nvlink_efficiency ==
        0.9);
  // A slower dispatch kernel makes the step slower.
  driver::RunOptions ro;
  ro.configs_dir = kBundledConfigs.string();
  CHECK(driver::run_scenario(calibrated, ro).metrics.step_time_s > driver::run_scenario(plain, ro).metrics.step_time_s);

  // Bad layers are refused by file and path.
  auto error_of_overlay = [&](const json& doc) {
    const auto f = tree.root() / "bad.json";
    std::ofstream(f) << doc.dump();
    try {
      config::read_calibration_overlay(f, kBundledConfigs);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };
  json j = written;
  j["overrides"]["dispatchers"] = {{"deepep-v9", layer}};
  CHECK_THAT(error_of_overlay(j), Contains("$.overrides.dispatchers[\"deepep-v9\"]") && Contains("no such file"));
  j = written, j["overrides"]["dispatchers"]["hybridep"].erase("sources");
  CHECK_THAT(error_of_overlay(j), Contains("dispatch.nvlink_efficiency") && Contains("source"));
  j = written, j["overrides"]["dispatchers"]["hybridep"]["dispatch"]["nvlink_efficiency"] = 2;
  CHECK_THAT(error_of_overlay(j), Contains("$.overrides.dispatchers.hybridep.dispatch.nvlink_efficiency"));
  j = written, j["overrides"]["dispatchers"] = json::object();
  CHECK_THAT(error_of_overlay(j), Contains("$.overrides") && Contains("at least one calibrated key"));
}

TEST_CASE("a scenario names its own calibration; the command line's replaces it", "[calibrate][overlay]") {
  TempTree tree("calibrate-scenario-key");
  const auto overlay_for = [&](const std::string& name, const std::string& system, double efficiency) {
    const json doc = {{"moesim_calibration", 1},
                      {"system", system},
                      {"overrides",
                       {{"system",
                         {{"nccl", {{"net_efficiency", efficiency}}},
                          {"sources", {{"nccl.net_efficiency", "moesim calibrate: a test"}}}}}}}};
    std::filesystem::create_directories(tree.root() / "cal");
    std::ofstream(tree.root() / "cal" / name) << doc.dump();
    return tree.root() / "cal" / name;
  };
  overlay_for("mine.json", "gb300-nvl72", 0.4);
  json scenario = moesim::test::record_json();
  scenario["calibration"] = "cal/mine.json";
  const auto file = tree.root() / "s.json";
  std::ofstream(file) << scenario.dump();
  const Scenario s = config::load_scenario(file, {kBundledConfigs});
  CHECK(s.system.nccl.net_efficiency == 0.4);
  CHECK(s.calibration == (tree.root() / "cal" / "mine.json").string());
  const config::CalibrationOverlay given =
      config::read_calibration_overlay(overlay_for("given.json", "gb300-nvl72", 0.6), kBundledConfigs);
  CHECK(config::load_scenario(file, {kBundledConfigs, {given}}).system.nccl.net_efficiency == 0.6);
  // An overlay of another system is the scenario's error, not a silent no-op.
  overlay_for("other.json", "gb200-nvl72", 0.5);
  scenario["calibration"] = "cal/other.json";
  std::ofstream(file) << scenario.dump();
  try {
    config::load_scenario(file, {kBundledConfigs});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.json_path() == "$.calibration");
    CHECK_THAT(std::string(e.what()), Contains("gb200-nvl72"));
  }
  scenario["calibration"] = 3;
  std::ofstream(file) << scenario.dump();
  CHECK_THROWS_WITH(config::load_scenario(file, {kBundledConfigs}), Contains("$.calibration"));
}

TEST_CASE("collective and validate show a calibration's effect, before and after", "[calibrate][cli]") {
  TempTree tree("calibrate-before-after");
  const auto example = moesim::test::source_dir() / "examples" / "calibration" / "gb200-hybridep-ep32.txt";
  const auto overlay = tree.root() / "hep.json";
  const auto r = run_cli({"calibrate", example.string(), "--system", "gb200-nvl72", "--sms", "32", "-o",
                          overlay.string()},
                         tree.root());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("dispatchers.hybridep.dispatch.nvlink_efficiency") && Contains("Torch API"));
  const json o = json::parse(moesim::test::slurp(overlay));
  CHECK(o["overrides"]["dispatchers"]["hybridep"]["dispatch"].contains("torch_api_share"));
  const auto coll = run_cli({"collective", "--system", "gb200-nvl72", "--op", "ep-dispatch", "--dispatcher",
                             "hybridep", "--ranks", "32", "--sms", "32", "--fidelity", "closed", "--calibration",
                             overlay.string(), "--format", "json"},
                            tree.root());
  REQUIRE(coll.code == 0);
  const json rows = json::parse(coll.out);
  // The README's FP8 kernel row is 6 % slower than the bundled file's EP8-derived efficiency gives.
  CHECK(rows[0]["closed_form_seconds"].get<double>() > rows[0]["bundled_closed_form_seconds"].get<double>() * 1.03);

  driver::Validation bundled, calibrated;
  driver::ValidationRow row;
  row.published.id = "gb200-mxfp8-2604";
  row.published.tflops_per_gpu = 1090;
  row.simulated_tflops = 1081.1;
  row.relative_error = 1081.1 / 1090 - 1;
  bundled.runs = {row, row};
  bundled.runs[1].published.id = "gb300-mxfp8-2604";
  calibrated.runs = bundled.runs;
  calibrated.runs[0].simulated_tflops = 1084.0;
  calibrated.runs[0].relative_error = 1084.0 / 1090 - 1;
  const std::string text = driver::calibration_effect_text(bundled, calibrated, {"hep.json"});
  CHECK_THAT(text, Contains("Calibrated by hep.json") && Contains("gb200-mxfp8-2604") && Contains("1084.0"));
  CHECK_THAT(text, !Contains("gb300-mxfp8-2604"));  // unmoved rows are left out
}
