// Layout rules (each with a failing and a passing case), rank mapping and pipeline layouts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "moesim/config/error.hpp"
#include "moesim/plan/layout.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;
using Catch::Matchers::Contains;

namespace {

// The record layout passes; `change` breaks one rule and `message` names it.
void require_rule(const std::function<void(Scenario&)>& change, const std::string& message) {
  Scenario ok = test::record_gb300();
  REQUIRE_NOTHROW(plan::make_layout(ok));
  Scenario bad = ok;
  change(bad);
  REQUIRE_THROWS_WITH(plan::make_layout(bad), Contains(message));
}

}  // namespace

TEST_CASE("World size must be divisible by tp*cp*pp", "[plan]") {
  require_rule([](Scenario& s) { s.gpus = 255; }, "world size 255 is not divisible by tp*cp*pp");
}

TEST_CASE("A given dp must match the derived one", "[plan]") {
  require_rule([](Scenario& s) { s.layout.dp = 64; }, "dp = 64 given, but gpus / (tp*cp*pp)");
}

TEST_CASE("ep*etp must divide a pipeline stage", "[plan]") {
  require_rule([](Scenario& s) { s.layout.ep = 256; }, "ep*etp = 256*1 = 256 must divide the 128 ranks");
}

TEST_CASE("Experts must split evenly over ep", "[plan]") {
  require_rule([](Scenario& s) { s.model.moe.experts = 100; s.layout.ep = 8; },
               "100 experts cannot be split evenly over ep = 8");
}

TEST_CASE("Expert FFN must split over etp", "[plan]") {
  require_rule([](Scenario& s) { s.model.moe.expert_ffn = 2047; s.layout.etp = 2; s.layout.ep = 16; },
               "expert FFN 2047 is not divisible by etp = 2");
}

TEST_CASE("Attention heads must split over tp", "[plan]") {
  require_rule([](Scenario& s) { s.layout.tp = 3; s.gpus = 192; },
               "128 attention heads are not divisible by tp = 3");
}

TEST_CASE("Context parallelism splits each sequence into 2*cp chunks", "[plan]") {
  // 4094 tokens split over cp = 2 but not into the 4 load-balanced chunks.
  require_rule([](Scenario& s) { s.layout.cp = 2; s.training.seq_len = 4094; },
               "sequence length 4094 is not divisible by 2*cp = 4");
}

TEST_CASE("Sequence parallelism splits a micro-batch's tokens over tp", "[plan]") {
  require_rule([](Scenario& s) { s.layout.tp = 2; s.training.seq_len = 4095; },
               "tokens per micro-batch 4095 not divisible by tp = 2");
}

TEST_CASE("GQA's KV heads must split over tp when there are enough of them", "[plan]") {
  require_rule(
      [](Scenario& s) {
        s.model.attention.kind = "gqa";
        s.model.attention.kv_heads = 6;
        s.layout.tp = 4;
      },
      "6 KV heads are not divisible by tp = 4");
  // Fewer KV heads than tp: Megatron replicates them, no rule broken.
  Scenario replicated = test::record_gb300();
  replicated.model.attention.kind = "gqa";
  replicated.model.attention.kv_heads = 2;
  replicated.layout.tp = 4;
  CHECK_NOTHROW(plan::make_layout(replicated));
}

TEST_CASE("Global batch must split into micro-batches over DP", "[plan]") {
  require_rule([](Scenario& s) { s.training.global_batch = 4000; },
               "global batch 4000 is not divisible by micro_batch*dp = 1*128 = 128");
}

TEST_CASE("Interleaving needs micro-batches in multiples of pp", "[plan]") {
  require_rule([](Scenario& s) { s.layout.pp = 4; s.layout.vpp = 2; s.training.global_batch = 320; },
               "interleaved 1F1B needs micro-batches (5) to be a multiple of pp (4)");
}

TEST_CASE("A pipeline layout must have pp*vpp stages and every layer once", "[plan]") {
  require_rule([](Scenario& s) { s.layout.pipeline_layout = "Et*30|t*31mL"; },
               "pipeline_layout has 2 virtual stages, pp*vpp = 2*8 = 16 expected");
  require_rule([](Scenario& s) { s.layout.vpp = 1; s.layout.pipeline_layout = "Et*30|t*30mL"; },
               "pipeline_layout places 60 transformer layers, the model has 61");
  require_rule([](Scenario& s) { s.layout.vpp = 1; s.layout.pipeline_layout = "Et*30|t*31L"; },
               "pipeline_layout places 0 MTP layers, the run has mtp_layers = 1");
  require_rule([](Scenario& s) { s.layout.vpp = 1; s.layout.pipeline_layout = "t*30|Et*31mL"; },
               "must start with the embedding 'E'");
  require_rule([](Scenario& s) { s.layout.vpp = 1; s.layout.pipeline_layout = "Et*30|t*31mLx"; },
               "unexpected character 'x'");
}

TEST_CASE("Several broken rules are all reported at once", "[plan]") {
  Scenario s = test::record_gb300();
  s.gpus = 255;
  s.training.global_batch = 4001;
  try {
    plan::make_layout(s);
    FAIL("expected InfeasibleError");
  } catch (const InfeasibleError& e) {
    CHECK_THAT(e.what(), Contains("not divisible by tp*cp*pp"));
    CHECK_THAT(e.what(), Contains("global batch 4001"));
  }
}

TEST_CASE("Megatron's pipeline layout strings expand", "[plan]") {
  const auto stages = plan::expand_pipeline_layout("Et|(tt|)*30L");
  REQUIRE(stages.size() == 32);
  CHECK(stages.front() == "Et");
  CHECK(stages[1] == "tt");
  CHECK(stages.back() == "L");
  CHECK(plan::expand_pipeline_layout("Et*3|t*4, mL") == std::vector<std::string>{"Ettt", "ttttmL"});
  CHECK_THROWS_WITH(plan::expand_pipeline_layout("(tt|"), Contains("missing ')'"));
}

TEST_CASE("The GB200 history layout places embedding, 61 layers and loss on 32 stages", "[plan]") {
  Scenario s = test::record_gb300();
  s.training.mtp_layers = 0;
  s.layout.pp = 8;
  s.layout.vpp = 4;
  s.training.global_batch = 2048;
  s.layout.pipeline_layout = "Et|(tt|)*30L";
  const plan::Layout l = plan::make_layout(s);
  REQUIRE(l.stages.size() == 32);
  CHECK(l.stage(0, 0).embedding);
  CHECK(l.stage(0, 0).layers == 1);
  CHECK(l.stage(7, 3).output);
  CHECK(l.stage(7, 3).layers == 0);
  CHECK(l.stage(1, 0).first_layer == 1);
  CHECK(l.stage(0, 1).first_layer == 1 + 2 * 7);  // virtual stage 8
}

TEST_CASE("A generated layout balances 61 layers, MTP and loss", "[plan]") {
  const plan::Layout l = plan::make_layout(test::record_gb300());
  CHECK(l.pipeline_layout_generated);
  int layers = 0, fewest = 1000, most = 0;
  for (size_t i = 0; i + 1 < l.stages.size(); ++i) {
    layers += l.stages[i].layers;
    fewest = std::min(fewest, l.stages[i].layers);
    most = std::max(most, l.stages[i].layers);
  }
  CHECK(layers == 61);
  CHECK(most - fewest <= 1);  // 61 layers over 15 stages: 4 or 5 each
  // MTP and two BF16 heads outweigh a stage of layers: they get the last stage to themselves.
  CHECK(l.stages.back().layers == 0);
  CHECK(l.stages.back().mtp_layers == 1);
  CHECK(l.stages.back().output);
}

TEST_CASE("Without a heavy tail the generated layout spreads layers evenly", "[plan]") {
  Scenario s = test::record_gb300();
  s.training.mtp_layers = 0;
  s.layout.pp = 4;
  s.layout.vpp = 1;
  s.training.global_batch = 4096;
  const plan::Layout l = plan::make_layout(s);
  int layers = 0;
  for (const auto& v : l.stages) layers += v.layers;
  CHECK(layers == 61);
  CHECK(l.stages.back().layers >= 13);  // the last stage also runs the head, so a few fewer
  CHECK(l.stages.back().layers <= 16);
}

TEST_CASE("Ranks follow Megatron's tp-cp-ep-dp-pp order", "[plan]") {
  Scenario s = test::record_gb300();
  s.layout.tp = 2;
  s.layout.ep = 16;
  s.layout.etp = 2;
  const plan::Layout l = plan::make_layout(s);  // 256 = tp2 * dp64 * pp2; expert: etp2 ep16 edp4
  CHECK(l.dp == 64);
  CHECK(l.edp == 4);
  const plan::RankCoord c = l.coord(131);
  CHECK(c.tp == 1);
  CHECK(c.dp == 1);
  CHECK(c.pp == 1);
  CHECK(c.etp == 1);
  CHECK(c.ep == 1);
  CHECK(l.tp_group(131) == std::vector<int>{130, 131});
  CHECK(l.pp_group(3) == std::vector<int>{3, 131});
  CHECK(l.ep_group(0).size() == 16);
  CHECK(l.ep_group(0)[1] == 2);  // experts stride over the etp ranks
  CHECK(l.edp_group(0) == std::vector<int>{0, 32, 64, 96});
  CHECK(l.dp_group(0).size() == 64);
  CHECK(l.dp_group(0)[1] == 2);
}

TEST_CASE("Each schedule's rules on chunks, ranks and micro-batches are layout errors", "[plan][schedule]") {
  require_rule([](Scenario& s) { s.layout.schedule = "zb-h1"; },
               "zb-h1 is 1F1B with a split backward, one model chunk per rank: vpp must be 1, got 8");
  require_rule([](Scenario& s) { s.layout.schedule = "zb-v"; }, "zb-v places two model chunks per rank in a V");
  require_rule([](Scenario& s) { s.layout.schedule = "dualpipev"; }, "vpp must be 2, got 8");
  require_rule([](Scenario& s) { s.layout.schedule = "dualpipe"; }, "vpp must be 1, got 8");
  auto dualpipe = [](Scenario& s) {
    s.layout.schedule = "dualpipe";
    s.layout.vpp = 1;
  };
  require_rule([&](Scenario& s) { dualpipe(s); s.layout.pp = 1; }, "pp must be even, got 1");
  require_rule([&](Scenario& s) { dualpipe(s); s.training.global_batch = 128 * 33; },
               "half of the micro-batches in at each end: their number must be even, got 33");
  require_rule([&](Scenario& s) { dualpipe(s); s.training.global_batch = 128 * 2; },
               "dualpipe needs at least 2*pp = 4 micro-batches per step, got 2");
  require_rule([](Scenario& s) { s.layout.schedule = "dualpipev"; s.layout.vpp = 2; s.training.global_batch = 128 * 3; },
               "dualpipev needs at least 2*pp = 4 micro-batches per step, got 3");
  require_rule([](Scenario& s) { s.layout.schedule = "zb-h1"; s.layout.vpp = 1; },
               "recipe.ep_overlap overlaps a forward with a backward chunk; zb-h1 has no such pairs");
  Scenario ok = test::record_gb300();
  dualpipe(ok);
  CHECK_NOTHROW(plan::make_layout(ok));
  ok.layout.schedule = "zb-v";
  ok.layout.vpp = 2;
  ok.recipe.ep_overlap = false;
  CHECK_NOTHROW(plan::make_layout(ok));
}

TEST_CASE("Each kind of group partitions the ranks: every member of a rank's group lists the same group",
          "[plan][engine]") {
  // The engine lists a group once, for the first member it meets, and points every member it
  // finds in the list at that copy (src/engine/runner.cpp): right only if this holds.
  std::vector<std::pair<std::string, Scenario>> layouts;
  layouts.emplace_back("record", test::record_gb300());
  Scenario split = test::record_gb300();
  split.layout.tp = 2;
  split.layout.ep = 16;
  split.layout.etp = 2;
  layouts.emplace_back("tp2 ep16 etp2", split);
  Scenario context = test::record_gb300();
  context.layout.cp = 2;
  layouts.emplace_back("cp2", context);
  Scenario dualpipe = test::record_gb300();
  dualpipe.layout.schedule = "dualpipe";
  dualpipe.layout.vpp = 1;
  layouts.emplace_back("dualpipe", dualpipe);
  Scenario hsdp = test::bundled("scenarios/frameworks/torchtitan-gb200-256.json");
  hsdp.layout.dp_shard = 64;
  layouts.emplace_back("hsdp", hsdp);
  using GroupOf = std::vector<int> (plan::Layout::*)(int) const;
  const std::vector<std::pair<std::string, GroupOf>> kinds = {
      {"tp", &plan::Layout::tp_group},           {"cp", &plan::Layout::cp_group},
      {"dp", &plan::Layout::dp_group},           {"ep", &plan::Layout::ep_group},
      {"edp", &plan::Layout::edp_group},         {"pp", &plan::Layout::pp_group},
      {"dp_shard", &plan::Layout::dp_shard_group}, {"dp_replicate", &plan::Layout::dp_replicate_group},
      {"edp_shard", &plan::Layout::edp_shard_group}, {"edp_replicate", &plan::Layout::edp_replicate_group}};
  for (const auto& [layout_name, scenario] : layouts) {
    const plan::Layout l = plan::make_layout(scenario);
    for (const auto& [kind, group_of] : kinds) {
      std::string first_break;  // the first rank outside its own group, or with a member that lists another
      for (int rank = 0; rank < l.world && first_break.empty(); ++rank) {
        const std::vector<int> group = (l.*group_of)(rank);
        if (std::count(group.begin(), group.end(), rank) != 1) first_break = "rank " + std::to_string(rank);
        for (int member : group)
          if (first_break.empty() && (l.*group_of)(member) != group)
            first_break = "rank " + std::to_string(rank) + ", member " + std::to_string(member);
      }
      INFO(layout_name << ", " << kind << " groups: " << first_break);
      CHECK(first_break.empty());
    }
  }
}

TEST_CASE("DualPipe's data-parallel groups hold both copies of a stage", "[plan][schedule]") {
  Scenario s = test::record_gb300();
  s.layout.schedule = "dualpipe";
  s.layout.vpp = 1;
  const plan::Layout l = plan::make_layout(s);
  // pp 2: rank 0 holds stages 0 and 1, so does rank 128 (pp rank 1); dp 128 per copy.
  const auto dp = l.dp_group(0);
  CHECK(dp.size() == 256);
  CHECK(dp == l.dp_group(128));
  CHECK(l.edp_group(0).size() == 2 * static_cast<size_t>(l.edp));
  CHECK(l.stage(0, 0).embedding);
  CHECK(l.stage(0, 1).output);
  CHECK(l.stage(1, 0).output);
}
