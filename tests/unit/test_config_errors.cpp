// Each class of bad input is a ConfigError naming the file, the JSON path and what was expected.
#include <catch2/catch.hpp>

#include "config_test_support.hpp"
#include "moesim/config/loader.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::config_error;
using moesim::test::TempTree;
using nlohmann::json;

namespace {

json bundled(const std::string& relative) {
  return config::read_json_file(moesim::test::bundled_configs() / relative);
}

// A scenario file in tree/scenarios/ (so that tree/configs is found) from a patched record.
std::filesystem::path write_scenario(const TempTree& tree, const std::string& name, const json& patch) {
  json s = config::read_json_file(moesim::test::source_dir() / "scenarios" / "gb300-256-record.json");
  s.merge_patch(patch);
  return tree.write("scenarios/" + name + ".json", s.dump(2));
}

}  // namespace

TEST_CASE("malformed JSON names the file, line and column", "[config]") {
  TempTree tree("malformed");
  const auto file = tree.write("configs/hardware/broken.json", "{\n  \"name\": \"X\",\n  \"hbm_gbytes\": ,\n}\n");
  const auto e = config_error([&] { config::load_gpu("broken", tree.configs()); });
  CHECK(e.file() == file.string());
  CHECK_THAT(e.what(), Contains("broken.json"));
  CHECK_THAT(e.expected(), Contains("line 3, column 17"));
  CHECK_THAT(e.expected(), Contains("well-formed JSON"));

  const auto empty = tree.write("empty.json", "");
  CHECK_THAT(config_error([&] { config::read_json_file(empty); }).expected(), Contains("line 1"));
  CHECK_THAT(config_error([&] { config::read_json_file(tree.root() / "absent.json"); }).expected(),
             Contains("existing, readable"));
}

TEST_CASE("a key given twice is an error with its path", "[config]") {
  const auto e = config_error([] {
    config::parse_json_text(R"({"layout": {"tp": 1, "pp": 2, "tp": 4}})", "twice.json");
  });
  CHECK(e.file() == "twice.json");
  CHECK(e.json_path() == "$.layout.tp");
  CHECK_THAT(e.expected(), Contains("duplicate key"));
  const auto in_array = config_error([] { config::parse_json_text(R"({"a": [{}, {"x": 1, "x": 2}]})", "t"); });
  CHECK(in_array.json_path() == "$.a[1].x");
}

TEST_CASE("an unknown key lists the allowed keys", "[config]") {
  TempTree tree("unknown-key");
  json gpu = bundled("hardware/gb300.json");
  gpu["hbm_gbyte"] = 288;
  const auto file = tree.write("configs/hardware/typo.json", gpu.dump(2));
  const auto e = config_error([&] { config::load_gpu("typo", tree.configs()); });
  CHECK(e.file() == file.string());
  CHECK(e.json_path() == "$.hbm_gbyte");
  CHECK_THAT(e.expected(), Contains("unknown key"));
  CHECK_THAT(e.expected(), Contains("allowed keys here: name, bf16_dense_tflops"));
  CHECK_THAT(e.expected(), Contains("hbm_gbytes"));

  json system = bundled("systems/gb300-nvl72.json");
  system["fabric"]["radix"] = 64;
  tree.write("configs/systems/nested.json", system.dump(2));
  const auto nested = config_error([&] { config::load_system("nested", tree.configs()); });
  CHECK(nested.json_path() == "$.fabric.radix");
  CHECK_THAT(nested.expected(), Contains("gpus_per_leaf"));
}

TEST_CASE("a value of the wrong type says what was expected", "[config]") {
  TempTree tree("wrong-type");
  json gpu = bundled("hardware/gb300.json");
  gpu["bf16_dense_tflops"] = "2450";
  tree.write("configs/hardware/text.json", gpu.dump(2));
  const auto e = config_error([&] { config::load_gpu("text", tree.configs()); });
  CHECK(e.json_path() == "$.bf16_dense_tflops");
  CHECK_THAT(e.expected(), Contains("a number in TFLOP/s"));
  CHECK_THAT(e.expected(), Contains("wrong type"));
  CHECK_THAT(e.expected(), Contains("\"2450\""));

  gpu = bundled("hardware/gb300.json");
  gpu["sm_count"] = 160.5;
  tree.write("configs/hardware/fraction.json", gpu.dump(2));
  const auto fraction = config_error([&] { config::load_gpu("fraction", tree.configs()); });
  CHECK(fraction.json_path() == "$.sm_count");
  CHECK_THAT(fraction.expected(), Contains("an integer"));

  const auto scenario = write_scenario(tree, "bool", {{"layout", {{"sequence_parallel", "yes"}}}});
  const auto boolean = config_error([&] { config::load_scenario(scenario); });
  CHECK(boolean.file() == scenario.string());
  CHECK(boolean.json_path() == "$.layout.sequence_parallel");
  CHECK_THAT(boolean.expected(), Contains("true or false"));
}

TEST_CASE("a value out of range says the range", "[config]") {
  TempTree tree("out-of-range");
  json gpu = bundled("hardware/gb300.json");
  gpu["hbm_gbytes"] = -1;
  tree.write("configs/hardware/negative.json", gpu.dump(2));
  const auto e = config_error([&] { config::load_gpu("negative", tree.configs()); });
  CHECK(e.json_path() == "$.hbm_gbytes");
  CHECK_THAT(e.expected(), Contains(">= 1 and <= 100000"));
  CHECK_THAT(e.expected(), Contains("out of range"));

  const auto scenario = write_scenario(tree, "pp0", {{"layout", {{"pp", 0}}}});
  const auto pp = config_error([&] { config::load_scenario(scenario); });
  CHECK(pp.json_path() == "$.layout.pp");
  CHECK_THAT(pp.expected(), Contains(">= 1"));

  json stack = bundled("stacks/megatron-core-baseline.json");
  stack["recipe"]["dispatcher"] = "nccl";
  tree.write("configs/stacks/enum.json", stack.dump(2));
  const auto choice = config_error([&] { config::load_stack("enum", tree.configs()); });
  CHECK(choice.json_path() == "$.recipe.dispatcher");
  CHECK_THAT(choice.expected(), Contains("one of alltoall, deepep, hybridep"));

  stack = bundled("stacks/megatron-core-baseline.json");
  stack["recipe"]["recompute"] = {"mlp", "mlp"};
  tree.write("configs/stacks/twice.json", stack.dump(2));
  const auto twice = config_error([&] { config::load_stack("twice", tree.configs()); });
  CHECK(twice.json_path() == "$.recipe.recompute[1]");
  CHECK_THAT(twice.expected(), Contains("duplicate"));

  json gpu_rule = bundled("hardware/gb300.json");
  gpu_rule["hbm_usable_gbytes"] = 300;
  tree.write("configs/hardware/usable.json", gpu_rule.dump(2));
  const auto rule = config_error([&] { config::load_gpu("usable", tree.configs()); });
  CHECK(rule.json_path() == "$.hbm_usable_gbytes");
  CHECK_THAT(rule.expected(), Contains("at most hbm_gbytes"));
}

TEST_CASE("a missing required key is named", "[config]") {
  TempTree tree("missing-key");
  json gpu = bundled("hardware/gb300.json");
  gpu.erase("sm_count");
  gpu["sources"].erase("sm_count");
  tree.write("configs/hardware/nosm.json", gpu.dump(2));
  const auto e = config_error([&] { config::load_gpu("nosm", tree.configs()); });
  CHECK(e.json_path() == "$.sm_count");
  CHECK_THAT(e.expected(), Contains("required key missing"));

  json s = config::read_json_file(moesim::test::source_dir() / "scenarios" / "gb300-256-record.json");
  s["training"].erase("global_batch");
  const auto scenario = tree.write("scenarios/nobatch.json", s.dump(2));
  const auto batch = config_error([&] { config::load_scenario(scenario); });
  CHECK(batch.json_path() == "$.training.global_batch");
}

TEST_CASE("a missing referenced file lists the available names", "[config]") {
  TempTree tree("missing-reference");
  const auto scenario = write_scenario(tree, "nosystem", {{"system", "gb400-nvl72"}});
  const auto e = config_error([&] { config::load_scenario(scenario); });
  CHECK(e.file() == scenario.string());
  CHECK(e.json_path() == "$.system");
  CHECK_THAT(e.expected(), Contains("available: gb200-nvl72, gb300-nvl72, hgx-b200"));
  CHECK_THAT(e.expected(), Contains("\"gb400-nvl72\""));

  const auto escape = write_scenario(tree, "escape", {{"model", "../models/deepseek-v3"}});
  CHECK_THAT(config_error([&] { config::load_scenario(escape); }).expected(), Contains("not a plain file name"));

  const auto direct = config_error([&] { config::load_model("gpt-5", tree.configs()); });
  CHECK_THAT(direct.file(), Contains("gpt-5.json"));
  CHECK_THAT(direct.expected(), Contains("deepseek-v3"));
}

TEST_CASE("an override error names the scenario file and the path inside it", "[config]") {
  TempTree tree("override-error");
  const auto scenario =
      write_scenario(tree, "nic", {{"system", {{"base", "gb300-nvl72"}, {"nic_gbits_per_s", -800}}}});
  const auto e = config_error([&] { config::load_scenario(scenario); });
  CHECK(e.file() == scenario.string());
  CHECK(e.json_path() == "$.system.nic_gbits_per_s");
  CHECK_THAT(e.expected(), Contains("out of range"));

  const auto nested = write_scenario(
      tree, "fabric", {{"system", {{"base", "gb300-nvl72"}, {"fabric", {{"oversubscription", 0.5}}}}}});
  CHECK(config_error([&] { config::load_scenario(nested); }).json_path() == "$.system.fabric.oversubscription");

  const auto gpu = write_scenario(tree, "gpu", {{"system", {{"base", "gb300-nvl72"}, {"gpu", {{"sm_count", 0}}}}}});
  const auto g = config_error([&] { config::load_scenario(gpu); });
  CHECK(g.file() == (scenario.parent_path() / "gpu.json").string());
  CHECK(g.json_path() == "$.system.gpu.sm_count");

  const auto unknown = write_scenario(tree, "unknown", {{"model", {{"base", "deepseek-v3"}, {"experts", 8}}}});
  const auto u = config_error([&] { config::load_scenario(unknown); });
  CHECK(u.json_path() == "$.model.experts");
  CHECK_THAT(u.expected(), Contains("unknown key"));

  json no_base = config::read_json_file(moesim::test::source_dir() / "scenarios" / "gb300-256-record.json");
  no_base["stack"] = {{"host_overhead_per_kernel_us", 5}};
  const auto nb = config_error([&] { config::load_scenario_json(no_base, "patched", {tree.configs()}); });
  CHECK(nb.file() == "patched");
  CHECK(nb.json_path() == "$.stack.base");
}

TEST_CASE("an error in a referenced file names that file", "[config]") {
  TempTree tree("base-error");
  json system = bundled("systems/gb300-nvl72.json");
  system["nvlink_domain_gpus"] = 0;
  const auto file = tree.write("configs/systems/gb300-nvl72.json", system.dump(2));
  const auto scenario = write_scenario(tree, "base", {{"system", {{"base", "gb300-nvl72"}, {"max_gpus", 4096}}}});
  const auto e = config_error([&] { config::load_scenario(scenario); });
  CHECK(e.file() == file.string());
  CHECK(e.json_path() == "$.nvlink_domain_gpus");
}

TEST_CASE("every figure needs its source", "[config]") {
  TempTree tree("sources");
  json gpu = bundled("hardware/gb300.json");
  gpu["sources"].erase("tdp_watts");
  const auto file = tree.write("configs/hardware/unsourced.json", gpu.dump(2));
  const auto e = config_error([&] { config::load_gpu("unsourced", tree.configs()); });
  CHECK(e.file() == file.string());
  CHECK(e.json_path() == "$.tdp_watts");
  CHECK_THAT(e.expected(), Contains("every figure needs its source"));

  gpu["sources"] = {{"*", "a datasheet"}};
  tree.write("configs/hardware/whole.json", gpu.dump(2));
  CHECK_NOTHROW(config::load_gpu("whole", tree.configs()));

  json system = bundled("systems/gb300-nvl72.json");
  system["sources"].erase("fabric.switch_latency_us");
  tree.write("configs/systems/nested.json", system.dump(2));
  CHECK(config_error([&] { config::load_system("nested", tree.configs()); }).json_path() ==
        "$.fabric.switch_latency_us");
  system["sources"]["fabric"] = "assumption: the whole fabric";
  tree.write("configs/systems/parent.json", system.dump(2));
  CHECK_NOTHROW(config::load_system("parent", tree.configs()));

  system["sources"]["nic_gbit_per_s"] = "typo";
  tree.write("configs/systems/stale.json", system.dump(2));
  const auto stale = config_error([&] { config::load_system("stale", tree.configs()); });
  CHECK(stale.json_path() == "$.sources.nic_gbit_per_s");
  CHECK_THAT(stale.expected(), Contains("not one"));

  system = bundled("systems/gb300-nvl72.json");
  system["gpu"] = {{"base", "gb300"}, {"hbm_usable_gbytes", 270}};
  tree.write("configs/systems/inline.json", system.dump(2));
  const auto inline_override = config_error([&] { config::load_system("inline", tree.configs()); });
  CHECK(inline_override.json_path() == "$.gpu.hbm_usable_gbytes");
  CHECK_THAT(inline_override.expected(), Contains("every figure needs its source"));
  system["gpu"]["sources"] = {{"hbm_usable_gbytes", "assumption: a larger reserve"}};
  tree.write("configs/systems/inline-sourced.json", system.dump(2));
  const auto sourced = config::load_system("inline-sourced", tree.configs());
  CHECK(sourced.gpu.hbm_usable_bytes == Approx(270e9));
  CHECK(sourced.gpu.sources.at("hbm_usable_gbytes") == "assumption: a larger reserve");
}

TEST_CASE("scenario checks against the system: GPU count and precision", "[config]") {
  TempTree tree("scenario-rules");
  const auto many = write_scenario(tree, "many", {{"gpus", 100000}});
  const auto e = config_error([&] { config::load_scenario(many); });
  CHECK(e.json_path() == "$.gpus");
  CHECK_THAT(e.expected(), Contains("max_gpus"));

  const auto fp4 = write_scenario(tree, "fp4", {{"system", "hgx-h100"}, {"training", {{"precision", "fp4"}}},
                                                {"layout", {{"gpus_per_domain", 8}}}});
  const auto p = config_error([&] { config::load_scenario(fp4); });
  CHECK(p.json_path() == "$.training.precision");
  CHECK_THAT(p.expected(), Contains("H100 SXM has no nvfp4 peak"));

  const auto bad = write_scenario(tree, "int8", {{"training", {{"precision", "int8"}}}});
  CHECK_THAT(config_error([&] { config::load_scenario(bad); }).expected(), Contains("one of bf16, fp8, fp8_blockwise, mxfp8, nvfp4, fp4"));

  const auto domain = write_scenario(tree, "domain", {{"layout", {{"gpus_per_domain", 96}}}});
  CHECK(config_error([&] { config::load_scenario(domain); }).json_path() == "$.layout.gpus_per_domain");

  // One tolerance for every published row (driver/validate.hpp): a scenario cannot widen its own.
  const auto published = write_scenario(tree, "published", {{"published", {{"tolerance", 0.15}}}});
  const auto widened = config_error([&] { config::load_scenario(published); });
  CHECK(widened.json_path() == "$.published.tolerance");
  CHECK_THAT(widened.expected(), Contains("unknown key"));
}

TEST_CASE("Megatron-Core's own refusals are moesim's, with Megatron's words", "[config]") {
  TempTree tree("megatron-rules");
  // The issue's example: EP overlap (the 26.06 stack's default) on a pipeline without virtual stages.
  const auto no_vpp = write_scenario(tree, "no-vpp", {{"layout", {{"vpp", 1}}}});
  const auto e = config_error([&] { config::load_scenario(no_vpp); });
  CHECK(e.json_path() == "$.layout.vpp");
  CHECK_THAT(e.expected(), Contains("If enabling EP A2A overlap, virtual_pipeline_model_parallel_size must be "
                                    "specified when pipeline_model_parallel_size > 1"));
  CHECK_THAT(e.expected(), Contains("transformer_config.py"));
  CHECK_THAT(e.expected(), Contains("pp = 2 and vpp = 1"));
  // The same layout without EP overlap (and so without delayed wgrad) is a valid run.
  const auto without = write_scenario(tree, "no-vpp-no-overlap",
                                      {{"layout", {{"vpp", 1}}}, {"recipe", {{"ep_overlap", false}, {"delay_wgrad", false}}}});
  CHECK_NOTHROW(config::load_scenario(without));
  // Delayed wgrad exists only to hide the overlapped all-to-all.
  const auto wgrad = write_scenario(tree, "wgrad", {{"recipe", {{"ep_overlap", false}}}});
  const auto w = config_error([&] { config::load_scenario(wgrad); });
  CHECK(w.json_path() == "$.recipe.delay_wgrad");
  CHECK_THAT(w.expected(), Contains("overlap_moe_expert_parallel_comm must be enabled when enabling delay_wgrad_compute"));
  // FP8 parameter gather without FP8 training.
  const auto bf16 = write_scenario(tree, "bf16", {{"training", {{"precision", "bf16"}}}});
  const auto f = config_error([&] { config::load_scenario(bf16); });
  CHECK(f.json_path() == "$.recipe.fp8_param_gather");
  CHECK_THAT(f.expected(), Contains("fp8_param must be used together with fp8 mode."));
  // A rule on the model: MLA's up-projection recompute on a GQA model.
  const auto gqa = write_scenario(tree, "gqa", {{"model", "llama-3.1-405b"}, {"recipe", {{"recompute", {"mla_up_proj"}}}}});
  const auto g = config_error([&] { config::load_scenario(gqa); });
  CHECK(g.json_path() == "$.recipe.recompute");
  CHECK_THAT(g.expected(), Contains("mla_up_proj in recompute_modules is only supported with multi_latent_attention."));
}

TEST_CASE("a recipe may turn on only what its stack supports", "[config]") {
  TempTree tree("recipe-support");
  // A release without EP overlap, HybridEP or full-iteration graphs.
  json stack = bundled("stacks/megatron-bridge-26.06.json");
  stack["name"] = "old release";
  stack["supports"]["dispatchers"] = {"alltoall", "deepep"};
  stack["supports"]["cuda_graphs"] = {"none", "partial"};
  stack["supports"]["switches"] = {"fused_permute"};
  stack["recipe"] = {{"dispatcher", "deepep"}, {"cuda_graphs", "partial"}, {"fused_permute", true}};
  tree.write("configs/stacks/old.json", stack.dump(2));
  CHECK(config::load_stack("old", tree.configs()).recipe.dispatcher == "deepep");

  const auto overlap = write_scenario(tree, "overlap", {{"stack", "old"}, {"recipe", {{"ep_overlap", true}}}});
  const auto e = config_error([&] { config::load_scenario(overlap); });
  CHECK(e.file() == overlap.string());
  CHECK(e.json_path() == "$.recipe.ep_overlap");
  CHECK_THAT(e.what(), Contains("stack \"old release\" does not have ep_overlap"));

  const auto hybrid = write_scenario(tree, "hybrid", {{"stack", "old"}, {"recipe", {{"dispatcher", "hybridep"}}}});
  const auto h = config_error([&] { config::load_scenario(hybrid); });
  CHECK(h.json_path() == "$.recipe.dispatcher");
  CHECK_THAT(h.what(), Contains("implements alltoall, deepep, not hybridep"));

  const auto graphs = write_scenario(tree, "graphs", {{"stack", "old"}, {"recipe", {{"cuda_graphs", "full_iteration"}}}});
  CHECK(config_error([&] { config::load_scenario(graphs); }).json_path() == "$.recipe.cuda_graphs");

  // The stack's own default recipe is held to the same rules, in the stack's file.
  stack["recipe"]["router_fusion"] = true;
  const auto bad_stack = tree.write("configs/stacks/bad.json", stack.dump(2));
  const auto b = config_error([&] { config::load_stack("bad", tree.configs()); });
  CHECK(b.file() == bad_stack.string());
  CHECK(b.json_path() == "$.recipe.router_fusion");

  // Turning a supported switch off, or leaving it out, is always allowed.
  const auto off = write_scenario(tree, "off", {{"stack", "old"}, {"recipe", {{"fused_permute", false}}}});
  CHECK_FALSE(config::load_scenario(off).recipe.fused_permute);
}

TEST_CASE("a stack's dispatcher is a file of configs/dispatchers/, checked as any reference", "[config]") {
  TempTree tree("dispatcher-reference");
  json stack = bundled("stacks/megatron-bridge-26.06.json");
  stack["deepep"] = "deepep-v9";
  const auto file = tree.write("configs/stacks/v9.json", stack.dump(2));
  const auto missing = config_error([&] { config::load_stack("v9", tree.configs()); });
  CHECK(missing.file() == file.string());
  CHECK(missing.json_path() == "$.deepep");
  CHECK_THAT(missing.expected(), Contains("available: deepep, deepep-v2, hybridep"));

  json dispatcher = bundled("dispatchers/hybridep.json");
  dispatcher["combine"]["rdma_efficiency"] = 1.5;
  const auto bad = tree.write("configs/dispatchers/fast.json", dispatcher.dump(2));
  stack["hybridep"] = "fast";
  stack["deepep"] = "deepep";
  tree.write("configs/stacks/fast.json", stack.dump(2));
  const auto range = config_error([&] { config::load_stack("fast", tree.configs()); });
  CHECK(range.file() == bad.string());
  CHECK(range.json_path() == "$.combine.rdma_efficiency");

  dispatcher = bundled("dispatchers/hybridep.json");
  dispatcher["sources"].erase("dispatch.sm_copy_ns_per_peer");
  tree.write("configs/dispatchers/unsourced.json", dispatcher.dump(2));
  const auto unsourced = config_error([&] { config::load_dispatcher("unsourced", tree.configs()); });
  CHECK(unsourced.json_path() == "$.dispatch.sm_copy_ns_per_peer");
  CHECK_THAT(unsourced.expected(), Contains("every figure needs its source"));

  // Inside a stack file an override needs its source; a scenario's may patch the stack's dispatcher.
  stack["hybridep"] = {{"base", "hybridep"}, {"combine", {{"rdma_efficiency", 0.5}}}};
  tree.write("configs/stacks/patched.json", stack.dump(2));
  CHECK(config_error([&] { config::load_stack("patched", tree.configs()); }).json_path() ==
        "$.hybridep.combine.rdma_efficiency");
  const auto scenario = write_scenario(
      tree, "slow-nic",
      {{"stack", {{"base", "megatron-bridge-26.06"}, {"hybridep", {{"combine", {{"rdma_efficiency", 0.5}}}}}}}});
  const Scenario s = config::load_scenario(scenario);
  CHECK(s.stack.hybridep_name == "hybridep");
  CHECK(s.stack.hybridep.combine.rdma_efficiency == 0.5);
  CHECK(s.stack.hybridep.dispatch.rdma_efficiency == 0.859);
}
