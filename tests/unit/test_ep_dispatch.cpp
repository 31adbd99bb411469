// EP dispatchers as mechanisms: the bytes each one puts on each link, derived by hand, and the
// standalone dispatch/combine against the dispatchers' own published microbenchmarks, counted the
// way those benchmarks count (DEP-T: "NVL" = token copies received, the own included; "RDMA" =
// (token, node) pairs, the own node included; FP8 = 1.03125 bytes per element).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "moesim/config/loader.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/platform/simulate_plan.hpp"
#include "published_check.hpp"
#include "scenario_fixtures.hpp"
#include "test_platform_support.hpp"

using namespace moesim;
using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {

constexpr double kHidden = 7168;
constexpr double kTokens = 4096;
constexpr double kFp8 = 1.03125;  // FP8 element plus an FP32 scale per 128 (DEP-T's fp8_factor x 2)

// 1 - C(E - L, k) / C(E, k): the chance that a unit of L experts holds one of k uniform experts.
EpExchangeRequest request(EpDispatcher d, EpKernel kernel, double token_bytes, model::RoutingShape routing) {
  EpExchangeRequest r;
  r.dispatcher = d;
  r.kernel = kernel;
  r.tokens = kTokens;
  r.token_bytes = token_bytes;
  r.hidden = kHidden;
  r.routing = routing;
  r.probabilities = kernel == EpKernel::dispatch;  // as the benchmarks run them (HEP's kernel test)
  return r;
}

EpDispatcherRates stack_rates(EpDispatcher d) {
  RecipeSpec recipe;
  recipe.dispatcher = std::string(to_string(d));
  const StackSpec stack = config::load_stack("megatron-bridge-26.06", test::configs_dir());
  return ep_exchange_request(recipe, stack, ModelSpec{}).rates;
}

// DeepEP's benchmark router: groups = nodes, a token keeps min(nodes, 4) of them (DEP-T).
model::RoutingShape deepep_bench_router(int ep) {
  const int nodes = std::max(1, ep / 8);
  return {256, 8, nodes, std::min(nodes, 4)};
}

}  // namespace

TEST_CASE("inside a domain a deduplicating dispatcher sends one copy per destination GPU", "[platform][ep]") {
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 32);
  const model::RoutingShape uniform{256, 8, 1, 1};
  const EpExchangePlan p =
      plan_ep_exchange(t, g, request(EpDispatcher::deepep, EpKernel::dispatch, kHidden * 2, uniform), 0);
  // 32 GPUs of 8 experts: a token reaches 32 x P(hit) GPUs; 1 in 32 of those copies is its own.
  const double gpus = 32 * test::hit_probability(256, 8, 8);
  CHECK(p.copies_per_token == Approx(gpus));
  CHECK_FALSE(p.two_hop);
  CHECK(p.load.nvlink_bytes == Approx(kTokens * gpus * 31 / 32 * kHidden * 2));
  CHECK(p.load.nic_bytes == 0);
  CHECK(p.seconds == Approx(p.load.nvlink_bytes / 900e9 + t.nvlink_latency_s));
  CHECK(p.logical_nvlink_bytes == Approx(kTokens * gpus * kHidden * 2));
  // The NCCL all-to-all sends top_k copies, k / 32 of a rank's tokens x 8 to every peer.
  const EpExchangePlan a =
      plan_ep_exchange(t, g, request(EpDispatcher::nccl_alltoall, EpKernel::dispatch, kHidden * 2, uniform), 0);
  CHECK(a.copies_per_token == 8);
  CHECK(a.load.nvlink_bytes == Approx(31 * kTokens * 8 / 32 * kHidden * 2));
  CHECK(a.load.nvlink_bytes > p.load.nvlink_bytes);
}

TEST_CASE("across domains one RDMA copy goes to each destination domain, then NVLink forwards it",
          "[platform][ep]") {
  const Topology t = gb300_like(64, 8);  // 8 domains of 8 (HGX-like)
  const Group g = range_group(0, 64);
  const model::RoutingShape uniform{256, 8, 1, 1};
  EpExchangeRequest r = request(EpDispatcher::deepep, EpKernel::combine, kHidden * 2, uniform);
  r.rates.combine.rdma_efficiency = 0.5;
  const EpExchangePlan p = plan_ep_exchange(t, g, r, 0);
  const double nodes = 8 * test::hit_probability(256, 32, 8);
  const double gpus = 64 * test::hit_probability(256, 4, 8);
  CHECK(p.two_hop);
  CHECK(p.domains_per_token == Approx(nodes));
  CHECK(p.copies_per_token == Approx(gpus));
  // 7 of every 8 (token, domain) pairs leave the domain; 7 of every 8 (token, GPU) copies are
  // forwarded to another GPU than the one the RDMA copy landed on.
  CHECK(p.load.nic_bytes == Approx(kTokens * nodes * 7 / 8 * kHidden * 2));
  CHECK(p.load.nvlink_bytes == Approx(kTokens * gpus * 7 / 8 * kHidden * 2));
  const double nic_s = p.load.nic_bytes / (0.5 * 100e9) + t.scaleout_latency_s();
  const double nvl_s = p.load.nvlink_bytes / 900e9 + t.nvlink_latency_s;
  CHECK(p.seconds == Approx(std::max(nic_s, nvl_s)));
  // Per node instead of per expert: the NCCL all-to-all sends 56 of its 64 peers k/64 copies each.
  const EpExchangePlan a =
      plan_ep_exchange(t, g, request(EpDispatcher::nccl_alltoall, EpKernel::combine, kHidden * 2, uniform), 0);
  CHECK(a.load.nic_bytes == Approx(kTokens * 8.0 * 56 / 64 * kHidden * 2));
  CHECK(p.load.nic_bytes / a.load.nic_bytes == Approx(nodes * 7 / 8 / 7.0));
  // DeepSeek-V3's router keeps a token on 4 of 8 groups (one per node here): at most 4 nodes.
  EpExchangeRequest limited = r;
  limited.routing = {256, 8, 8, 4};
  const EpExchangePlan q = plan_ep_exchange(t, g, limited, 0);
  CHECK(q.domains_per_token <= 4.0);
  CHECK(q.load.nic_bytes < 0.5 * a.load.nic_bytes);
}

TEST_CASE("a dispatcher's NVLink rate is its link efficiency unless its SMs bind first", "[platform][ep]") {
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 8);
  EpExchangeRequest r = request(EpDispatcher::hybridep, EpKernel::dispatch, kHidden * 2, {64, 8, 1, 1});
  r.rates.dispatch.nvlink_efficiency = 0.7;
  r.rates.dispatch.sm_bytes_per_s = 20e9;
  r.sms = 16;  // 320 GB/s < 630 GB/s: the SMs bind
  CHECK(plan_ep_exchange(t, g, r, 0).load.nvlink_bytes_per_s == Approx(320e9));
  r.sms = 48;  // 960 GB/s > 630 GB/s: the link binds
  CHECK(plan_ep_exchange(t, g, r, 0).load.nvlink_bytes_per_s == Approx(630e9));
}

TEST_CASE("across domains the NVLink leg runs at the forwarders' own rate where it binds", "[platform][ep]") {
  const model::RoutingShape uniform{256, 8, 1, 1};
  EpExchangeRequest r = request(EpDispatcher::deepep, EpKernel::combine, kHidden * 2, uniform);
  r.rates.combine.nvlink_efficiency = 0.7;   // 630 GB/s of the 900 GB/s port
  r.rates.combine.forward_sm_bytes_per_s = 5e9;
  r.sms = 24;  // 120 GB/s of forwarding < 630 GB/s: the forwarders bind
  const Topology hgx = gb300_like(64, 8);
  CHECK(plan_ep_exchange(hgx, range_group(0, 64), r, 0).load.nvlink_bytes_per_s == Approx(120e9));
  r.sms = 200;  // 1 TB/s of forwarding: the link binds again
  CHECK(plan_ep_exchange(hgx, range_group(0, 64), r, 0).load.nvlink_bytes_per_s == Approx(630e9));
  // Inside one domain there is no forwarding: the intranode kernel's rates alone.
  r.sms = 24;
  const Topology rack = gb300_like(72);
  CHECK(plan_ep_exchange(rack, range_group(0, 64), r, 0).load.nvlink_bytes_per_s == Approx(630e9));
}

TEST_CASE("HybridEP sends each copy with its probability row and pays SM time per copy per peer", "[platform][ep]") {
  const Topology t = gb300_like(72);
  const Group g = range_group(0, 32);
  const model::RoutingShape uniform{256, 8, 1, 1};
  const double gpus = 32 * test::hit_probability(256, 8, 8);
  const double per_copy_s = 4e-9;
  auto plan = [&](EpKernel kernel, double token_bytes, int sms, std::optional<bool> probabilities = {}) {
    EpExchangeRequest r = request(EpDispatcher::hybridep, kernel, token_bytes, uniform);
    r.rates.dispatch = {1.0, 0, 1.0, per_copy_s};
    r.rates.combine = {1.0, 0, 1.0, per_copy_s};
    r.sms = sms;
    if (probabilities) r.probabilities = *probabilities;  // else as the benchmarks run the kernel
    return plan_ep_exchange(t, g, r, 0);
  };
  // FP8 dispatch: each copy carries the token, its scales and 256 FP32 probabilities; the SMs
  // issue 3 copies to each destination plus the load, each 4 ns per peer of 32.
  const EpExchangePlan fp8 = plan(EpKernel::dispatch, kHidden * kFp8, 16);
  CHECK(fp8.load.nvlink_bytes == Approx(kTokens * gpus * 31 / 32 * (kHidden * kFp8 + 4 * 256)));
  const double fp8_sm_s = kTokens / 16 * 3 * (gpus + 1) * per_copy_s * 32;
  REQUIRE(fp8.load.nvlink_bytes / fp8_sm_s < 900e9);  // the SMs bind
  CHECK(fp8.load.nvlink_bytes_per_s == Approx(fp8.load.nvlink_bytes / fp8_sm_s));
  // The counted bandwidth leaves the probabilities out.
  CHECK(fp8.logical_nvlink_bytes == Approx(kTokens * gpus * kHidden * kFp8));
  // BF16 has no scales: 2 copies per destination. Twice the SMs halve the SM time.
  const EpExchangePlan bf16 = plan(EpKernel::dispatch, kHidden * 2, 32);
  const double bf16_sm_s = kTokens / 32 * 2 * (gpus + 1) * per_copy_s * 32;
  CHECK(bf16.load.nvlink_bytes_per_s == Approx(std::min(900e9, bf16.load.nvlink_bytes / bf16_sm_s)));
  // A dispatch without probabilities (the combine's gradient) issues the token and its scales.
  const EpExchangePlan bare_plan = plan(EpKernel::dispatch, kHidden * kFp8, 16, false);
  CHECK(bare_plan.load.nvlink_bytes == Approx(kTokens * gpus * 31 / 32 * kHidden * kFp8));
  CHECK(bare_plan.load.nvlink_bytes_per_s ==
        Approx(std::min(900e9, bare_plan.load.nvlink_bytes / (kTokens / 16 * 2 * (gpus + 1) * per_copy_s * 32))));
  // The benchmark's combine loads each copy's token and stores the sum: copies + 1, no
  // probabilities on the link.
  const EpExchangePlan combine = plan(EpKernel::combine, kHidden * 2, 16);
  CHECK(combine.load.nvlink_bytes == Approx(kTokens * gpus * 31 / 32 * kHidden * 2));
  const double combine_sm_s = kTokens / 16 * (gpus + 1) * per_copy_s * 32;
  CHECK(combine.load.nvlink_bytes_per_s == Approx(std::min(900e9, combine.load.nvlink_bytes / combine_sm_s)));
  // The dispatch's gradient (the combine kernel with probabilities) loads both: 2 copies + 1.
  const EpExchangePlan grad_plan = plan(EpKernel::combine, kHidden * 2, 16, true);
  CHECK(grad_plan.load.nvlink_bytes == Approx(kTokens * gpus * 31 / 32 * (kHidden * 2 + 4 * 256)));
  CHECK(grad_plan.load.nvlink_bytes_per_s ==
        Approx(std::min(900e9, grad_plan.load.nvlink_bytes / (kTokens / 16 * (2 * gpus + 1) * per_copy_s * 32))));
  // Across domains the per-copy law (measured inside one) is not used: the link binds.
  const Topology hgx = gb300_like(64, 8);
  EpExchangeRequest across = request(EpDispatcher::hybridep, EpKernel::dispatch, kHidden * kFp8, uniform);
  across.rates.dispatch = {1.0, 0, 1.0, per_copy_s};
  across.sms = 1;
  const EpExchangePlan across_plan = plan_ep_exchange(hgx, range_group(0, 64), across, 0);
  CHECK(across_plan.load.nvlink_bytes_per_s == Approx(900e9));
  // A probability row covers one domain's experts (4 per rank x 8 ranks), on both tiers.
  const double wire_bytes = kHidden * kFp8 + 4.0 * 4 * 8;
  CHECK(across_plan.load.nvlink_bytes == Approx(kTokens * across_plan.copies_per_token * 7 / 8 * wire_bytes));
  CHECK(across_plan.load.nic_bytes == Approx(kTokens * across_plan.domains_per_token * 7 / 8 * wire_bytes));
}

TEST_CASE("a simulated EP exchange equals its closed form in both fidelities", "[platform][ep]") {
  const model::RoutingShape dsv3{256, 8, 8, 4};
  struct Case {
    const char* what;
    Topology t;
    int ranks;
  };
  for (const Case& c : {Case{"one domain", gb300_like(72), 32}, Case{"8 HGX domains", gb300_like(64, 8), 64},
                        Case{"2 racks", gb300_like(64, 32), 64}}) {
    EpExchangeRequest r = request(EpDispatcher::hybridep, EpKernel::dispatch, kHidden * kFp8, dsv3);
    r.rates = {{0.7, 17e9, 0.8}, {0.65, 33e9, 0.85}};
    r.sms = 32;
    const Group g = range_group(0, c.ranks);
    const EpExchangePlan p = plan_ep_exchange(c.t, g, r, 0);
    INFO(c.what);
    CHECK(simulate_plan_seconds(c.t, g, p.load, Fidelity::folded) == Approx(p.seconds).epsilon(0.01));
    CHECK(simulate_plan_seconds(c.t, g, p.load, Fidelity::full) == Approx(p.seconds).epsilon(0.01));
  }
}

TEST_CASE("DeepEP's normal kernels on H800 reproduce DeepEP's published table", "[platform][ep][published]") {
  // DEP-L (README 3b1045d onward, docs/legacy.md): H800 NVLink ~160 GB/s, CX7 400 Gb/s; 4096
  // tokens, hidden 7168, top-8, FP8 dispatch, BF16 combine, 24 SMs.
  const EpDispatcherRates rates = stack_rates(EpDispatcher::deepep);
  auto bandwidth = [&](int ep, EpKernel kernel) {
    const Topology t = test::system_topology("hgx-h800", ep, 0, Precision::fp8);
    EpExchangeRequest r = request(EpDispatcher::deepep, kernel, kHidden * (kernel == EpKernel::dispatch ? kFp8 : 2.0),
                                  deepep_bench_router(ep));
    r.rates = rates;
    r.sms = 24;
    const EpExchangePlan p = plan_ep_exchange(t, range_group(0, ep), r, 0);
    // Intranode DeepEP reports NVLink bandwidth, internode the RDMA bottleneck.
    return (ep <= 8 ? p.logical_nvlink_bytes : p.logical_rdma_bytes) / p.seconds / 1e9;
  };
  const EpKernel D = EpKernel::dispatch, C = EpKernel::combine;
  test::check_published({{"intranode EP8 dispatch (source of nvlink_efficiency)", 153, bandwidth(8, D)},
         {"intranode EP8 combine (source of nvlink_efficiency)", 158, bandwidth(8, C)},
         // NVLink-forwarding bound (DEP285): the source of forward_sm_gbytes_per_s.
         {"internode EP16 dispatch (source of forward_sm_gbytes_per_s)", 43, bandwidth(16, D)},
         {"internode EP16 combine (3b1045d corrected e0eaaf9's 62 to this 43 the next day)", 43, bandwidth(16, C)},
         {"internode EP32 dispatch (source of rdma_efficiency)", 58, bandwidth(32, D)},
         {"internode EP32 combine (source of rdma_efficiency)", 57, bandwidth(32, C)},
         {"internode EP64 dispatch", 51, bandwidth(64, D)},
         {"internode EP64 combine", 50, bandwidth(64, C)}});
}

TEST_CASE("DeepEP's internode forwarding binds below the link on H200 as on H800", "[platform][ep][published]") {
  // DEP493 (user report, DeepEP a84a248): 2 nodes of 8 H200, CX7 400 Gb/s, 24 SMs, DeepEP's test
  // (4096 tokens, hidden 7168, top-8): combine 44.37, BF16 dispatch 40.89, FP8 dispatch 38.19 GB/s
  // (RDMA). H200's NVLink is 2.25x H800's, yet EP16 stays near H800's 43 GB/s: the forwarding
  // kernel binds, not the link. Checked against the rate taken from H800 (DEP-L, DEP285).
  const EpDispatcherRates rates = stack_rates(EpDispatcher::deepep);
  const Topology t = test::system_topology("hgx-h200", 16, 0, Precision::fp8);
  auto rdma = [&](EpKernel kernel, bool fp8) {
    EpExchangeRequest r = request(EpDispatcher::deepep, kernel, kHidden * (fp8 ? kFp8 : 2.0), deepep_bench_router(16));
    r.rates = rates;
    r.sms = 24;
    const EpExchangePlan p = plan_ep_exchange(t, range_group(0, 16), r, 0);
    return p.logical_rdma_bytes / p.seconds / 1e9;
  };
  test::check_published({{"H200 EP16 combine", 44.37, rdma(EpKernel::combine, false)},
                         {"H200 EP16 BF16 dispatch", 40.89, rdma(EpKernel::dispatch, false)},
                         // Slower than BF16 in the report, per byte; moesim's rate is per byte.
                         {"H200 EP16 FP8 dispatch", 38.19, rdma(EpKernel::dispatch, true), +12.5}});
}

TEST_CASE("DeepEP on GB200 NVL72 at EP32 reaches MLM-G's 400 / 190 GB/s with 24 SMs", "[platform][ep][published]") {
  const EpDispatcherRates rates = stack_rates(EpDispatcher::deepep);
  const Topology t = test::system_topology("gb200-nvl72", 32, 0, Precision::fp8);
  auto bandwidth = [&](EpKernel kernel) {
    EpExchangeRequest r = request(EpDispatcher::deepep, kernel, kHidden * 2, {256, 8, 8, 4});
    r.rates = rates;
    r.sms = 24;
    const EpExchangePlan p = plan_ep_exchange(t, range_group(0, 32), r, 0);
    return p.logical_nvlink_bytes / p.seconds / 1e9;
  };
  // The source of the SM rates: a consistency check of their derivation (latency included).
  test::check_published({{"dispatch, EP32, 24 SMs", 400, bandwidth(EpKernel::dispatch)},
         {"combine, EP32, 24 SMs", 190, bandwidth(EpKernel::combine)}});
}

TEST_CASE("HybridEP against its published GB200 and H100 tables", "[platform][ep][published]") {
  // HEP: 4096 tokens, hidden 7168, top-8 of 8 x ranks experts, uniform routing, kernel only.
  const EpDispatcherRates rates = stack_rates(EpDispatcher::hybridep);
  auto bandwidth = [&](const char* system, int ep, int sms, EpKernel kernel, bool bf16_dispatch = false) {
    const Topology t = test::system_topology(system, ep, 0, Precision::fp8);
    const bool fp8 = kernel == EpKernel::dispatch && !bf16_dispatch;
    EpExchangeRequest r = request(EpDispatcher::hybridep, kernel, kHidden * (fp8 ? kFp8 : 2.0), {8 * ep, 8, 1, 1});
    r.rates = rates;
    r.sms = sms;
    const EpExchangePlan p = plan_ep_exchange(t, range_group(0, ep), r, 0);
    return (p.two_hop ? p.logical_rdma_bytes : p.logical_nvlink_bytes) / p.seconds / 1e9;
  };
  const EpKernel D = EpKernel::dispatch, C = EpKernel::combine;
  test::check_published({
      // Where the link and SM limits are close, the kernel is slower than the harder of the two.
      {"GB200 EP8 16 SMs FP8 dispatch: link and SM times within 3 % of each other", 620.98, bandwidth("gb200-nvl72", 8, 16, D), +14.7},
      {"GB200 EP8 16 SMs combine", 684.27, bandwidth("gb200-nvl72", 8, 16, C)},
      {"GB200 EP8 32 SMs FP8 dispatch (link efficiency source)", 713.98, bandwidth("gb200-nvl72", 8, 32, D)},
      {"GB200 EP8 32 SMs combine", 737.13, bandwidth("gb200-nvl72", 8, 32, C)},
      {"GB200 EP16 32 SMs FP8 dispatch", 650.48, bandwidth("gb200-nvl72", 16, 32, D)},
      {"GB200 EP16 32 SMs combine", 666.26, bandwidth("gb200-nvl72", 16, 32, C)},
      {"GB200 EP24 32 SMs FP8 dispatch", 577.96, bandwidth("gb200-nvl72", 24, 32, D)},
      {"GB200 EP24 32 SMs combine", 639.80, bandwidth("gb200-nvl72", 24, 32, C)},
      {"GB200 EP32 16 SMs FP8 dispatch (per-copy SM time source)", 286.93, bandwidth("gb200-nvl72", 32, 16, D)},
      {"GB200 EP32 16 SMs combine (per-copy SM time source)", 547.25, bandwidth("gb200-nvl72", 32, 16, C)},
      {"GB200 EP32 32 SMs FP8 dispatch", 538.86, bandwidth("gb200-nvl72", 32, 32, D)},
      {"GB200 EP32 32 SMs combine (link efficiency source)", 605.15, bandwidth("gb200-nvl72", 32, 32, C)},
      {"GB200 EP36 32 SMs FP8 dispatch", 489.27, bandwidth("gb200-nvl72", 36, 32, D)},
      {"GB200 EP36 32 SMs combine", 596.99, bandwidth("gb200-nvl72", 36, 32, C)},
      // BF16 dispatch (the combine's backward in training): no scales, 2 copies per destination.
      {"GB200 EP8 16 SMs BF16 dispatch", 750.15, bandwidth("gb200-nvl72", 8, 16, D, true)},
      {"GB200 EP8 32 SMs BF16 dispatch", 764.03, bandwidth("gb200-nvl72", 8, 32, D, true)},
      {"GB200 EP16 32 SMs BF16 dispatch", 706.95, bandwidth("gb200-nvl72", 16, 32, D, true)},
      {"GB200 EP24 32 SMs BF16 dispatch", 665.97, bandwidth("gb200-nvl72", 24, 32, D, true)},
      {"GB200 EP32 16 SMs BF16 dispatch", 629.79, bandwidth("gb200-nvl72", 32, 16, D, true)},
      {"GB200 EP32 32 SMs BF16 dispatch", 642.23, bandwidth("gb200-nvl72", 32, 32, D, true)},
      {"GB200 EP36 32 SMs BF16 dispatch", 632.31, bandwidth("gb200-nvl72", 36, 32, D, true)},
      {"H100 EP32 (4 nodes) 8 SMs FP8 dispatch", 51.30, bandwidth("hgx-h100", 32, 8, D)},
      {"H100 EP32 8 SMs combine", 56.40, bandwidth("hgx-h100", 32, 8, C)},
      {"H100 EP32 16 SMs FP8 dispatch (RDMA source)", 55.35, bandwidth("hgx-h100", 32, 16, D)},
      {"H100 EP32 16 SMs combine (RDMA source)", 57.46, bandwidth("hgx-h100", 32, 16, C)},
      {"H100 EP64 (8 nodes) 8 SMs FP8 dispatch", 46.63, bandwidth("hgx-h100", 64, 8, D)},
      {"H100 EP64 8 SMs combine", 51.03, bandwidth("hgx-h100", 64, 8, C)},
      {"H100 EP64 16 SMs FP8 dispatch", 46.52, bandwidth("hgx-h100", 64, 16, D)},
      {"H100 EP64 16 SMs combine", 49.77, bandwidth("hgx-h100", 64, 16, C)},
      // Two nodes: NVLink-forwarding bound, at rates measured on GB200 (HybridEP's H100 NVLink rates
      // are not published), which do not carry over. The three fastest rows are NIC-bound in moesim.
      // The 4-SM combine left the 10 % band (-8.9 to -12.0 %) when the combine lost the probability
      // bytes its benchmark never sent: its per-SM rate, derived without them, is 7 % lower.
      {"H100 EP16 (2 nodes) 4 SMs FP8 dispatch", 34.00, bandwidth("hgx-h100", 16, 4, D), -22.3},
      {"H100 EP16 4 SMs combine", 52.00, bandwidth("hgx-h100", 16, 4, C), -12.0},
      {"H100 EP16 8 SMs FP8 dispatch", 62.00, bandwidth("hgx-h100", 16, 8, D), -14.8},
      {"H100 EP16 8 SMs combine", 68.00, bandwidth("hgx-h100", 16, 8, C), +26.5},
      {"H100 EP16 16 SMs FP8 dispatch", 68.48, bandwidth("hgx-h100", 16, 16, D), +20.8},
      {"H100 EP16 16 SMs combine", 62.95, bandwidth("hgx-h100", 16, 16, C), +36.7},
  });
}

TEST_CASE("HybridEP called as Megatron-Core 0.15 to 0.17 call it, against HEP's Torch API rows",
          "[platform][ep][published][release]") {
  // HEP: the same benchmark (GB200, 4096 tokens, hidden 7168, top-8, uniform), timed around the
  // end-to-end Python call. The 26.04 stack calls it so (hybridep_call torch_api); 26.06 calls the
  // kernels alone, whose rows the test above checks.
  RecipeSpec recipe;
  recipe.dispatcher = "hybridep";
  const StackSpec stack = config::load_stack("megatron-bridge-26.04", test::configs_dir());
  REQUIRE(stack.hybridep_call == "torch_api");
  const EpDispatcherRates api = ep_exchange_request(recipe, stack, ModelSpec{}).rates;
  auto bandwidth = [&](const EpDispatcherRates& rates, int ep, EpKernel kernel, bool fp8_dispatch = false,
                       int sms = 32) {
    const Topology t = test::system_topology("gb200-nvl72", ep, 0, Precision::fp8);
    const bool fp8 = kernel == EpKernel::dispatch && fp8_dispatch;
    EpExchangeRequest r = request(EpDispatcher::hybridep, kernel, kHidden * (fp8 ? kFp8 : 2.0), {8 * ep, 8, 1, 1});
    r.rates = rates;
    r.sms = sms;
    const EpExchangePlan p = plan_ep_exchange(t, range_group(0, ep), r, 0);
    return p.logical_nvlink_bytes / p.seconds / 1e9;
  };
  const EpKernel D = EpKernel::dispatch, C = EpKernel::combine;
  test::check_published({
      {"GB200 EP32 32 SMs BF16 dispatch, Torch API (share source)", 484.22, bandwidth(api, 32, D)},
      {"GB200 EP32 32 SMs combine, Torch API (share source)", 464.54, bandwidth(api, 32, C)},
      // One share per kernel: the FP8 dispatch's own is 0.729, its BF16 twin's 0.754 (the validated
      // runs dispatch in BF16) is what the file holds.
      {"GB200 EP32 32 SMs FP8 dispatch, Torch API", 392.70, bandwidth(api, 32, D, true), +10.1},
      {"GB200 EP8 32 SMs BF16 dispatch, Torch API", 545.71, bandwidth(api, 8, D)},
      {"GB200 EP8 32 SMs combine, Torch API", 568.94, bandwidth(api, 8, C)},
      {"GB200 EP16 32 SMs BF16 dispatch, Torch API", 523.48, bandwidth(api, 16, D)},
      {"GB200 EP16 32 SMs combine, Torch API", 521.55, bandwidth(api, 16, C)},
      {"GB200 EP24 32 SMs BF16 dispatch, Torch API", 507.32, bandwidth(api, 24, D)},
      {"GB200 EP24 32 SMs combine, Torch API", 483.76, bandwidth(api, 24, C)},
      {"GB200 EP36 32 SMs BF16 dispatch, Torch API", 479.02, bandwidth(api, 36, D)},
      {"GB200 EP36 32 SMs combine, Torch API", 447.89, bandwidth(api, 36, C)},
      // SM-bound under the per-copy law: the call's share slows each copy.
      {"GB200 EP32 16 SMs combine, Torch API", 423.19, bandwidth(api, 32, C, false, 16)},
      {"GB200 EP32 16 SMs BF16 dispatch, Torch API", 485.50, bandwidth(api, 32, D, false, 16)},
  });
  // The call's share of the kernel, whichever limit binds: the same exchange, 1/share as long.
  const EpDispatcherRates kernel = stack_rates(EpDispatcher::hybridep);
  CHECK(bandwidth(kernel, 32, D) / bandwidth(api, 32, D) == Approx(1 / stack.hybridep.dispatch.torch_api_share).epsilon(0.01));
  CHECK(bandwidth(kernel, 32, C) / bandwidth(api, 32, C) == Approx(1 / stack.hybridep.combine.torch_api_share).epsilon(0.01));
}

TEST_CASE("DeepEP V2 (NCCL Gin) against its published table, at the rates of the what-if scenario",
          "[platform][ep][published]") {
  // DEP-2: 8,192 tokens per rank, hidden 7168, top-8 (taken over 256 experts, uniform: V2's test
  // has no group limit), FP8 dispatch and BF16 combine; "logical bandwidth" over (token, node)
  // pairs (internode) or received copies (intranode), the own included, of tokens counted with
  // their top-k indices and weights: 7,488 bytes in FP8, 14,368 in BF16 (tests/elastic/test_ep.py).
  // SM90 is taken as HGX H100: at EP 8 x 2 its 90 GB/s needs about 255 GB/s of NVLink
  // forwarding, more than an H800's port. SM100 is HGX B200; both with CX7 at 400 Gb/s.
  const Scenario what_if = test::bundled("scenarios/hgx-h100-1024-ep64-deepep-v2.json");
  const EpDispatcherRates rates = ep_exchange_request(what_if.recipe, what_if.stack, ModelSpec{}).rates;
  auto bandwidth = [&](const char* system, int ep, int sms, EpKernel kernel) {
    const Topology t = test::system_topology(system, ep, 0, Precision::fp8);
    const bool dispatch = kernel == EpKernel::dispatch;
    EpExchangeRequest r = request(EpDispatcher::deepep, kernel, kHidden * (dispatch ? kFp8 : 2.0), {256, 8, 1, 1});
    r.tokens = 8192;
    r.rates = rates;
    r.sms = sms;
    const EpExchangePlan p = plan_ep_exchange(t, range_group(0, ep), r, 0);
    const double counted_per_moesim_byte = (dispatch ? 7488.0 : 14368.0) / r.token_bytes;
    return (p.two_hop ? p.logical_rdma_bytes : p.logical_nvlink_bytes) * counted_per_moesim_byte / p.seconds / 1e9;
  };
  const EpKernel D = EpKernel::dispatch, C = EpKernel::combine;
  test::check_published({
      {"B200 EP8 64 SMs dispatch (source of nvlink_efficiency)", 726, bandwidth("hgx-b200", 8, 64, D)},
      {"B200 EP8 64 SMs combine (source of nvlink_efficiency)", 740, bandwidth("hgx-b200", 8, 64, C)},
      {"B200 EP8 24 SMs dispatch (source of sm_gbytes_per_s)", 643, bandwidth("hgx-b200", 8, 24, D)},
      {"B200 EP8 24 SMs combine (source of sm_gbytes_per_s)", 675, bandwidth("hgx-b200", 8, 24, C)},
      {"H100 EP 8 x 2 12 SMs dispatch (source of rdma_efficiency)", 90, bandwidth("hgx-h100", 16, 12, D)},
      {"B200 EP 8 x 2 12 SMs combine (source of rdma_efficiency)", 91, bandwidth("hgx-b200", 16, 12, C)},
      {"B200 EP 8 x 2 12 SMs dispatch", 90, bandwidth("hgx-b200", 16, 12, D)},
      {"H100 EP 8 x 4 6 SMs dispatch", 61, bandwidth("hgx-h100", 32, 6, D)},
      {"H100 EP 8 x 4 6 SMs combine", 61, bandwidth("hgx-h100", 32, 6, C)},
      // Slower than B200's 91 on the same NIC; at the rates above neither H100's NVLink (313 GB/s
      // at V2's B200 efficiency) nor its 12 SMs (295 GB/s) bind the 255 GB/s it forwards.
      {"H100 EP 8 x 2 12 SMs combine", 81, bandwidth("hgx-h100", 16, 12, C), +12.2},
  });
}
