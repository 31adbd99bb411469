// Issue 42, item 1: an EP group split unevenly over NVLink domains (EP64 on 72-GPU racks: 56 + 8
// members) is modelled, not refused with an uncaught exception. The expected distinct domains per
// token against the hypergeometric closed form and a Monte-Carlo of uniform top-k draws; equal
// domains keep their old result exactly; the per-member RDMA load of the small domain (it receives
// more than it sends); and the two reproducers of the issue through the CLI and the search screen.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/engine/simulate.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/workload/step_builder.hpp"
#include "moesim/model/routing.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/search/screen.hpp"
#include "moesim/search/space.hpp"
#include "run_support.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"
#include "test_reliability_cli.hpp"

using namespace moesim;
using moesim::test::run_cli;
using moesim::test::TempTree;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// ln C(n, k), for the closed form written independently of model::probability_unit_hit.
double uneven_log_choose(int n, int k) { return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0); }

// sum over units of 1 - C(E - e_u, k) / C(E, k).
double uneven_closed_form(int experts, int top_k, const std::vector<int>& unit_experts) {
  double sum = 0;
  for (int e : unit_experts)
    sum += experts - e < top_k ? 1.0
                               : 1.0 - std::exp(uneven_log_choose(experts - e, top_k) - uneven_log_choose(experts, top_k));
  return sum;
}

// Mean distinct units over `draws` uniform top-k subsets of the experts (a partial Fisher-Yates
// shuffle per token), units being consecutive blocks of the given sizes.
double uneven_monte_carlo(int experts, int top_k, const std::vector<int>& unit_experts, int draws) {
  std::vector<int> unit_of;
  for (int u = 0; u < static_cast<int>(unit_experts.size()); ++u)
    unit_of.insert(unit_of.end(), static_cast<std::size_t>(unit_experts[static_cast<std::size_t>(u)]), u);
  std::vector<int> ids(static_cast<std::size_t>(experts));
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng(42);
  long long total = 0;
  std::vector<char> hit(unit_experts.size());
  for (int t = 0; t < draws; ++t) {
    std::fill(hit.begin(), hit.end(), 0);
    for (int i = 0; i < top_k; ++i) {
      std::uniform_int_distribution<int> pick(i, experts - 1);
      std::swap(ids[static_cast<std::size_t>(i)], ids[static_cast<std::size_t>(pick(rng))]);
      hit[static_cast<std::size_t>(unit_of[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])])] = 1;
    }
    total += std::count(hit.begin(), hit.end(), 1);
  }
  return static_cast<double>(total) / draws;
}

platform::EpExchangeRequest uneven_request(platform::EpDispatcher d, model::RoutingShape routing) {
  platform::EpExchangeRequest r;
  r.dispatcher = d;
  r.kernel = platform::EpKernel::dispatch;
  r.tokens = 4096;
  r.token_bytes = 7168 * 2;
  r.hidden = 7168;
  r.routing = routing;
  return r;
}

// The published GB200 BF16 scenario (EP64) with gpus_per_domain 0, the whole 72-GPU domain.
json uneven_published_json() {
  std::ifstream in(test::source_dir() / "scenarios" / "published" / "gb200-bf16-2511.json");
  json s = json::parse(in);
  s["layout"]["gpus_per_domain"] = 0;
  return s;
}

}  // namespace

TEST_CASE("Distinct domains of an uneven split: closed form and Monte-Carlo of uniform top-k", "[uneven-ep]") {
  const model::RoutingShape r{256, 8, 1, 1};
  struct Case {
    const char* what;
    std::vector<int> experts;
  };
  // EP64 over 56 + 8 GPUs (4 experts each); EP32 over domains of 7 GPUs (7, 7, 7, 7, 4; 8 each).
  for (const Case& c : {Case{"EP64 as 56 + 8", {224, 32}}, Case{"EP64 as 8 + 56", {32, 224}},
                        Case{"EP32 as 7+7+7+7+4", {56, 56, 56, 56, 32}}}) {
    INFO(c.what);
    const double closed = uneven_closed_form(256, 8, c.experts);
    CHECK(model::expected_distinct_units_uneven(r, c.experts) == Approx(closed).epsilon(1e-12));
    // 200,000 tokens: the count's standard deviation is under 1, so the mean's standard error is
    // under 0.0023; the tolerance, 0.01 absolute, is over 4 standard errors (fixed before running).
    CHECK(uneven_monte_carlo(256, 8, c.experts, 200000) == Approx(closed).margin(0.01));
  }
  // The 56-GPU domain is nearly always hit, the 8-GPU one two times in three.
  CHECK(model::probability_unit_hit(r, 224) > 0.9999);
  CHECK(model::probability_unit_hit(r, 32) == Approx(1 - std::exp(uneven_log_choose(224, 8) - uneven_log_choose(256, 8))));
  CHECK_THROWS_AS(model::expected_distinct_units_uneven(r, {224, 24}), std::invalid_argument);  // 248 of 256
  CHECK_THROWS_AS(model::expected_distinct_units_uneven(r, {256, 0}), std::invalid_argument);
}

TEST_CASE("Equal domains keep their old plan exactly; unequal ones load the small domain's NICs", "[uneven-ep]") {
  using namespace moesim::platform;
  using namespace moesim::platform::testing;
  // DeepSeek-V3's router: 8 groups of 32 experts, 4 per token (the group limit applies where the
  // domains are equal and nest with the groups).
  const model::RoutingShape dsv3{256, 8, 8, 4};
  const EpExchangeRequest req = uneven_request(EpDispatcher::deepep, dsv3);
  const double wire = req.token_bytes;

  // Equal: EP64 over 2 domains of 32 (gpus_per_domain 32).
  const Topology equal_t = gb300_like(64, 32);
  const EpExchangePlan e = plan_ep_exchange(equal_t, range_group(0, 64), req, 5);
  const double old_domains = model::expected_distinct_units(dsv3, 256 / 64 * 32);
  CHECK(e.domains_per_token == old_domains);
  CHECK(e.load.nic_bytes == req.tokens * old_domains * (2 - 1) / 2 * wire);
  CHECK(plan_ep_exchange_folded(equal_t, range_group(0, 64), req, 5).load.nic_bytes == e.load.nic_bytes);

  // Unequal: ranks 64..127 of 72-GPU domains: 8 in domain 0, 56 in domain 1.
  const Topology t = gb300_like(144, 72);
  const Group g = range_group(64, 64);
  const double p_small = test::hit_probability(256, 32, 8), p_large = test::hit_probability(256, 224, 8);
  const EpExchangePlan small = plan_ep_exchange(t, g, req, 64);   // in the 8-GPU part
  const EpExchangePlan large = plan_ep_exchange(t, g, req, 100);  // in the 56-GPU part
  for (const EpExchangePlan* p : {&small, &large}) {
    CHECK(p->two_hop);
    CHECK(p->domains_per_token == Approx(p_small + p_large).epsilon(1e-12));
    CHECK(std::isfinite(p->seconds));
    CHECK(p->copies_per_token == model::expected_distinct_ranks(dsv3, 64));  // GPUs: the group limit applies
  }
  // NVLink: (k-1)/k of the copies, k the own domain's members.
  CHECK(small.load.nvlink_bytes == Approx(req.tokens * small.copies_per_token * 7 / 8 * wire));
  CHECK(large.load.nvlink_bytes == Approx(req.tokens * large.copies_per_token * 55 / 56 * wire));
  // RDMA: a small-domain member sends p_large copies per token and receives 56 members' p_small
  // spread over its 8: 7 p_small, the busier direction. A large-domain member sends p_small and
  // receives 8 / 56 p_large.
  CHECK(small.load.nic_bytes == Approx(req.tokens * 7 * p_small * wire));
  CHECK(large.load.nic_bytes == Approx(req.tokens * p_small * wire));
  CHECK(small.seconds > large.seconds);
  // The folded representative runs the busiest member's plan, wherever it sits.
  CHECK(plan_ep_exchange_folded(t, g, req, 100).load.nic_bytes == small.load.nic_bytes);
  CHECK_THROWS_AS(plan_ep_exchange_folded(t, g, req, 0), std::invalid_argument);  // not a member
  // NCCL's all-to-all: every peer outside the own domain over the NIC.
  const EpExchangePlan a = plan_ep_exchange_folded(t, g, uneven_request(EpDispatcher::nccl_alltoall, dsv3), 100);
  CHECK(a.load.nic_bytes == Approx(56 * req.tokens * 8 / 64 * wire));
}

TEST_CASE("The uneven EP64 reproducers run, compare and pass the search screen", "[uneven-ep][cli]") {
  const TempTree tree("uneven-ep");
  json published = uneven_published_json();
  const fs::path a = tree.write("gb200-bf16-2511-domain0.json", published.dump(2));
  json record = test::record_json();
  record["layout"]["gpus_per_domain"] = 7;  // EP32 over domains of 7 GPUs: 7 + 7 + 7 + 7 + 4
  const fs::path b = tree.write("record-domain7.json", record.dump(2));
  for (const fs::path& scenario : {a, b}) {
    INFO(scenario.filename().string());
    const test::CliResult r = run_cli({"run", scenario.string(), "--format", "json", "--quiet"}, tree.root());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const double step = json::parse(r.out).at("step_time_s").get<double>();
    CHECK(std::isfinite(step));
    CHECK(step > 0);
  }
  const test::CliResult compared = run_cli({"compare", a.string(), b.string()}, tree.root());
  INFO(compared.err);
  CHECK(compared.code == 0);

  // The search no longer rejects the published reference layout as an "error".
  const Scenario s = config::load_scenario(a);
  const search::Screened screened = search::screen_one(s, search::reference_candidate(s), test::default_calibration());
  CHECK(screened.rejections.empty());
  CHECK(std::isfinite(screened.estimate.step_time_s));
}

TEST_CASE("Both fidelities simulate EP groups split unevenly over domains", "[uneven-ep][engine]") {
  // 64 GPUs in domains of 24: the EP32 groups are 24 + 8 and 16 + 16 (equal, for contrast).
  Scenario s = test::identical_gpus(test::small_moe());
  s.layout.gpus_per_domain = 24;
  const driver::RunResult folded = test::run(s, platform::Fidelity::folded);
  const driver::RunResult full = test::run(s, platform::Fidelity::full);
  CHECK(std::isfinite(folded.metrics.step_time_s));
  CHECK(std::isfinite(full.metrics.step_time_s));
  CHECK(full.sim.simulated_gpus == 64);
  // Splitting an EP group over two racks' NICs is slower than keeping it in one rack.
  s.layout.gpus_per_domain = 32;
  CHECK(test::run(s, platform::Fidelity::folded).metrics.step_time_s < folded.metrics.step_time_s);
}

TEST_CASE("An exception inside the simulation is an explained error, not an aborted child", "[uneven-ep][engine]") {
  // A program built for 256 experts, simulated with a model of 255 that no EP group divides:
  // the EP exchange's planner throws inside a SimGrid actor.
  const Scenario s = test::small_moe();
  const plan::Layout l = plan::make_layout(s);
  const workload::StepProgram program = workload::build_step(s, l, test::default_calibration());
  Scenario broken = s;
  broken.model.moe.experts = 255;
  try {
    engine::simulate(broken, l, program, engine::Options{});
    FAIL("simulated a model whose experts do not divide over the EP group");
  } catch (const InfeasibleError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("cannot plan this layout's communication") &&
                             Catch::Matchers::Contains("do not divide") &&
                             Catch::Matchers::Contains("layout.gpus_per_domain"));
  }
}
