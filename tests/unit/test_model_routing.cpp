// Group-limited routing: the expected number of distinct GPUs and nodes a token reaches, against
// the hypergeometric closed form (no group limit), a Monte-Carlo of the router itself (both
// group-scoring rules), and DeepSeek-V3's configuration.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "moesim/model/routing.hpp"
#include "scenario_fixtures.hpp"

using namespace moesim;
using model::RoutingShape;

namespace {

enum class GroupScore { best, sum_of_top };

// Tokens routed by the rule itself: i.i.d. uniform scores, groups scored by their best expert
// (DeepEP's benchmark) or by the sum of their top k/M (Megatron, DeepSeek-V3), the M best groups
// kept, then the top-k experts among them. Returns the mean number of distinct units.
double monte_carlo(const RoutingShape& r, int experts_per_unit, GroupScore rule, int tokens) {
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int group_size = r.experts / r.groups;
  const int per_group = std::max(1, r.top_k / r.groups_per_token);
  std::vector<double> score(static_cast<std::size_t>(r.experts));
  std::vector<int> order(static_cast<std::size_t>(r.experts));
  std::vector<int> group_order(static_cast<std::size_t>(r.groups));
  std::vector<double> group_score(static_cast<std::size_t>(r.groups));
  double total = 0;
  for (int t = 0; t < tokens; ++t) {
    for (double& s : score) s = uniform(rng);
    for (int g = 0; g < r.groups; ++g) {
      std::vector<double> in(score.begin() + g * group_size, score.begin() + (g + 1) * group_size);
      std::sort(in.rbegin(), in.rend());
      const int take = rule == GroupScore::best ? 1 : per_group;
      group_score[static_cast<std::size_t>(g)] = std::accumulate(in.begin(), in.begin() + take, 0.0);
    }
    std::iota(group_order.begin(), group_order.end(), 0);
    std::sort(group_order.begin(), group_order.end(),
              [&](int a, int b) { return group_score[static_cast<std::size_t>(a)] > group_score[static_cast<std::size_t>(b)]; });
    std::vector<char> allowed(static_cast<std::size_t>(r.groups), 0);
    for (int i = 0; i < r.groups_per_token; ++i) allowed[static_cast<std::size_t>(group_order[static_cast<std::size_t>(i)])] = 1;
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return score[static_cast<std::size_t>(a)] > score[static_cast<std::size_t>(b)]; });
    std::set<int> units;
    int taken = 0;
    for (int e : order) {
      if (!allowed[static_cast<std::size_t>(e / group_size)]) continue;
      units.insert(e / experts_per_unit);
      if (++taken == r.top_k) break;
    }
    total += static_cast<double>(units.size());
  }
  return total / tokens;
}

// 1 - C(E - L, k) / C(E, k): the chance a unit of L experts holds one of k uniform experts.
}  // namespace

TEST_CASE("without a group limit, distinct units follow the hypergeometric closed form", "[model][routing]") {
  const RoutingShape r{256, 8, 1, 1};
  for (int ep : {8, 16, 32, 64, 256}) {
    INFO("EP" << ep);
    CHECK(model::expected_distinct_ranks(r, ep) == Approx(ep * test::hit_probability(256, 256 / ep, 8)).epsilon(1e-12));
  }
  // A group limit that allows every group is no limit.
  const RoutingShape all_groups{256, 8, 8, 8};
  CHECK(model::expected_distinct_ranks(all_groups, 32) == Approx(model::expected_distinct_ranks(r, 32)).epsilon(1e-12));
  // One expert per token always lands on one unit; k experts on one unit of all experts too.
  CHECK(model::expected_distinct_ranks(RoutingShape{256, 1, 8, 4}, 64) == Approx(1.0));
  CHECK(model::expected_distinct_ranks(r, 1) == 1.0);
}

TEST_CASE("the recursion equals a Monte-Carlo of the best-expert group router", "[model][routing]") {
  // DeepEP's benchmark: groups = nodes, a token keeps min(nodes, 4) nodes (test_internode.py).
  struct Case {
    int ep, nodes;
  };
  for (const Case c : {Case{16, 2}, Case{32, 4}, Case{64, 8}}) {
    const RoutingShape r{256, 8, c.nodes, std::min(c.nodes, 4)};
    const int per_gpu = 256 / c.ep, per_node = 256 / c.nodes;
    INFO("EP" << c.ep << " over " << c.nodes << " nodes");
    // 20,000 tokens: standard error about 0.1 % of the mean.
    CHECK(model::expected_distinct_units(r, per_gpu) ==
          Approx(monte_carlo(r, per_gpu, GroupScore::best, 20000)).epsilon(0.005));
    CHECK(model::expected_distinct_units(r, per_node) ==
          Approx(monte_carlo(r, per_node, GroupScore::best, 20000)).epsilon(0.005));
  }
}

TEST_CASE("DeepSeek-V3's router (sum of the top two per group) stays within 1 % of the recursion",
          "[model][routing]") {
  const ModelSpec m = config::load_model("deepseek-v3", test::configs_dir());
  const RoutingShape r = model::routing_shape(m);
  REQUIRE(r.groups == 8);
  REQUIRE(r.groups_per_token == 4);
  for (int ep : {8, 32, 64}) {
    for (int ranks_per_node : {8, 16}) {
      if (ranks_per_node > ep) continue;
      INFO("EP" << ep << ", " << ranks_per_node << " ranks per node");
      CHECK(model::expected_distinct_ranks(r, ep) ==
            Approx(monte_carlo(r, 256 / ep, GroupScore::sum_of_top, 20000)).epsilon(0.01));
      CHECK(model::expected_distinct_nodes(r, ep, ranks_per_node) ==
            Approx(monte_carlo(r, 256 / ep * ranks_per_node, GroupScore::sum_of_top, 20000)).epsilon(0.01));
    }
  }
  // DSV3 §3.2.2: each token reaches at most 4 nodes; with 8 nodes nearly always exactly 4.
  CHECK(model::expected_distinct_nodes(r, 64, 8) <= 4.0);
  CHECK(model::expected_distinct_nodes(r, 64, 8) > 3.9);
  // The group limit concentrates a token: at EP8 a GPU holds one group, so at most 4 GPUs.
  CHECK(model::expected_distinct_ranks(r, 8) <= 4.0);
  CHECK(model::expected_distinct_ranks(r, 8) < 8 * test::hit_probability(256, 32, 8));
}

TEST_CASE("units that do not nest with the router groups are rejected", "[model][routing]") {
  const RoutingShape r{256, 8, 8, 4};  // groups of 32
  CHECK_THROWS_AS(model::expected_distinct_units(r, 48), std::invalid_argument);  // does not divide 256
  CHECK_THROWS_AS(model::expected_distinct_units(RoutingShape{240, 8, 8, 4}, 20), std::invalid_argument);  // 30 vs 20
  CHECK_NOTHROW(model::expected_distinct_units(r, 64));  // a unit holds two groups
  CHECK_NOTHROW(model::expected_distinct_units(r, 4));   // a group spans 8 units
}
