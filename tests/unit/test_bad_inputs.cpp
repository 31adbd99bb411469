// The catalogue of bad inputs (docs/bad-inputs.md), one section per row: each runs the moesim
// binary and checks the exit code (2 invalid input, 3 infeasible layout, 4 output not written),
// the words of the message, and that the output folder holds nothing afterwards (no target,
// no temporary file).
#include <catch2/catch.hpp>

#include "test_reliability_cli.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::CliResult;
using moesim::test::record_json;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;

namespace {

struct BadInput {
  std::string id;                    // row of docs/bad-inputs.md
  std::string text;                  // the scenario file's content
  int code;
  std::vector<std::string> message;  // each must appear in standard error
  std::vector<std::string> args = {};  // after "<command> <scenario>"
  std::string command = "plan";
};

std::string patched(const json& patch) {
  json s = record_json();
  s.merge_patch(patch);
  return s.dump(2);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::vector<BadInput> catalogue() {
  return {
      // Malformed documents
      {"malformed JSON", "{\n  \"name\": \"x\",,\n}\n", 2, {"well-formed JSON", "line 2, column 15"}},
      {"empty file", "", 2, {"well-formed JSON", "line 1"}},
      {"not an object", "[1, 2]", 2, {"$: a JSON object; got an array (wrong type)"}},
      {"duplicate key", R"({"name": "a", "gpus": 8, "gpus": 16})", 2, {"$.gpus", "duplicate key"}},
      {"number beyond a double", replaced(patched(json::object()), "\"gpus\": 256", "\"gpus\": 1e400"), 2,
       {"$.gpus: a number within the range of a double", "number overflow parsing '1e400'"}},
      // Types
      {"string for a number", patched({{"gpus", "256"}}), 2,
       {"$.gpus: an integer, >= 1 and <= 16777216; got the string \"256\" (wrong type)"}},
      {"fraction for an integer", patched({{"gpus", 256.5}}), 2, {"$.gpus", "an integer", "(wrong type)"}},
      {"gpus 1e12 (a float literal)", patched({{"gpus", 1e12}}), 2, {"$.gpus", "an integer", "(wrong type)"}},
      {"boolean as a string", patched({{"layout", {{"sequence_parallel", "yes"}}}}), 2,
       {"$.layout.sequence_parallel: true or false", "(wrong type)"}},
      {"reference of the wrong type", patched({{"system", 72}}), 2, {"$.system", "(wrong type)"}},
      // Keys
      {"unknown key", patched({{"gpu", 256}}), 2, {"$.gpu: unknown key; allowed keys here: name, system, gpus"}},
      {"unknown nested key", patched({{"layout", {{"tpp", 2}}}}), 2, {"$.layout.tpp: unknown key", "tp, pp"}},
      {"unknown override key", patched({{"system", {{"base", "gb300-nvl72"}, {"nvlink_gbps", 900}}}}), 2,
       {"$.system.nvlink_gbps: unknown key"}},
      {"missing required key", patched({{"gpus", nullptr}}), 2, {"$.gpus", "(required key missing)"}},
      {"override without base", patched({{"model", {{"layers", 4}}}}), 2, {"$.model.base", "(required key missing)"}},
      // Sizes
      {"negative GPU count", patched({{"gpus", -8}}), 2, {"$.gpus: an integer, >= 1 and <= 16777216; got -8 (out of range)"}},
      {"zero global batch", patched({{"training", {{"global_batch", 0}}}}), 2,
       {"$.training.global_batch", ">= 1 and <= 16777216; got 0 (out of range)"}},
      {"zero parallel degree", patched({{"layout", {{"tp", 0}}}}), 2, {"$.layout.tp", "got 0 (out of range)"}},
      {"negative bandwidth override",
       patched({{"system", {{"base", "gb300-nvl72"}, {"nvlink_gbytes_per_s_per_direction", -1}}}}), 2,
       {"$.system.nvlink_gbytes_per_s_per_direction", ">= 1 and <= 100000; got -1 (out of range)"}},
      {"usable HBM above capacity", patched({{"system", {{"base", "gb300-nvl72"}, {"gpu", {{"hbm_usable_gbytes", 300}}}}}}),
       2, {"$.system.gpu.hbm_usable_gbytes", "at most hbm_gbytes"}},
      // Values that do not fit in an int
      {"gpus 10^12", patched({{"gpus", 1000000000000LL}}), 2, {"$.gpus", "fits in 32 bits; got 1000000000000 (out of range)"}},
      {"global batch 2^31", patched({{"training", {{"global_batch", 2147483648LL}}}}), 2,
       {"$.training.global_batch", "fits in 32 bits; got 2147483648"}},
      {"integer above 2^24", patched({{"model", {{"base", "deepseek-v3"}, {"layers", 16777217}}}}), 2,
       {"$.model.layers: an integer, >= 1 and <= 65536; got 16777217 (out of range)"}},
      {"MTP layers of int's maximum", patched({{"training", {{"mtp_layers", 2147483647}}}}), 2,
       {"$.training.mtp_layers", "<= 1024; got 2147483647 (out of range)"}},
      {"negative 2^31 + 1", patched({{"layout", {{"pp", -2147483649LL}}}}), 2, {"$.layout.pp", "fits in 32 bits"}},
      // Magnitudes: every number has a physical range, checked after conversion to SI
      {"NIC bandwidth 1e306 Gb/s", patched({{"system", {{"base", "gb300-nvl72"}, {"nic_gbits_per_s", 1e306}}}}), 2,
       {"$.system.nic_gbits_per_s: a number in Gb/s, >= 1 and <= 1000000", "(out of range)"}, {}, "run"},
      {"NVLink bandwidth 1e-308 GB/s",
       patched({{"system", {{"base", "gb300-nvl72"}, {"nvlink_gbytes_per_s_per_direction", 1e-308}}}}), 2,
       {"$.system.nvlink_gbytes_per_s_per_direction", ">= 1 and <= 100000", "(out of range)"}, {}, "run"},
      {"HBM bandwidth 1e-300 TB/s",
       patched({{"system", {{"base", "gb300-nvl72"}, {"gpu", {{"hbm_tbytes_per_s", 1e-300}}}}}}), 2,
       {"$.system.gpu.hbm_tbytes_per_s", ">= 0.1 and <= 1000", "(out of range)"}, {}, "run"},
      {"NVLink latency 1e308 us", patched({{"system", {{"base", "gb300-nvl72"}, {"nvlink_latency_us", 1e308}}}}), 2,
       {"$.system.nvlink_latency_us", ">= 0 and <= 1000", "(out of range)"}, {}, "run"},
      {"FP8 peak 1e-300 TFLOP/s",
       patched({{"system", {{"base", "gb300-nvl72"}, {"gpu", {{"fp8_dense_tflops", 1e-300}}}}}}), 2,
       {"$.system.gpu.fp8_dense_tflops", "0, or >= 1 and <= 100000", "(out of range)"}, {}, "run"},
      {"eager launch gap between -1 and 0", patched({{"stack", {{"base", "megatron-bridge-26.06"},
                                                                 {"eager_launch_gap_us", -0.5}}}}), 2,
       {"$.stack.eager_launch_gap_us", "-1, or >= 0 and <= 10000", "got -0.5 (out of range)"}},
      {"MTP layers 2^24", patched({{"training", {{"mtp_layers", 16777216}}}}), 2,
       {"$.training.mtp_layers", "<= 1024; got 16777216 (out of range)"}},
      {"vpp above the layer count", patched({{"layout", {{"vpp", 64}}}}), 3,
       {"pp*vpp = 2*64 = 128 virtual stages for 61 transformer layers", "without a layer"}},
      // Cross-key rules and references
      {"more GPUs than the system holds", patched({{"gpus", 20000}}), 2,
       {"$.gpus: at most the system's max_gpus (20000 > 10368)"}},
      {"a slow GPU beyond the run", patched({{"variability", {{"slow_gpu", {{"rank", 4096}, {"speed", 0.9}}}}}}), 2,
       {"$.variability.slow_gpu.rank: a rank below the run's GPU count (rank 4096 of 256 GPUs)"}},
      {"a degraded rack beyond the run", patched({{"fabric_faults", {{"nic", {{"domain", 20}, {"speed", 0.5}}}}}}), 2,
       {"$.fabric_faults.nic.domain: a domain of the run (gpus / layout.gpus_per_domain, rounded up) (domain 20 of 4)"}},
      {"a degraded NIC named twice", patched({{"fabric_faults", {{"nic", {{"domain", 1}, {"rank", 3}, {"speed", 0.5}}}}}}), 2,
       {"$.fabric_faults.nic.rank: exactly one of rank and domain"}},
      {"a cuDNN version that is not one", patched({{"stack", {{"base", "megatron-bridge-26.04"}, {"cudnn_version", "9.20x"}}}}),
       2, {"$.stack.cudnn_version: a version major.minor[.patch]", "9.20x"}},
      {"an unknown placement", patched({{"placement", "scatter"}}), 2,
       {"$.placement: one of in_order, round_robin_nodes, random_nodes; got \"scatter\" (not allowed)"}},
      {"a placement that splits nodes", patched({{"placement", "round_robin_nodes"}, {"layout", {{"gpus_per_domain", 62}}}}),
       2, {"$.placement: in_order, or whole nodes", "(62 GPUs per domain, 256 GPUs, 4 per node)"}},
      {"random nodes in folded fidelity", patched({{"placement", "random_nodes"}}), 2,
       {"$.placement: in_order or round_robin_nodes in folded fidelity", "run random_nodes with --fidelity full"}, {}, "run"},
      {"precision without tensor cores", patched({{"system", "hgx-h100"}, {"training", {{"precision", "fp4"}}}}), 2,
       {"$.training.precision", "a precision the system's GPU has tensor cores for", "has no nvfp4 peak"}},
      {"unknown precision", patched({{"training", {{"precision", "fp16"}}}}), 2,
       {"$.training.precision: one of bf16, fp8, fp8_blockwise, mxfp8, nvfp4, fp4; got \"fp16\" (not allowed)"}},
      {"no such config file", patched({{"system", "gb400-nvl72"}}), 2,
       {"$.system", "available: gb200-nvl72", "got \"gb400-nvl72\" (no such file)"}},
      {"a name too long for the file system", patched({{"system", std::string(300, 'g')}}), 2,
       {"$.system", "(no such file)"}},
      {"a path for a name", patched({{"model", "../models/deepseek-v3"}}), 2, {"$.model", "(not a plain file name)"}},
      // Layouts (exit 3: read fine, cannot run)
      {"tp does not divide the heads", patched({{"layout", {{"tp", 3}}}}), 3,
       {"infeasible layout for 256 GPUs", "not divisible by tp*cp*pp", "128 attention heads are not divisible by tp = 3"}},
      {"global batch not divisible", patched({{"training", {{"global_batch", 4001}}}}), 3,
       {"global batch 4001 is not divisible by micro_batch*dp = 1*128 = 128"}},
      {"experts not divisible by ep", patched({{"layout", {{"ep", 7}}}}), 3,
       {"256 experts cannot be split evenly over ep = 7"}},
      {"tp*cp*pp above the GPU count", patched({{"gpus", 8}, {"layout", {{"tp", 4}, {"pp", 4}}}}), 3,
       {"world size 8 is not divisible by tp*cp*pp = 4*1*4 = 16"}},
      {"pipeline layout syntax", patched({{"layout", {{"pipeline_layout", "Et|(tt"}}}}), 3, {"missing ')'"}},
      {"pipeline layout of the wrong size", patched({{"layout", {{"pipeline_layout", "Et|tL"}}}}), 3,
       {"pipeline_layout has 2 virtual stages, pp*vpp = 2*8 = 16 expected"}},
      // Sharding and offloading (issue 38)
      {"sharding the stack does not offer", patched({{"stack", "megatron-bridge-26.04"}, {"layout", {{"sharding", "fsdp"}}}}),
       2, {"$.layout.sharding", "a sharding strategy listed in the stack's supports.sharding", "shards by optimizer, not fsdp"}},
      {"offloading without a host link",
       patched({{"system", {{"base", "gb300-nvl72"}, {"host_link_gbytes_per_s", 0}}},
                {"recipe", {{"offload", {"moe_act"}}}}, {"layout", {{"sharding", "fsdp"}}}}),
       2, {"$.recipe.offload", "cannot offload moe_act"}},
      {"dp_shard not dividing the data-parallel ranks", patched({{"layout", {{"sharding", "fsdp"}, {"dp_shard", 48}}}}), 3,
       {"layout.dp_shard 48 must divide the dp x cp = 128 data-parallel ranks"}},
      {"dp_shard without fsdp", patched({{"layout", {{"dp_shard", 64}}}}), 3,
       {"layout.dp_shard 64 shards blocks: it needs sharding \"fsdp\""}},
      {"fsdp under a split backward", patched({{"layout", {{"sharding", "fsdp"}, {"schedule", "zb-v"}, {"vpp", 2}}}}), 3,
       {"layout.sharding fsdp is modelled with the 1f1b schedule (interleaved or not), not zb-v"}},
      // Command line
      {"format not offered", patched(json::object()), 2, {"--format: xml not in {table,json"}, {"--format", "xml"}},
      {"--gpus not a list of counts", patched(json::object()), 2, {"--gpus", "positive GPU counts", "256,abc"},
       {"--gpus", "256,abc"}, "run"},
      {"--gpus above max_gpus", patched(json::object()), 2, {"--gpus: $: at most 10368 GPUs on GB300 NVL72"},
       {"--gpus", "20736"}, "run"},
      {"--gpus scaling the batch beyond 2^31", patched({{"gpus", 64}, {"training", {{"global_batch", 16777216}}}}), 2,
       {"--gpus", "fits in 32 bits", "10368 GPUs would need a global batch of 2717908992"}, {"--gpus", "10368"},
       "run"},
  };
}

}  // namespace

TEST_CASE("every bad input of the catalogue exits with its code and message, writing nothing",
          "[bad-inputs]") {
  for (const BadInput& bad : catalogue()) {
    DYNAMIC_SECTION(bad.id) {
      TempTree tree("bad-input");
      const auto scenario = tree.write("scenarios/bad.json", bad.text);
      const auto out_dir = tree.root() / "out";
      std::filesystem::create_directories(out_dir);
      std::vector<std::string> args{bad.command, scenario.string()};
      args.insert(args.end(), bad.args.begin(), bad.args.end());
      args.insert(args.end(), {"--output", (out_dir / "result.txt").string()});
      const CliResult r = run_cli(args, tree.root());
      INFO(bad.id << "\nstderr: " << r.err);
      CHECK(r.code == bad.code);
      for (const auto& words : bad.message) CHECK_THAT(r.err, Contains(words));
      CHECK(r.out.empty());
      CHECK(test::listing(out_dir).empty());
    }
  }
}

TEST_CASE("missing or unreadable inputs are invalid input (exit 2)", "[bad-inputs]") {
  TempTree tree("bad-files");
  const auto out = tree.root() / "out";
  std::filesystem::create_directories(out);
  const auto target = (out / "x.json").string();
  const auto record = test::source_dir() / "scenarios" / "gb300-256-record.json";

  SECTION("scenario file absent") {
    const CliResult r = run_cli({"run", (tree.root() / "absent.json").string(), "-o", target}, tree.root());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("absent.json: $: an existing, readable JSON file"));
  }
  SECTION("scenario path is a directory") {
    const CliResult r = run_cli({"plan", tree.root().string(), "-o", target}, tree.root());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("an existing, readable JSON file"));
  }
  SECTION("--configs names no directory") {
    const CliResult r = run_cli({"plan", record.string(), "--configs", "/nonexistent/configs", "-o", target},
                                tree.root());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("$.system: a name in /nonexistent/configs/systems/ (available: none)"));
  }
  SECTION("kernel calibration missing from configs/") {
    std::filesystem::remove_all(tree.configs() / "calibration");
    const CliResult r = run_cli({"run", record.string(), "--configs", tree.configs().string(), "-o", target},
                                tree.root());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("calibration/kernels.json: $: an existing, readable JSON file"));
  }
  SECTION("no subcommand") {
    const CliResult r = run_cli({}, tree.root());
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("A subcommand is required"));
  }
  CHECK(test::listing(out).empty());
}

TEST_CASE("an output that cannot be written is exit 4 and leaves nothing behind", "[bad-inputs]") {
  TempTree tree("bad-output");
  const auto record = (test::source_dir() / "scenarios" / "gb300-256-record.json").string();

  SECTION("folder does not exist") {
    const CliResult r = run_cli({"plan", record, "--output", "/nonexistent/dir/x.json"}, tree.root());
    CHECK(r.code == 4);
    CHECK_THAT(r.err, Contains("cannot write /nonexistent/dir/x.json"));
    CHECK_FALSE(std::filesystem::exists("/nonexistent/dir"));
  }
  SECTION("target is a directory") {
    const auto out = tree.root() / "out";
    std::filesystem::create_directories(out / "x.json");
    const CliResult r = run_cli({"run", record, "--format", "json", "--output", (out / "x.json").string()},
                                tree.root());
    CHECK(r.code == 4);
    CHECK_THAT(r.err, Contains("cannot write " + (out / "x.json").string()));
    CHECK(test::listing(out) == std::vector<std::string>{"x.json"});  // the folder, no x.json.tmp.*
    CHECK(std::filesystem::is_empty(out / "x.json"));
  }
  SECTION("standard output on a full device") {
    const CliResult r = run_cli({"plan", record, "--format", "json"}, tree.root(), "/dev/full");
    CHECK(r.code == 4);
    CHECK_THAT(r.err, Contains("cannot write to standard output"));
  }
  SECTION("a failed run keeps an existing target as it was") {
    const auto out = tree.root() / "out";
    std::filesystem::create_directories(out);
    std::ofstream(out / "x.json") << "previous result\n";
    const auto bad = tree.write("scenarios/bad.json", "{\"name\": ");
    const CliResult r = run_cli({"run", bad.string(), "--output", (out / "x.json").string()}, tree.root());
    CHECK(r.code == 2);
    CHECK(test::slurp(out / "x.json") == "previous result\n");
    CHECK(test::listing(out) == std::vector<std::string>{"x.json"});
  }
}

TEST_CASE("a layout that does not fit in memory is reported, not refused (exit 0)", "[bad-inputs]") {
  TempTree tree("bad-memory");
  json s = record_json();
  s["system"] = {{"base", "gb300-nvl72"}, {"gpu", {{"hbm_gbytes", 40}, {"hbm_usable_gbytes", 40}}}};
  const auto scenario = tree.write("scenarios/small-hbm.json", s.dump(2));
  const auto out = tree.root() / "out";
  std::filesystem::create_directories(out);

  const CliResult plan = run_cli({"plan", scenario.string()}, tree.root());
  CHECK(plan.code == 0);
  CHECK_THAT(plan.out, Contains("DOES NOT FIT"));
  CHECK_THAT(plan.out, Contains("fits in memory: NO"));

  const CliResult run = run_cli({"run", scenario.string(), "--format", "json", "-o", (out / "r.json").string()},
                                tree.root());
  CHECK(run.code == 0);
  CHECK_THAT(run.err, Contains("warning: pipeline rank 0 needs"));
  CHECK_THAT(run.err, Contains("would run out of memory (simulated anyway)"));
  const json result = json::parse(test::slurp(out / "r.json"));
  CHECK(result.at("fits_in_memory") == false);
  CHECK(test::listing(out) == std::vector<std::string>{"r.json"});
}

// Inputs that the configuration stage accepts and whose products overflow int in the layout
// stage: explained as infeasible layouts (exit 3), never undefined behaviour.
TEST_CASE("Layout values whose products overflow int are explained", "[bad-inputs]") {
  TempTree tree("bad-open");
  struct Open {
    json patch;
    std::string message;
  };
  const std::vector<Open> open = {
      // pp*vpp = 2^32 used to wrap to 0 in int (a SIGFPE, later a "= 0" in the message).
      {{{"layout", {{"pp", 65536}, {"vpp", 65536}}}}, "65536*65536 = 4294967296"},
      // tp*cp*pp used to wrap (UB), and the world-size rule showed the wrapped product.
      {{{"layout", {{"tp", 46341}, {"cp", 46341}}}}, "tp*cp*pp = 46341*46341*2 = 4294976562"},
      // a repeat count beyond int: std::stoi threw out_of_range (exit 1).
      {{{"layout", {{"pipeline_layout", "Et*99999999999|L"}}}}, "repeat count out of range"},
      // nested repeats multiply: this one used to build a 10^20-character string.
      {{{"layout", {{"pipeline_layout", "((((t*100000)*100000)*100000)*100000)"}}}}, "expands to more than"},
  };
  for (const Open& o : open) {
    const auto scenario = tree.write("scenarios/open.json", patched(o.patch));
    const CliResult r = run_cli({"plan", scenario.string()}, tree.root());
    INFO(o.patch.dump() << "\nexit " << r.code << "\nstderr: " << r.err);
    CHECK(r.code == 3);
    CHECK_THAT(r.err, Contains(o.message));
  }
}
