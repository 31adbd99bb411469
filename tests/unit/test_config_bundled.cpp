// The bundled configuration files: every one loads, and their figures arrive in SI units.
#include <algorithm>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "config_test_support.hpp"
#include "moesim/config/loader.hpp"

using namespace moesim;
using moesim::test::bundled_configs;
using moesim::test::source_dir;

TEST_CASE("every bundled config file loads", "[config]") {
  const auto dir = bundled_configs();
  for (const auto& name : config::list_configs(dir, "hardware")) {
    INFO("hardware " << name);
    CHECK_NOTHROW(config::load_gpu(name, dir));
  }
  for (const auto& name : config::list_configs(dir, "systems")) {
    INFO("system " << name);
    CHECK_NOTHROW(config::load_system(name, dir));
  }
  for (const auto& name : config::list_configs(dir, "models")) {
    INFO("model " << name);
    CHECK_NOTHROW(config::load_model(name, dir));
  }
  for (const auto& name : config::list_configs(dir, "stacks")) {
    INFO("stack " << name);
    CHECK_NOTHROW(config::load_stack(name, dir));
  }
  for (const auto& name : config::list_configs(dir, "dispatchers")) {
    INFO("dispatcher " << name);
    CHECK_NOTHROW(config::load_dispatcher(name, dir));
  }
  int scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    INFO("scenario " << entry.path());
    CHECK_NOTHROW(config::load_scenario(entry.path()));
    ++scenarios;
  }
  CHECK(scenarios >= 2);
}

TEST_CASE("list_configs names the bundled files, sorted", "[config]") {
  const auto dir = bundled_configs();
  CHECK(config::list_configs(dir, "hardware") ==
        std::vector<std::string>{"b200", "b300", "gb200", "gb300", "h100", "h200", "h800"});
  CHECK(config::list_configs(dir, "systems") ==
        std::vector<std::string>{"gb200-nvl72", "gb300-nvl72", "hgx-b200", "hgx-b300", "hgx-h100", "hgx-h200",
                                 "hgx-h800"});
  CHECK(config::list_configs(dir, "models") ==
        std::vector<std::string>{"deepseek-v2", "deepseek-v3", "llama-3.1-405b", "mixtral-8x22b", "mixtral-8x7b",
                                 "qwen3-235b-a22b", "qwen3-30b-a3b"});
  const auto stacks = config::list_configs(dir, "stacks");
  CHECK(std::find(stacks.begin(), stacks.end(), "megatron-core-baseline") != stacks.end());
  CHECK(config::list_configs(dir, "dispatchers") == std::vector<std::string>{"deepep", "deepep-v2", "hybridep"});
  CHECK(config::list_configs(dir / "nowhere", "models").empty());
  CHECK_THROWS_AS(config::list_configs(dir, "scenarios"), std::invalid_argument);
}

TEST_CASE("GPU figures arrive in SI units", "[config]") {
  const auto gb300 = config::load_gpu("gb300", bundled_configs());
  CHECK(gb300.name == "GB300");
  CHECK(gb300.bf16_flop_per_s == Approx(2450e12));
  CHECK(gb300.fp8_flop_per_s == Approx(4900e12));
  CHECK(gb300.fp4_flop_per_s == Approx(14700e12));
  CHECK(gb300.peak_flop_per_s(Precision::mxfp8) == Approx(4900e12));
  CHECK(gb300.hbm_bytes == Approx(288e9));
  CHECK(gb300.hbm_usable_bytes == Approx(279e9));
  CHECK(gb300.hbm_bytes_per_s == Approx(8e12));
  CHECK(gb300.sm_count == 152);
  CHECK(gb300.tdp_w == Approx(1400));
  CHECK(gb300.sources.at("hbm_usable_gbytes").find("DGXC") != std::string::npos);

  const auto h100 = config::load_gpu("h100", bundled_configs());
  CHECK(h100.bf16_flop_per_s == Approx(989e12));
  CHECK(h100.fp4_flop_per_s == 0);
  CHECK(h100.hbm_bytes_per_s == Approx(3.35e12));
  CHECK(h100.sm_count == 132);
  CHECK(config::load_gpu("b200", bundled_configs()).sm_count == 148);
}

TEST_CASE("system figures arrive in SI units", "[config]") {
  const auto gb300 = config::load_system("gb300-nvl72", bundled_configs());
  CHECK(gb300.name == "GB300 NVL72");
  CHECK(gb300.gpu_name == "gb300");
  CHECK(gb300.gpu.name == "GB300");
  CHECK(gb300.domain_gpus == 72);
  CHECK(gb300.nvlink_bytes_per_s == Approx(900e9));
  CHECK(gb300.nvlink_latency_s == Approx(0.5e-6));
  CHECK(gb300.nic_bytes_per_s == Approx(100e9));  // 800 Gb/s
  CHECK(gb300.nic_latency_s == Approx(1e-6));
  CHECK(gb300.fabric.topology == "rail_optimized_fat_tree");
  CHECK(gb300.fabric.oversubscription == 1.0);
  CHECK(gb300.fabric.switch_latency_s == Approx(0.25e-6));
  CHECK(gb300.max_gpus >= 1024);
  CHECK(gb300.sources.count("fabric.switch_latency_us") == 1);

  const auto gb200 = config::load_system("gb200-nvl72", bundled_configs());
  CHECK(gb200.nic_bytes_per_s == Approx(50e9));  // 400 Gb/s
  const auto h800 = config::load_system("hgx-h800", bundled_configs());
  CHECK(h800.domain_gpus == 8);
  CHECK(h800.nvlink_bytes_per_s == Approx(200e9));
  CHECK(config::load_system("hgx-h100", bundled_configs()).nvlink_bytes_per_s == Approx(450e9));
  for (const auto& name : config::list_configs(bundled_configs(), "systems"))
    CHECK(config::load_system(name, bundled_configs()).max_gpus >= 1024);
}

TEST_CASE("models match their public configurations", "[config]") {
  const auto v3 = config::load_model("deepseek-v3", bundled_configs());
  CHECK(v3.layers == 61);
  CHECK(v3.hidden == 7168);
  CHECK(v3.dense_ffn == 18432);
  CHECK(v3.vocab == 129280);
  CHECK_FALSE(v3.tied_embeddings);
  CHECK(v3.attention.kind == "mla");
  CHECK(v3.attention.heads == 128);
  CHECK(v3.attention.q_lora_rank == 1536);
  CHECK(v3.attention.kv_lora_rank == 512);
  CHECK(v3.attention.qk_nope_head_dim == 128);
  CHECK(v3.attention.qk_rope_head_dim == 64);
  CHECK(v3.attention.v_head_dim == 128);
  CHECK(v3.moe.experts == 256);
  CHECK(v3.moe.top_k == 8);
  CHECK(v3.moe.expert_ffn == 2048);
  CHECK(v3.moe.shared_experts == 1);
  CHECK(v3.moe.shared_ffn == 2048);
  CHECK(v3.moe.first_dense_layers == 3);
  CHECK(v3.moe.moe_layer_freq == 1);
  CHECK(v3.published_total_params == Approx(671e9));
  CHECK(v3.published_active_params == Approx(37e9));

  const auto v2 = config::load_model("deepseek-v2", bundled_configs());
  CHECK(v2.moe.experts == 160);
  CHECK(v2.moe.top_k == 6);
  CHECK(v2.moe.shared_ffn == 3072);
  CHECK(v2.moe.first_dense_layers == 1);

  const auto qwen = config::load_model("qwen3-235b-a22b", bundled_configs());
  CHECK(qwen.attention.kind == "gqa");
  CHECK(qwen.attention.kv_heads == 4);
  CHECK(qwen.moe.experts == 128);
  CHECK(qwen.moe.shared_experts == 0);

  const auto mixtral = config::load_model("mixtral-8x22b", bundled_configs());
  CHECK(mixtral.moe.expert_ffn == 16384);
  CHECK(mixtral.vocab == 32768);

  const auto llama = config::load_model("llama-3.1-405b", bundled_configs());
  CHECK(llama.moe.experts == 0);
  CHECK(llama.dense_ffn == 53248);
  CHECK(llama.layers == 126);
}

TEST_CASE("the baseline stack carries the measured launch overheads", "[config]") {
  const auto stack = config::load_stack("megatron-core-baseline", bundled_configs());
  CHECK(stack.recipe.dispatcher == "alltoall");
  CHECK(stack.recipe.cuda_graphs == "none");
  CHECK(stack.recipe.recompute.empty());
  CHECK(stack.host_overhead_per_kernel_s == Approx(9.35e-6));
  CHECK(stack.graph_launch_per_kernel_s == Approx(0.96e-6));
  CHECK(stack.recipe.adam_moment_dtype == "fp32");
  CHECK(stack.sources.at("host_overhead_per_kernel_us").find("measured: H200-K") != std::string::npos);
}

TEST_CASE("the record scenario reads as published", "[config]") {
  const auto s = config::load_scenario(source_dir() / "scenarios" / "gb300-256-record.json");
  CHECK(s.gpus == 256);
  CHECK(s.system.name == "GB300 NVL72");
  CHECK(s.model.layers == 61);
  CHECK(s.training.global_batch == 4096);
  CHECK(s.training.precision == Precision::mxfp8);
  CHECK(s.training.mtp_layers == 1);
  CHECK(s.layout.pp == 2);
  CHECK(s.layout.vpp == 8);
  CHECK(s.layout.ep == 32);
  CHECK(s.layout.gpus_per_domain == 64);
  CHECK(s.layout.dp == 0);
  REQUIRE(s.published.has_value());
  CHECK(s.published->id == "gb300-mxfp8-2606");
  CHECK(s.published->tflops_per_gpu == 1648);
  CHECK(s.published->tokens_per_s_per_gpu == 6338);

  const auto gb200 = config::load_scenario(source_dir() / "scenarios" / "gb200-256.json");
  CHECK(gb200.layout.pp == 8);  // MB-A's 25.11 GB200 layout: it fits in HBM with selective recompute
  CHECK(gb200.layout.ep == 32);
  CHECK(gb200.training.mtp_layers == 0);
  CHECK_FALSE(gb200.published.has_value());
}

TEST_CASE("find_configs_dir: --configs, then $MOESIM_CONFIGS, then the nearest configs/, then the source tree",
          "[config]") {
  moesim::test::TempTree tree("find-configs");
  const auto scenario = tree.write("a/b/scenario.json", "{}");
  const char* saved = std::getenv("MOESIM_CONFIGS");
  const std::string saved_value = saved ? saved : "";
  ::unsetenv("MOESIM_CONFIGS");

  CHECK(config::find_configs_dir(scenario) == tree.configs());
  CHECK(config::find_configs_dir(scenario, bundled_configs().string()) == bundled_configs());
  ::setenv("MOESIM_CONFIGS", bundled_configs().c_str(), 1);
  CHECK(config::find_configs_dir(scenario) == bundled_configs());
  CHECK(config::find_configs_dir(scenario, tree.configs().string()) == tree.configs());
  ::unsetenv("MOESIM_CONFIGS");
  CHECK(config::find_configs_dir("/") == bundled_configs());
  CHECK_THROWS_AS(config::find_configs_dir(scenario, (tree.root() / "missing").string()), ConfigError);

  if (saved) ::setenv("MOESIM_CONFIGS", saved_value.c_str(), 1);
}

TEST_CASE("Every release ships the same measured dispatchers, read from configs/dispatchers/", "[config]") {
  // A dispatcher's rates come from its own microbenchmarks, not from the release that ships it:
  // one file per dispatcher, each stack a reference to it.
  const auto dir = bundled_configs();
  const EpDispatcherSpec deepep = config::load_dispatcher("deepep", dir);
  const EpDispatcherSpec hybridep = config::load_dispatcher("hybridep", dir);
  CHECK(deepep.dispatch.nvlink_efficiency == 0.669);  // DEP-L: 153 x 7/8 / 200 GB/s
  CHECK(hybridep.combine.sm_copy_seconds_per_peer == Approx(11.51e-9));
  CHECK(deepep.sources.count("dispatch.nvlink_efficiency") == 1);
  for (const auto& name : config::list_configs(dir, "stacks")) {
    INFO("stack " << name);
    const StackSpec stack = config::load_stack(name, dir);
    CHECK(stack.deepep_name == "deepep");
    CHECK(stack.deepep == deepep);
    CHECK(stack.hybridep_name == "hybridep");
    CHECK(stack.hybridep == hybridep);
  }
  // A scenario can swap in another version (the DeepEP V2 what-if).
  const Scenario v2 = config::load_scenario(source_dir() / "scenarios" / "hgx-h100-1024-ep64-deepep-v2.json");
  CHECK(v2.stack.deepep_name == "deepep-v2");
  CHECK(v2.stack.deepep == config::load_dispatcher("deepep-v2", dir));
  CHECK(v2.stack.deepep.dispatch.sm_bytes_per_s == Approx(23.14e9));
}
