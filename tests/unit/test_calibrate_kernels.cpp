// moesim calibrate on kernel timing tables (issue 41): the CSV read by its header, the kernel
// model's efficiencies and the GPU's clocks recovered from a table moesim generated with known
// values, H200-K's own measurements giving the bundled Hopper values back, and an overlay's
// kernels layer reaching the run.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>

#include "moesim/calibrate/kernel_fit.hpp"
#include "moesim/calibrate/kernel_tables.hpp"
#include "moesim/config/calibration_overlay.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/run.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using namespace moesim::calibrate;
using Catch::Matchers::Contains;
using moesim::test::TempTree;
using nlohmann::json;

namespace {

const std::filesystem::path kKernelConfigs = moesim::test::bundled_configs();

std::string kernel_table_error(const std::string& text) {
  try {
    parse_kernel_table(text, "k.csv");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "k.csv");
    CHECK(e.json_path().rfind("line ", 0) == 0);
    return e.what();
  }
  FAIL("no error");
  return "";
}

double fitted_key(const Calibration& c, const std::string& key) {
  for (const FittedParameter& p : c.parameters)
    if (p.key == key) return p.fitted;
  FAIL("not fitted: " + key);
  return 0;
}

}  // namespace

TEST_CASE("kernel timing tables are read by their header", "[calibrate][kernels]") {
  const KernelTable t = parse_kernel_table(
      "# a comment\n\nop,precision,\"Name\",M,K,N,groups,seq,heads,d_qk,d_v,bytes,\"Avg (ns)\"\n"
      "gemm,mxfp8,\"sm100_xmma_gemm, fused\",4096,7168,2048,8,,,,,,125000\n"
      "attention_backward,fp8,,,,,,4096,128,192,128,,2500000\n"
      "copy,,,,,,,,,,,1073741824,600000\n",
      "k.csv");
  REQUIRE(t.rows.size() == 3);
  CHECK(t.rows[0].op == "gemm");
  CHECK(t.rows[0].precision == "mxfp8");
  CHECK(t.rows[0].name == "sm100_xmma_gemm, fused");
  CHECK(t.rows[0].groups == 8);
  CHECK(t.rows[0].time_us == Approx(125.0));
  CHECK(t.rows[0].line == 4);
  CHECK(t.rows[1].heads == 128);
  CHECK(t.rows[1].d_qk == 192);
  CHECK(t.rows[1].sequences == 1);
  CHECK(t.rows[2].precision == "bf16");
  CHECK(t.rows[2].bytes == 1073741824.0);
  CHECK(looks_like_kernel_table("op,time_ms\n"));
  CHECK_FALSE(looks_like_kernel_table("# nccl-tests\n#  size count type\n"));

  CHECK_THAT(kernel_table_error("name,time_us\ngemm,3\n"), Contains("line 1") && Contains("\"op\" column"));
  CHECK_THAT(kernel_table_error("op,time_us\nconv,3\n"), Contains("line 2") && Contains("column op"));
  CHECK_THAT(kernel_table_error("op,M,K,time_us\ngemm,1,2,3\n"), Contains("column n") && Contains("gemm row"));
  CHECK_THAT(kernel_table_error("op,precision,bytes,time_us\ncopy,mxfp8,10,3\n"), Contains("column precision"));
  CHECK_THAT(kernel_table_error("op,bytes,time_us\ncopy,10,-3\n"), Contains("positive number"));
  CHECK_THAT(kernel_table_error("op,seq,heads,d_qk,d_v,time_us\nattention_forward,4096,1.5,64,64,3\n"),
             Contains("column heads") && Contains("whole number"));
  CHECK_THAT(kernel_table_error("op,time_us\n# nothing measured\n"), Contains("at least one measured kernel"));
}

TEST_CASE("calibrate recovers the kernel model's values a table was generated with", "[calibrate][kernels]") {
  // The truth: a slower BF16 clock, a larger fixed cost, weaker attention and copies.
  const json system_truth = {{"gpu", {{"sustained_clock_mhz", {{"bf16", 1300}}}}}};
  const std::map<std::string, double> kernel_truth = {{"architectures.hopper.gemm.fixed_us", 15.0},
                                                      {"architectures.hopper.attention.forward_efficiency.bf16", 0.7},
                                                      {"architectures.hopper.memory.copy_hbm_efficiency", 0.8}};
  std::map<std::string, std::string> sources;
  for (const auto& [key, value] : kernel_truth) sources[key] = "the test's truth";
  const SystemSpec system = config::load_system_with("hgx-h200", kKernelConfigs, system_truth);
  const cost::KernelCalibration cal =
      cost::load_calibration(cost::default_calibration_file(kKernelConfigs), kernel_truth, sources, "the test");
  std::string csv = "op,M,K,N,seq,heads,d_qk,d_v,bytes,time_us\n";
  for (const double size : {256.0, 1024.0, 4096.0, 16384.0})  // small ones show the fixed cost
    csv += fmt::format("gemm,{0},{0},{0},,,,,,{1:.4f}\n", size,
                       cost::gemm_time(size, size, size, 1, Precision::bf16, system.gpu, cal.of(system.gpu)).seconds * 1e6);
  for (const double seq : {1024.0, 4096.0, 8192.0}) {
    model::Op op;
    op.kind = model::OpKind::attention;
    op.attention_sequences = 1;
    op.attention_seq_len = seq;
    op.attention_heads = 64;
    op.attention_qk_dim = 192;
    op.attention_v_dim = 128;
    csv += fmt::format("attention_forward,,,,{},64,192,128,,{:.4f}\n", seq,
                       cost::op_cost(op, model::Pass::forward, Precision::bf16, system.gpu, cal).gpu_seconds * 1e6);
  }
  csv += fmt::format("copy,,,,,,,,{0:.0f},{1:.4f}\n", 1e9, 1e9 / (system.gpu.hbm_bytes_per_s * 0.8) * 1e6);
  const CalibrationTarget target{"hgx-h200", kKernelConfigs, 0};
  const Calibration c = fit_tables("hgx-h200", kernel_measured_tables(target, {parse_kernel_table(csv, "truth.csv")}));
  CHECK(fitted_key(c, "gpu.sustained_clock_mhz.bf16") == Approx(1300).epsilon(0.005));
  CHECK(fitted_key(c, "kernels.architectures.hopper.gemm.fixed_us") == Approx(15).epsilon(0.02));
  CHECK(fitted_key(c, "kernels.architectures.hopper.attention.forward_efficiency.bf16") == Approx(0.7).epsilon(0.005));
  CHECK(fitted_key(c, "kernels.architectures.hopper.memory.copy_hbm_efficiency") == Approx(0.8).epsilon(0.001));
  for (const TableFit& t : c.tables) CHECK(t.max_error_after_pct < 0.5);
}

TEST_CASE("H200-K's own kernels give the bundled Hopper values back; the overlay reaches the run",
          "[calibrate][kernels][overlay]") {
  const auto example = moesim::test::source_dir() / "examples" / "calibration" / "h200-kernels.csv";
  const CalibrationTarget target{"hgx-h200", kKernelConfigs, 0};
  const Calibration c = fit_tables(
      "hgx-h200", kernel_measured_tables(target, {parse_kernel_table(moesim::test::slurp(example), example.string())}));
  // The bundled GEMM and attention values were fitted to these measurements (configs/ sources):
  // refitted together they move by a few per cent, not more.
  CHECK(fitted_key(c, "gpu.sustained_clock_mhz.bf16") == Approx(1440).epsilon(0.05));
  CHECK(fitted_key(c, "gpu.sustained_clock_mhz.fp8") == Approx(1215).epsilon(0.05));
  CHECK(fitted_key(c, "kernels.architectures.hopper.attention.forward_efficiency.bf16") == Approx(0.78).epsilon(0.05));

  TempTree tree("calibrate-kernels-overlay");
  const auto file = tree.root() / "k.json";
  std::ofstream(file) << overlay_json(c).dump(2);
  const config::CalibrationOverlay overlay = config::read_calibration_overlay(file, kKernelConfigs);
  CHECK(std::find(overlay.keys.begin(), overlay.keys.end(), "kernels.architectures.hopper.gemm.fixed_us") !=
        overlay.keys.end());
  CHECK(std::find(overlay.keys.begin(), overlay.keys.end(), "gpu.sustained_clock_mhz.bf16") != overlay.keys.end());
  CHECK(overlay.kernels.at("architectures.hopper.gemm.fixed_us") ==
        fitted_key(c, "kernels.architectures.hopper.gemm.fixed_us"));

  // A scenario on the overlay's system runs with its kernels: a larger fixed cost per GEMM, a
  // slower step.
  json slow = overlay_json(c);
  slow["system"] = "hgx-h100";
  slow["overrides"].erase("system");
  slow["overrides"]["kernels"]["architectures"]["hopper"]["gemm"]["fixed_us"] = 200.0;
  std::ofstream(tree.root() / "slow.json") << slow.dump(2);
  const config::CalibrationOverlay slow_overlay = config::read_calibration_overlay(tree.root() / "slow.json", kKernelConfigs);
  const auto scenario = moesim::test::source_dir() / "scenarios" / "hgx-h100-1024-ep64.json";
  const Scenario plain = config::load_scenario(scenario, {kKernelConfigs});
  const Scenario calibrated = config::load_scenario(scenario, {kKernelConfigs, {slow_overlay}});
  CHECK(calibrated.calibrated_kernels.at("architectures.hopper.gemm.fixed_us") == 200.0);
  driver::RunOptions ro;
  ro.configs_dir = kKernelConfigs.string();
  CHECK(driver::load_kernel_calibration(calibrated, ro).architectures.at("hopper").gemm_fixed_s == Approx(200e-6));
  CHECK(driver::run_scenario(calibrated, ro).metrics.step_time_s > driver::run_scenario(plain, ro).metrics.step_time_s);

  // A kernels layer that is not numbers with sources is refused by file and path.
  const auto error_of = [&](const json& doc) {
    std::ofstream(tree.root() / "bad.json") << doc.dump();
    try {
      config::read_calibration_overlay(tree.root() / "bad.json", kKernelConfigs);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };
  json j = slow;
  j["overrides"]["kernels"]["architectures"]["hopper"]["gemm"]["fixed_us"] = "fast";
  CHECK_THAT(error_of(j), Contains("$.overrides.kernels.architectures.hopper.gemm.fixed_us") && Contains("a number"));
  j = slow, j["overrides"]["kernels"].erase("sources");
  CHECK_THAT(error_of(j), Contains("$.overrides.kernels.sources") && Contains("source"));
  j = slow, j["overrides"]["kernels"]["launch"] = json::object();
  CHECK_THAT(error_of(j), Contains("$.overrides.kernels.launch") && Contains("unknown key"));
}
