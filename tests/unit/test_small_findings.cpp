// The smaller findings of issue 11, each a reproducer: ops on an all-MoE model, --jobs -1, the
// first scenarios fit in memory, and the plots (hollow does-not-fit points, efficiency axis).
#include <catch2/catch.hpp>

#include <sstream>

#include "moesim/config/loader.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/sweep/plot.hpp"
#include "test_reliability_cli.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::record_json;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("ops shows no dense layer for a model without one", "[small-findings]") {
  const TempTree tree("ops-all-moe");
  json s = record_json();
  s["model"] = "mixtral-8x7b";  // every layer MoE
  s["system"] = "hgx-h100";
  s["gpus"] = 8;
  s["training"] = {{"seq_len", 4096}, {"global_batch", 8}, {"micro_batch", 1}, {"precision", "bf16"}, {"mtp_layers", 0}};
  s["layout"] = {{"tp", 1}, {"pp", 1}, {"vpp", 1}, {"ep", 8}, {"etp", 1}, {"cp", 1}, {"dp", 0}, {"pipeline_layout", ""}};
  s.erase("published");
  s["stack"] = "megatron-core-baseline";
  const fs::path scenario = tree.write("mixtral.json", s.dump(2));
  const test::CliResult mixtral = run_cli({"ops", scenario.string()}, tree.root());
  INFO(mixtral.err);
  REQUIRE(mixtral.code == 0);
  CHECK_THAT(mixtral.out, Contains("MoE layer"));
  CHECK(mixtral.out.find("dense layer") == std::string::npos);
  // DeepSeek-V3's first three layers are dense: shown.
  const test::CliResult dsv3 = run_cli({"ops", test::record_json_path().string()}, tree.root());
  CHECK_THAT(dsv3.out, Contains("dense layer"));
}

TEST_CASE("ops keeps a long op name apart from its shape", "[small-findings]") {
  // The MXFP8 record's scale swizzles have names longer than the old fixed column of 24: each
  // ran into its shape ("mla_q_down_scale_swizzle2.5 MB").
  const TempTree tree("ops-long-names");
  const test::CliResult r = run_cli({"ops", test::record_json_path().string()}, tree.root());
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  int swizzle_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("_scale_swizzle");
    if (at == std::string::npos) continue;
    ++swizzle_rows;
    INFO(line);
    CHECK(line.substr(at + 14, 2) == "  ");
  }
  CHECK(swizzle_rows > 0);
}

TEST_CASE("ops counts a layer's launches and the host time to issue them, as a step prices them", "[small-findings]") {
  // The record's release replays every kernel from a full-iteration graph (0.96 us a kernel on
  // the x86 reference, configs/calibration/kernels.json) and has no Transformer Engine per-call
  // host time (TE 2.12 on); without graphs the same kernels launch eagerly (9.35 us). The host
  // time of the MoE layer then grows by 9.35 / 0.96, its launches stay.
  const TempTree tree("ops-launches");
  json eager = record_json();
  eager["recipe"]["cuda_graphs"] = "none";
  const fs::path eager_path = tree.write("eager.json", eager.dump(2));
  auto moe_layer = [&](const std::string& scenario) {
    const test::CliResult r = run_cli({"ops", scenario}, tree.root());
    REQUIRE(r.code == 0);
    std::istringstream lines(r.out);
    std::pair<double, double> launches{-1, -1}, host_us{-1, -1};
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line.substr(line.find_last_of(')') + 1));
      if (line.find("kernel launches") != std::string::npos && launches.first < 0)
        words >> launches.first >> launches.second;
      if (line.find("host CPU to issue them") != std::string::npos && host_us.first < 0)
        words >> host_us.first >> host_us.second;
    }
    return std::make_pair(launches, host_us);
  };
  const auto [graph_launches, graph_host] = moe_layer(test::record_json_path().string());
  const auto [eager_launches, eager_host] = moe_layer(eager_path.string());
  REQUIRE(graph_launches.first > 0);
  CHECK(eager_launches == graph_launches);
  CHECK(eager_host.first / graph_host.first == Approx(9.35 / 0.96).epsilon(0.01));
  CHECK(eager_host.second / graph_host.second == Approx(9.35 / 0.96).epsilon(0.01));
  // On the system's CPU: Grace takes 2.75 times the x86 reference's time (TE2053).
  CHECK(graph_host.first / graph_launches.first == Approx(0.96 * 2.75).epsilon(0.01));
}

TEST_CASE("A job count of -1 is refused with a short message", "[small-findings]") {
  const TempTree tree("jobs-negative");
  const test::CliResult r = run_cli({"sweep", "x.json", "--jobs", "-1"}, tree.root());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--jobs"));
  CHECK(r.err.size() < 200);  // no 309-digit bound
}

TEST_CASE("The bundled first scenarios fit in memory", "[small-findings]") {
  // The scenarios docs/quickstart.md starts a user with. deepseek-v3-h800-dualpipe.json is left
  // out: it reproduces DeepSeek's own run, which the Megatron-style memory model does not fit
  // (docs/validation.md, its DualPipe table: "fits: no").
  for (const char* name : {"gb300-256-record.json", "gb200-256.json"}) {
    INFO(name);
    const Scenario s = config::load_scenario(test::source_dir() / "scenarios" / name);
    const plan::Layout l = plan::make_layout(s);
    for (const plan::MemoryBreakdown& m : plan::memory_per_stage(s, l)) {
      INFO("pipeline rank " << m.pp_rank << ": " << m.total_bytes() / 1e9 << " of " << m.usable_bytes / 1e9 << " GB");
      CHECK(m.fits());
    }
  }
}

TEST_CASE("Plots draw points that do not fit hollow, with a legend entry", "[small-findings][sweep]") {
  sweep::SweepResult r = test::synthetic_result();
  r.rows[1]["fits_in_memory"] = false;
  const auto files = sweep::plot_files(r);
  REQUIRE(files.size() == 3);
  const std::string& script = files[0].content;
  CHECK_THAT(script, Contains("pointtype 6") && Contains("does not fit in memory (hollow)"));
  // Columns: GPUs, TFLOP/s, efficiency, tokens per kWh, fits (0 for this point).
  const std::string& data = files[1].content;
  const auto at = data.find("\n512 990 ");
  REQUIRE(at != std::string::npos);
  const auto end = data.find('\n', at + 1);
  CHECK(data.substr(end - 2, 2) == " 0");
  // Without such a point there is no legend entry for it.
  const auto all_fit = sweep::plot_files(test::synthetic_result());
  CHECK(all_fit[0].content.find("does not fit") == std::string::npos);
}

TEST_CASE("The efficiency axis starts at 90 % unless the data goes lower", "[small-findings][sweep]") {
  sweep::SweepResult r = test::synthetic_result();  // efficiencies 100 % and 99 %
  CHECK_THAT(sweep::plot_files(r)[0].content, Contains("set yrange [90:101]"));
  r.rows[1]["scaling_efficiency"] = 0.82;
  CHECK_THAT(sweep::plot_files(r)[0].content, Contains("set yrange [75:101]"));
}

TEST_CASE("collective --algo forces NCCL's algorithm, as NCCL_ALGO does, and refuses one that cannot run",
          "[small-findings]") {
  const TempTree tree("collective-algo");
  const std::vector<std::string> base{"collective", "--system", "hgx-h100", "--op", "all-reduce", "--ranks", "8",
                                      "--bytes", "1M", "--fidelity", "closed", "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, tree.root());
  };
  const test::CliResult chosen = with({});
  REQUIRE(chosen.code == 0);
  CHECK(json::parse(chosen.out)[0]["algorithm"] != "nvls");  // NCCL's own choice at 1 MiB: a ring
  const test::CliResult forced = with({"--algo", "nvls"});
  REQUIRE(forced.code == 0);
  CHECK(json::parse(forced.out)[0]["algorithm"] == "nvls");
  const test::CliResult tree_in_one_node = with({"--algo", "tree"});
  CHECK(tree_in_one_node.code == 2);
  CHECK_THAT(tree_in_one_node.err, Contains("--algo") && Contains("NCCL_ALGO=tree cannot run this all_reduce"));
  CHECK(tree_in_one_node.out.empty());
  const test::CliResult on_ep = run_cli({"collective", "--op", "ep-dispatch", "--algo", "ring"}, tree.root());
  CHECK(on_ep.code == 2);
  CHECK_THAT(on_ep.err, Contains("applies to NCCL collectives"));
}

TEST_CASE("collective --no-nvls turns NVLS and NVLS-tree off, as NCCL_NVLS_ENABLE=0 does", "[small-findings]") {
  const TempTree tree("collective-nvls");
  auto algorithm = [&](int ranks, std::vector<std::string> extra) {
    std::vector<std::string> args{"collective", "--system", "gb200-nvl72", "--op", "all-reduce", "--ranks",
                                  std::to_string(ranks), "--bytes", "8G", "--fidelity", "closed", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const test::CliResult r = run_cli(args, tree.root());
    REQUIRE(r.code == 0);
    return json::parse(r.out)[0]["algorithm"].get<std::string>();
  };
  CHECK(algorithm(72, {}) == "nvls");
  CHECK(algorithm(72, {"--no-nvls"}) == "ring");
  CHECK(algorithm(144, {}) == "nvls_tree");
  const std::string across = algorithm(144, {"--no-nvls"});
  CHECK((across == "ring" || across == "tree"));
  const test::CliResult forced = run_cli({"collective", "--system", "gb200-nvl72", "--op", "all-reduce", "--ranks",
                                          "144", "--no-nvls", "--algo", "nvls_tree"},
                                         tree.root());
  CHECK(forced.code == 2);
  CHECK_THAT(forced.err, Contains("NCCL_ALGO=nvls_tree cannot run"));
  const test::CliResult on_ep = run_cli({"collective", "--op", "ep-dispatch", "--no-nvls"}, tree.root());
  CHECK(on_ep.code == 2);
  CHECK_THAT(on_ep.err, Contains("--no-nvls") && Contains("applies to NCCL collectives"));
}

TEST_CASE("collective --nccl-version models the NCCL release a table was measured with", "[small-findings]") {
  const TempTree tree("collective-nccl-version");
  auto run_with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"collective", "--system", "hgx-h100", "--op", "all-reduce", "--ranks", "8",
                                  "--algo", "nvls", "--bytes", "128K", "--fidelity", "closed", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, tree.root());
  };
  auto time_us = [&](std::vector<std::string> extra) {
    const test::CliResult r = run_with(extra);
    REQUIRE(r.code == 0);
    return 1e6 * json::parse(r.out)[0]["seconds"].get<double>();
  };
  // 2.18 puts 128 KiB on one channel; 2.28 cuts it into 8 KiB cells over 16 (the default).
  CHECK(time_us({"--nccl-version", "2.18.5"}) > time_us({}) + 15);
  CHECK(time_us({"--nccl-version", "2.28"}) == time_us({}));
  for (const char* bad : {"3.1", "2.18x", "2", "2.x"}) {
    const test::CliResult r = run_with({"--nccl-version", bad});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("--nccl-version") && Contains("MAJOR.MINOR"));
    CHECK(r.out.empty());
  }
  const test::CliResult on_ep = run_cli({"collective", "--op", "ep-dispatch", "--nccl-version", "2.18"}, tree.root());
  CHECK(on_ep.code == 2);
  CHECK_THAT(on_ep.err, Contains("applies to NCCL collectives"));
}

TEST_CASE("collective --kernels runs an EP exchange on another file of configs/dispatchers/", "[small-findings]") {
  const TempTree tree("collective-kernels");
  auto run_with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"collective", "--system", "hgx-b200", "--op", "ep-dispatch", "--ep", "8",
                                  "--sms", "64", "--fidelity", "closed", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, tree.root());
  };
  auto row = [&](std::vector<std::string> extra) {
    const test::CliResult r = run_with(extra);
    REQUIRE(r.code == 0);
    return json::parse(r.out)[0];
  };
  // Link-bound at 64 SMs: DeepEP V2 reaches 0.697 of the 900 GB/s port where V1's normal kernels
  // reach 0.669; the same bytes, the same fixed latency.
  const json v1 = row({}), v2 = row({"--kernels", "deepep-v2"});
  const double port_bytes = v1["nvlink_bytes"].get<double>();
  CHECK(v2["nvlink_bytes"].get<double>() == port_bytes);
  CHECK(v1["seconds"].get<double>() - v2["seconds"].get<double>() ==
        Approx(port_bytes / (0.669 * 900e9) - port_bytes / (0.697 * 900e9)).epsilon(1e-6));
  CHECK(row({"--kernels", "deepep"}) == v1);
  const test::CliResult missing = run_with({"--kernels", "deepep-v9"});
  CHECK(missing.code != 0);
  CHECK_THAT(missing.err, Contains("available: deepep, deepep-v2, hybridep"));
  CHECK(missing.out.empty());
  const test::CliResult nccl = run_with({"--kernels", "deepep-v2", "--dispatcher", "alltoall"});
  CHECK(nccl.code == 2);
  CHECK_THAT(nccl.err, Contains("--kernels"));
}
