// Layout search: rejection reasons counted per rule on a small space derived by hand, and
// outputs that do not depend on --jobs or on sharding (merged shards equal the unsharded search
// byte for byte).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>

#include "moesim/search/result.hpp"
#include "moesim/search/run.hpp"
#include "moesim/search/writers.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using moesim::test::TempTree;

namespace {

// A space on the GB300 record scenario (256 GPUs, global batch 4,096, DeepSeek-V3: 256
// experts, 61 layers + 1 MTP) where every axis but pp, ep and the micro-batch holds the
// record's own value.
std::filesystem::path small_search(const TempTree& tree, const std::string& varied, int simulate) {
  const std::string record = (test::source_dir() / "scenarios" / "gb300-256-record.json").string();
  return tree.write("search/small.json", R"({
    "name": "small search, test",
    "base": ")" + record + R"(",
    "simulate": )" + std::to_string(simulate) + R"(,
    "space": {
      "layout": {"tp": [1], "vpp": [8], "etp": [1], "cp": [1], "schedule": ["1f1b"], "pipeline_layout": [""], )" +
                                                   varied + R"(},
      "recipe": {"recompute": [[]], "ep_overlap": [true], "delay_wgrad": [true], "dispatcher": ["hybridep"],
                 "cuda_graphs": ["full_iteration"]}
    }
  })");
}

search::SearchResult run(const std::filesystem::path& file, int jobs, std::optional<batch::Shard> shard = std::nullopt) {
  search::SearchOptions o;
  o.jobs = jobs;
  o.shard = shard;
  return search::run_search(search::load_search(file), o);
}

// The count of the one reason containing `words` (0 when none does); fails when several do.
int count_of(const search::SearchResult& r, const std::string& words) {
  int found = 0, count = 0;
  for (const auto& [reason, n] : r.rejected)
    if (reason.find(words) != std::string::npos) {
      ++found;
      count = n;
    }
  INFO(words);
  REQUIRE(found <= 1);
  return count;
}

void require_same_search_outputs(const std::filesystem::path& a, const std::filesystem::path& b) {
  for (const char* name : {"search.json", "search.csv", "search.md"}) {
    INFO(name);
    REQUIRE(test::read_text(a / name) == test::read_text(b / name));
  }
}

}  // namespace

TEST_CASE("a search counts each rejected candidate under every rule it breaks", "[search]") {
  // pp {2, 3} x ep {32, 256} x micro-batch {1, 8}: 8 candidates. By hand, with 256 GPUs:
  // - pp 3: 256 % 3 != 0 (world size); a stage holds 256 / 3 = 85 ranks, which neither ep 32
  //   nor ep 256 divides; dp = 85 and 4,096 % (mbs * 85) != 0 (global batch). 4 candidates,
  //   3 rules each (micro-batches 48 and 6 are multiples of pp = 3: no interleaving rule).
  // - pp 2, ep 256: a stage's 128 ranks cannot hold EP 256. 2 candidates, that rule only.
  // - pp 2, ep 32, mbs 8: a valid layout (dp 128, 4 micro-batches); eight micro-batches' worth of
  //   saved activations with no recompute do not fit in a GB300's HBM: memory.
  // - pp 2, ep 32, mbs 1: the record's layout; it fits (a published run).
  const TempTree tree("search-reasons");
  const search::SearchResult r =
      run(small_search(tree, R"("pp": [2, 3], "ep": [32, 256]}, "training": {"micro_batch": [1, 8])", 0), 2);
  CHECK(r.evaluated == 8);
  CHECK(r.survivors == 1);
  CHECK(r.rejected_candidates == 7);
  CHECK(count_of(r, "world size") == 4);
  CHECK(count_of(r, "must divide the N ranks of a pipeline stage") == 6);
  CHECK(count_of(r, "global batch") == 4);
  CHECK(count_of(r, "memory") == 1);
  int total = 0;
  for (const auto& [reason, n] : r.rejected) total += n;
  CHECK(total == 4 + 6 + 4 + 1);  // no other rule fired
  // The base's own settings are a candidate, and the one survivor.
  REQUIRE(r.reference.has_value());
  CHECK(r.reference_rejections.empty());
  // simulate 0: no best estimate simulated, but the reference always is (its rank is reported).
  CHECK(r.best_estimates == 0);
  CHECK(r.plan == std::vector<int>{*r.reference});
}

TEST_CASE("search outputs are byte-identical across --jobs values and merged shards", "[search]") {
  // ep {8, 16, 32, 64} at pp 2: four survivors; the best three estimates are simulated (plus the
  // record's ep 32 when it is not among them).
  const TempTree tree("search-jobs");
  const auto file = small_search(tree, R"("pp": [2], "ep": [8, 16, 32, 64])", 3);
  const search::SearchResult one = run(file, 1);
  REQUIRE(one.complete());
  REQUIRE(one.candidates.size() >= 3);
  // Ranked by simulated TFLOP/s per GPU, best first.
  for (std::size_t i = 1; i < one.candidates.size(); ++i)
    CHECK(one.candidates[i - 1]["tflops_per_gpu"].get<double>() >= one.candidates[i]["tflops_per_gpu"].get<double>());
  search::write_outputs(tree.root() / "one", one);
  search::write_outputs(tree.root() / "three", run(file, 3));
  require_same_search_outputs(tree.root() / "one", tree.root() / "three");
  for (int n : {2, 5}) {  // 5: more shards than planned simulations, some of them empty
    INFO(n << " shards");
    std::vector<search::SearchResult> parts;
    for (int i = 0; i < n; ++i) {
      const auto dir = tree.root() / ("shard-" + std::to_string(i) + "-of-" + std::to_string(n));
      search::write_outputs(dir, run(file, 1, batch::Shard{i, n}));
      parts.push_back(search::read_result(dir));
    }
    const auto merged = tree.root() / ("merged-" + std::to_string(n));
    search::write_outputs(merged, search::merge_results(parts));
    require_same_search_outputs(tree.root() / "one", merged);
  }
}

TEST_CASE("moesim search --shard and moesim merge reproduce moesim search", "[search]") {
  const TempTree tree("search-cli");
  const std::string file = small_search(tree, R"("pp": [2], "ep": [16, 32])", 2).string();
  const std::string root = tree.root().string();
  const auto cli = [](const std::string& args) {
    return std::system((std::string(MOESIM_BINARY) + " " + args + " 2>/dev/null >/dev/null").c_str());
  };
  REQUIRE(cli("search " + file + " -o " + root + "/full") == 0);
  REQUIRE(cli("search " + file + " --shard 0/2 --jobs 1 -o " + root + "/s0") == 0);
  REQUIRE(cli("search " + file + " --shard 1/2 --jobs 2 -o " + root + "/s1") == 0);
  REQUIRE(cli("merge " + root + "/s1 " + root + "/s0 -o " + root + "/merged") == 0);
  require_same_search_outputs(tree.root() / "full", tree.root() / "merged");
  // A shard missing is refused (invalid input, exit code 2).
  CHECK(WEXITSTATUS(cli("merge " + root + "/s0 -o " + root + "/partial")) == 2);
}
