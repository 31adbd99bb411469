// References with inline overrides: {"base": <name>, <key>: <value>, ...}.
#include <catch2/catch.hpp>

#include "config_test_support.hpp"
#include "moesim/config/loader.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

json record_scenario_json() {
  return config::read_json_file(moesim::test::source_dir() / "scenarios" / "gb300-256-record.json");
}

Scenario load(const json& scenario) {
  return config::load_scenario_json(scenario, "patched.json", {moesim::test::bundled_configs()});
}

}  // namespace

TEST_CASE("a system override changes one figure and keeps the rest", "[config]") {
  json s = record_scenario_json();
  s["system"] = {{"base", "gb300-nvl72"}, {"nic_gbits_per_s", 1600}, {"fabric", {{"oversubscription", 2.0}}}};
  const auto scenario = load(s);
  CHECK(scenario.system.nic_bytes_per_s == Approx(200e9));
  CHECK(scenario.system.fabric.oversubscription == 2.0);
  CHECK(scenario.system.fabric.gpus_per_leaf == 72);        // kept from the base
  CHECK(scenario.system.fabric.switch_latency_s == Approx(0.25e-6));
  CHECK(scenario.system.nvlink_bytes_per_s == Approx(900e9));
  CHECK(scenario.system.gpu.name == "GB300");
  // Provenance says where an overridden figure comes from; the others keep their source.
  CHECK_THAT(scenario.system.sources.at("nic_gbits_per_s"), Contains("override: patched.json at $.system.nic_gbits_per_s"));
  CHECK_THAT(scenario.system.sources.at("fabric.oversubscription"), Contains("override"));
  CHECK_THAT(scenario.system.sources.at("nvlink_gbytes_per_s_per_direction"), Contains("NV-GB300:"));
}

TEST_CASE("a GPU override inside a system override patches the system's own GPU", "[config]") {
  json s = record_scenario_json();
  s["system"] = {{"base", "gb300-nvl72"}, {"gpu", {{"hbm_usable_gbytes", 250}}}};
  const auto patched = load(s);
  CHECK(patched.system.gpu_name == "gb300");
  CHECK(patched.system.gpu.hbm_usable_bytes == Approx(250e9));
  CHECK(patched.system.gpu.hbm_bytes == Approx(288e9));
  CHECK_THAT(patched.system.gpu.sources.at("hbm_usable_gbytes"), Contains("$.system.gpu.hbm_usable_gbytes"));

  s["system"] = {{"base", "gb300-nvl72"}, {"gpu", "gb200"}};
  const auto swapped = load(s);
  CHECK(swapped.system.gpu_name == "gb200");
  CHECK(swapped.system.gpu.name == "GB200");
  CHECK(swapped.system.nic_bytes_per_s == Approx(100e9));  // still the GB300 NVL72 network
  CHECK_THAT(swapped.system.sources.at("gpu"), Contains("override"));

  s["system"] = {{"base", "gb300-nvl72"}, {"gpu", {{"base", "b300"}, {"tdp_watts", 1000}}}};
  const auto based = load(s);
  CHECK(based.system.gpu.name == "B300");
  CHECK(based.system.gpu.tdp_w == Approx(1000));
}

TEST_CASE("model, stack and recipe overrides", "[config]") {
  json s = record_scenario_json();
  s["model"] = {{"base", "deepseek-v3"}, {"layers", 30}, {"moe", {{"experts", 64}}}};
  s["stack"] = {{"base", "megatron-core-baseline"}, {"host_overhead_per_kernel_us", 12}};
  s["recipe"] = {{"dispatcher", "deepep"}, {"dispatcher_sms", 24}, {"recompute", {"mla_up_proj", "moe_act"}}};
  const auto scenario = load(s);
  CHECK(scenario.model.layers == 30);
  CHECK(scenario.model.moe.experts == 64);
  CHECK(scenario.model.moe.top_k == 8);
  CHECK(scenario.model.attention.kv_lora_rank == 512);
  CHECK(scenario.recipe.dispatcher == "deepep");
  CHECK(scenario.recipe.dispatcher_sms == 24);
  CHECK(scenario.recipe.recompute == std::vector<std::string>{"mla_up_proj", "moe_act"});
  CHECK(scenario.stack.host_overhead_per_kernel_s == Approx(12e-6));
  // Recipe keys the scenario leaves out keep the stack's default recipe.
  CHECK(scenario.recipe.cuda_graphs == scenario.stack.recipe.cuda_graphs);
  CHECK(scenario.recipe.adam_moment_dtype == "fp32");
  CHECK(scenario.stack.recipe.dispatcher == "alltoall");

  // Overrides are validated like the file itself, including the rules between keys.
  s["model"] = {{"base", "deepseek-v3"}, {"moe", {{"top_k", 300}}}};
  try {
    load(s);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "patched.json");
    CHECK(e.json_path() == "$.model.moe.top_k");
  }
}

TEST_CASE("a patched scenario object loads like a file (sweeps)", "[config]") {
  json s = record_scenario_json();
  s["gpus"] = 1024;
  s["layout"]["ep"] = 64;
  s["training"]["global_batch"] = 16384;
  s.erase("published");
  const auto scenario = load(s);
  CHECK(scenario.file == "patched.json");
  CHECK(scenario.gpus == 1024);
  CHECK(scenario.layout.ep == 64);
  CHECK(scenario.training.global_batch == 16384);
  CHECK_FALSE(scenario.published.has_value());
}
