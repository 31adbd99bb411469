// Per-block sharding (layout.sharding fsdp, ZeRO-3 as FSDP2 and XLA run it) and the frameworks'
// own FLOP formulas: closed forms of the bytes each block moves per pass, the memory it keeps,
// the prefetch that hides the gathers, and the TorchTitan and MaxText stacks end to end.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "config_test_support.hpp"
#include "moesim/config/error.hpp"
#include "moesim/model/flops.hpp"
#include "moesim/model/params.hpp"
#include "moesim/plan/memory.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/search/space.hpp"
#include "moesim/search/spec.hpp"
#include "moesim/workload/step_builder.hpp"
#include "run_support.hpp"

using namespace moesim;

namespace {

Scenario torchtitan_gb200() { return test::bundled("scenarios/frameworks/torchtitan-gb200-256.json"); }

// Bytes of the step's collectives on each DP stream, by (stream, group, kind, phase).
struct DpBytes {
  std::map<std::string, double> bytes;
  std::map<std::string, int> count;
};
DpBytes dp_bytes(const workload::StepProgram& prog) {
  DpBytes out;
  for (const auto& t : prog.stages[0].tasks) {
    if (t.kind != workload::TaskKind::collective || t.group == workload::GroupRole::ep) continue;
    const std::string key = std::string(t.stream == workload::Stream::dp_gather ? "gather" : "dp") + " " +
                            (t.group == workload::GroupRole::dp ? "dense" : "expert") + " " +
                            std::string(workload::to_string(t.phase));
    out.bytes[key] += t.bytes;
    out.count[key] += 1;
  }
  return out;
}

}  // namespace

TEST_CASE("FSDP gathers every block in BF16 before its forward and its backward and reduces it in FP32 once",
          "[fsdp][bytes]") {
  const Scenario s = torchtitan_gb200();
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.fsdp);
  REQUIRE(l.dp == 256);
  REQUIRE(l.edp == 4);  // TorchTitan's efsdp = dp_shard / ep = 256 / 64
  const auto prog = workload::build_step(s, l, test::calibration(s));
  const DpBytes b = dp_bytes(prog);
  // One micro-batch: 61 dense gathers and 58 expert gathers per pass, one reduction of each.
  CHECK(b.count.at("gather dense forward") == 61);
  CHECK(b.count.at("gather expert forward") == 58);
  CHECK(b.count.at("gather dense backward") == 61);
  CHECK(b.count.at("gather expert backward") == 58);
  CHECK(b.count.at("dp dense backward") == 61);
  CHECK(b.count.at("dp expert backward") == 58);
  // By hand: a rank's routed experts of one layer are 256 / 64 = 4 experts of 3 x 7,168 x 2,048
  // parameters; 58 MoE layers; BF16 gathers, FP32 reductions.
  const double experts = 58.0 * 4 * 3 * 7168 * 2048;
  CHECK(b.bytes.at("gather expert forward") == Approx(experts * 2).epsilon(1e-12));
  CHECK(b.bytes.at("gather expert backward") == Approx(experts * 2).epsilon(1e-12));
  CHECK(b.bytes.at("dp expert backward") == Approx(experts * 4).epsilon(1e-12));
  // Dense: everything else the rank holds (the model's 671B less the routed experts).
  const plan::ParamShard all = plan::param_shard(s, l, 0);
  CHECK(all.expert_params == Approx(experts).epsilon(1e-12));
  CHECK(b.bytes.at("gather dense forward") == Approx(all.dense_params * 2).epsilon(1e-12));
  CHECK(b.bytes.at("dp dense backward") == Approx(all.dense_params * 4).epsilon(1e-12));
  // No distributed-optimizer gathers or reductions besides them.
  CHECK(b.count.size() == 6);
}

TEST_CASE("FSDP without resharding gathers nothing in the backward", "[fsdp][bytes]") {
  Scenario s = torchtitan_gb200();
  s.layout.reshard_after_forward = false;
  const plan::Layout l = plan::make_layout(s);
  const DpBytes b = dp_bytes(workload::build_step(s, l, test::calibration(s)));
  CHECK(b.count.count("gather dense backward") == 0);
  CHECK(b.count.count("gather expert backward") == 0);
  CHECK(b.count.at("gather dense forward") == 61);
  CHECK(b.count.at("dp expert backward") == 58);
}

TEST_CASE("FSDP's blocks add up to the chunk, the first holding the embedding", "[fsdp][memory]") {
  const Scenario s = torchtitan_gb200();
  const plan::Layout l = plan::make_layout(s);
  const auto blocks = plan::sharded_blocks(s, l, 0, 0);
  REQUIRE(blocks.size() == 61);
  plan::ParamShard sum;
  for (const auto& b : blocks) {
    sum.dense_params += b.dense_params;
    sum.expert_params += b.expert_params;
  }
  const plan::ParamShard chunk = plan::chunk_params(s, l, 0, 0);
  CHECK(sum.dense_params == Approx(chunk.dense_params).epsilon(1e-12));
  CHECK(sum.expert_params == Approx(chunk.expert_params).epsilon(1e-12));
  // Block 0: the embedding (129,280 x 7,168) and a dense layer; a middle block: a MoE layer.
  const double embedding = 129280.0 * 7168;
  const model::LayerParams dense = model::layer_params(s.model, false);
  CHECK(blocks[0].dense_params == Approx(embedding + dense.attention + dense.dense_ffn + dense.norms).epsilon(1e-12));
  CHECK(blocks[10].expert_params == Approx(4.0 * 3 * 7168 * 2048).epsilon(1e-12));
}

TEST_CASE("FSDP keeps two gathered blocks, sharded gradients and one block's full gradients", "[fsdp][memory]") {
  Scenario s = torchtitan_gb200();
  s.training.precision = Precision::bf16;
  const plan::Layout l = plan::make_layout(s);
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 0);
  const auto blocks = plan::sharded_blocks(s, l, 0, 0);
  double largest = 0;
  for (const auto& b : blocks) largest = std::max(largest, b.dense_params + b.expert_params);
  CHECK(m.weights_bytes == Approx(2 * largest * 2).epsilon(1e-12));
  const double sharded = m.params.dense_params / 256 + m.params.expert_params / 4;
  CHECK(m.gradients_bytes == Approx((sharded + largest) * 4).epsilon(1e-12));
  CHECK(m.optimizer_bytes == Approx(sharded * 12).epsilon(1e-9));  // FP32 master and two FP32 moments

  s.layout.reshard_after_forward = false;  // every block held from its forward to its backward
  const plan::MemoryBreakdown kept = plan::rank_memory(s, plan::make_layout(s), 0);
  CHECK(kept.weights_bytes == Approx((m.params.dense_params + m.params.expert_params) * 2).epsilon(1e-12));
}

TEST_CASE("FSDP's gathers, one block ahead, hide behind the compute", "[fsdp][overlap]") {
  const Scenario s = torchtitan_gb200();
  const plan::Layout l = plan::make_layout(s);
  const auto prog = workload::build_step(s, l, test::calibration(s));
  const platform::Topology topo = platform::make_topology(s.system, s.gpus, s.layout.gpus_per_domain, s.training.precision);
  double gather_s = 0;
  for (const auto& t : prog.stages[0].tasks)
    if (t.stream == workload::Stream::dp_gather)
      gather_s += platform::closed_form_seconds(topo, t.collective,
                                                platform::Group{t.group == workload::GroupRole::dp ? l.dp_group(0) : l.edp_group(0)},
                                                t.bytes);
  REQUIRE(gather_s > 1.0);  // seconds of gathers per step: something to hide
  const auto r = test::run(s);
  const auto& breakdown = r.sim.stages[0].breakdown;
  // Only the first block's gather and the last block's reduction wait in the open.
  CHECK(breakdown.exposed_dp_s < 0.05 * gather_s);
}

TEST_CASE("A checkpointed MoE layer repeats its dispatch and combine in the backward", "[fsdp][recompute]") {
  Scenario s = torchtitan_gb200();
  const auto exchanges = [](const Scenario& sc) {
    int n = 0;
    const plan::Layout l = plan::make_layout(sc);
    const workload::StepProgram prog = workload::build_step(sc, l, test::calibration(sc));
    for (const auto& t : prog.stages[0].tasks)
      n += t.kind == workload::TaskKind::collective && t.group == workload::GroupRole::ep ? 1 : 0;
    return n;
  };
  REQUIRE(s.recipe.recomputes("full"));
  CHECK(exchanges(s) == 58 * 6);  // forward 2, backward 2, recomputed forward 2
  s.recipe.recompute = {"mla_up_proj"};
  CHECK(exchanges(s) == 58 * 4);
}

TEST_CASE("The frameworks' FLOP formulas give their published per-token counts", "[fsdp][model]") {
  const ModelSpec m = config::load_model("deepseek-v3", test::configs_dir());
  // TorchTitan models/utils.py and MaxText maxtext_utils.py by hand (docs/frameworks.md).
  CHECK(model::framework_flops_per_token(m, 4096, 0, "torchtitan") == Approx(281158232064.0).epsilon(1e-12));
  CHECK(model::framework_flops_per_token(m, 4096, 0, "maxtext") == Approx(250449887232.0).epsilon(1e-12));
  CHECK(model::framework_flops_per_token(m, 4096, 1, "megatron") == Approx(259992950784.0).epsilon(1e-12));
  CHECK(model::framework_flops_per_token(m, 4096, 1, "maxtext") == Approx(254465015808.0).epsilon(1e-12));
  // A run reports both: the framework's TFLOP/s is its formula over Megatron's.
  const auto r = test::run(torchtitan_gb200());
  CHECK(r.metrics.framework_tflops_per_gpu / r.metrics.tflops_per_gpu ==
        Approx(281158232064.0 / 249812054016.0).epsilon(1e-9));
}

TEST_CASE("Sharding a stack does not offer, or FSDP under a split backward, is refused", "[fsdp][config]") {
  test::TempTree tree("fsdp-refusals");
  const auto megatron = tree.write("s1.json", R"({"name": "x", "system": "gb200-nvl72", "gpus": 256, "model": "deepseek-v3",
    "stack": "megatron-bridge-26.04", "training": {"global_batch": 2048, "micro_batch": 8, "precision": "mxfp8"},
    "layout": {"ep": 64, "gpus_per_domain": 64, "sharding": "fsdp"}})");
  const auto e = test::thrown<ConfigError>([&] { config::load_scenario(megatron, {tree.configs()}); }, "fsdp on Megatron");
  CHECK(std::string(e.what()).find("layout.sharding") != std::string::npos);
  CHECK(std::string(e.what()).find("shards by optimizer, not fsdp") != std::string::npos);

  Scenario zb = torchtitan_gb200();
  zb.layout.schedule = "zb-h1";
  CHECK_THROWS_WITH(plan::make_layout(zb), Catch::Contains("layout.sharding fsdp is modelled with the 1f1b schedule"));
}

TEST_CASE("A search varies the sharding where the stack offers both, and refuses one it does not", "[fsdp][search]") {
  const auto dir = test::repo() / "scenarios" / "search";
  const Scenario record = test::record_gb300();  // Megatron-Bridge 26.06: optimizer or Megatron-FSDP
  const auto spec = search::load_search_json(
      nlohmann::json::parse(R"({"name": "x", "base": "../gb300-256-record.json",
        "space": {"layout": {"tp": [1], "pp": [2], "vpp": [8], "ep": [32], "sharding": ["optimizer", "fsdp"]},
                  "training": {"micro_batch": [1]}, "recipe": {"recompute": [[]]}}})"),
      dir / "x.json");
  const search::Space space = search::resolve_space(spec, record);
  const auto candidates = search::enumerate(space);
  REQUIRE(candidates.size() == 2 * space.ep_overlap.size() * space.delay_wgrad.size());
  int fsdp = 0;
  for (const auto& c : candidates) {
    Scenario s = record;
    search::apply(c, s);
    CHECK(plan::make_layout(s).fsdp == (c.sharding == "fsdp"));
    fsdp += c.sharding == "fsdp" ? 1 : 0;
  }
  CHECK(fsdp * 2 == static_cast<int>(candidates.size()));
  CHECK(search::describe(candidates.back()).find("fsdp") != std::string::npos);

  const Scenario titan = torchtitan_gb200();  // TorchTitan: FSDP only
  const auto refused = search::load_search_json(
      nlohmann::json::parse(R"({"name": "x", "base": "../gb300-256-record.json",
        "space": {"layout": {"sharding": ["optimizer"]}}})"),
      dir / "x.json");
  const auto e = test::thrown<ConfigError>([&] { search::resolve_space(refused, titan); }, "optimizer on TorchTitan");
  CHECK(std::string(e.what()).find("$.space.layout.sharding[0]") != std::string::npos);
}

TEST_CASE("HSDP gathers in the shard group and all-reduces each shard's gradients over the replicas",
          "[fsdp][bytes]") {
  Scenario s = torchtitan_gb200();
  s.layout.dp_shard = 64;  // 4 replicas of 64-way shards; experts: edp 4 / 4 replicas = unsharded
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.dp_replicate == 4);
  CHECK(l.dense_shards() == 64);
  CHECK(l.expert_shards() == 1);
  CHECK(l.dp_shard_group(0).size() == 64);
  CHECK(l.dp_replicate_group(0) == std::vector<int>{0, 64, 128, 192});
  CHECK(l.edp_replicate_group(0) == l.edp_group(0));
  const auto prog = workload::build_step(s, l, test::calibration(s));
  const plan::ParamShard all = plan::param_shard(s, l, 0);
  std::map<workload::GroupRole, double> gathered, reduced, averaged;
  for (const auto& t : prog.stages[0].tasks) {
    if (t.kind != workload::TaskKind::collective || t.group == workload::GroupRole::ep) continue;
    if (t.collective == platform::CollectiveKind::all_gather && t.phase == workload::Phase::forward) gathered[t.group] += t.bytes;
    if (t.collective == platform::CollectiveKind::reduce_scatter) reduced[t.group] += t.bytes;
    if (t.collective == platform::CollectiveKind::all_reduce) averaged[t.group] += t.bytes;
  }
  CHECK(gathered.size() == 1);  // dense only: the experts are whole on every rank
  CHECK(gathered[workload::GroupRole::dp_shard] == Approx(all.dense_params * 2).epsilon(1e-12));
  CHECK(reduced[workload::GroupRole::dp_shard] == Approx(all.dense_params * 4).epsilon(1e-12));
  CHECK(averaged[workload::GroupRole::dp_replicate] == Approx(all.dense_params / 64 * 4).epsilon(1e-12));
  CHECK(averaged[workload::GroupRole::edp_replicate] == Approx(all.expert_params * 4).epsilon(1e-12));
  // Optimizer states sharded 64-way (dense) and not at all (experts).
  const plan::MemoryBreakdown m = plan::rank_memory(s, l, 0);
  CHECK(m.optimizer_bytes == Approx((all.dense_params / 64 + all.expert_params) * 12).epsilon(1e-9));

  s.layout.dp_shard = 48;  // does not divide 256
  CHECK_THROWS_WITH(plan::make_layout(s), Catch::Contains("layout.dp_shard 48 must divide"));
}
