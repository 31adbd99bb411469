// Running sweeps: failing points become rows, and the outputs do not depend on --jobs or on
// sharding (merged shards equal the unsharded run byte for byte).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>

#include "moesim/sweep/run.hpp"
#include "moesim/sweep/writers.hpp"
#include "test_sweep_support.hpp"

using namespace moesim;
using moesim::test::TempTree;

namespace {

sweep::SweepResult run_small(const TempTree& tree, int jobs, std::optional<sweep::Shard> shard = std::nullopt) {
  sweep::SweepOptions o;
  o.jobs = jobs;
  o.shard = shard;
  return sweep::run_sweep(sweep::load_sweep(test::small_sweep(tree)), o);
}

}  // namespace

TEST_CASE("invalid and infeasible points are rows with their reason", "[sweep]") {
  const TempTree tree("sweep-rows");
  const sweep::SweepResult r = run_small(tree, 2);
  REQUIRE(r.rows.size() == 6);
  REQUIRE(r.complete());
  const auto status = [&](std::size_t i) { return r.rows[i]["status"].get<std::string>(); };
  CHECK(status(0) == "ok");
  CHECK(status(1) == "ok");
  CHECK(status(2) == "infeasible");
  for (std::size_t i : {3, 4, 5}) CHECK(status(i) == "invalid");
  CHECK(r.rows[2]["reason"].get<std::string>().find("20000 GPUs") != std::string::npos);
  CHECK(r.rows[3]["reason"].get<std::string>().find("$.training.precision") != std::string::npos);
  CHECK(r.rows[1]["gpu_count"] == 512);
  CHECK(r.rows[1]["global_batch"] == 8192);
  CHECK(r.rows[0]["scaling_efficiency"] == 1.0);
  // Weak scaling may gain a little too (the distributed optimizer's shard shrinks with DP).
  CHECK(r.rows[1]["scaling_efficiency"].get<double>() == Approx(1.0).epsilon(0.02));
  CHECK(r.rows[2]["scaling_efficiency"].is_null());
  CHECK(sweep::error_rows(r) == 0);
  CHECK(sweep::status_summary(r) == "6 points: 2 ok, 3 invalid, 1 infeasible");
}

TEST_CASE("sweep outputs are byte-identical across --jobs values", "[sweep]") {
  const TempTree tree("sweep-jobs");
  sweep::write_outputs(tree.root() / "one", run_small(tree, 1));
  sweep::write_outputs(tree.root() / "three", run_small(tree, 3));
  test::require_same_outputs(tree.root() / "one", tree.root() / "three");
}

TEST_CASE("merged shards equal the unsharded sweep byte for byte", "[sweep]") {
  const TempTree tree("sweep-shards");
  sweep::write_outputs(tree.root() / "full", run_small(tree, 2));
  for (int n : {2, 4, 8}) {  // 8: more shards than points, some of them empty
    INFO(n << " shards");
    std::vector<sweep::SweepResult> parts;
    for (int i = 0; i < n; ++i) {
      const auto dir = tree.root() / ("shard-" + std::to_string(i) + "-of-" + std::to_string(n));
      sweep::write_outputs(dir, run_small(tree, 1, sweep::Shard{i, n}));
      parts.push_back(sweep::read_result(dir));
    }
    const auto merged = tree.root() / ("merged-" + std::to_string(n));
    sweep::write_outputs(merged, sweep::merge_results(parts));
    test::require_same_outputs(tree.root() / "full", merged);
  }
}

TEST_CASE("moesim sweep --shard and moesim merge reproduce moesim sweep", "[sweep]") {
  const TempTree tree("sweep-cli");
  const std::string sweep_file = test::small_sweep(tree).string();
  const std::string root = tree.root().string();
  const auto run = [](const std::string& args) {
    return std::system((std::string(MOESIM_BINARY) + " " + args + " 2>/dev/null >/dev/null").c_str());
  };
  REQUIRE(run("sweep " + sweep_file + " -o " + root + "/full") == 0);
  REQUIRE(run("sweep " + sweep_file + " --shard 0/2 --jobs 1 -o " + root + "/s0") == 0);
  REQUIRE(run("sweep " + sweep_file + " --shard 1/2 --jobs 2 -o " + root + "/s1") == 0);
  REQUIRE(run("merge " + root + "/s1 " + root + "/s0 -o " + root + "/merged") == 0);
  test::require_same_outputs(tree.root() / "full", tree.root() / "merged");
  // A shard missing is refused (invalid input, exit code 2).
  CHECK(WEXITSTATUS(run("merge " + root + "/s0 -o " + root + "/partial")) == 2);
}
