// Wall time of the collectives on the SimGrid platform (no asserts; numbers go to README.md).
//   bench_collectives [a2a64 | allreduce256 | folded10k | plans | all]   (default: all)
// Every measurement runs in its own child (one Engine per process) and prints what it measured,
// including its own peak RSS; /usr/bin/time -v on one scenario gives the largest child's too.
#include <chrono>
#include <functional>
#include <cstdio>
#include <string>
#include <vector>

#include "moesim/platform/collective.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/platform/nccl.hpp"
#include "moesim/platform/isolated_run.hpp"

namespace sg4 = simgrid::s4u;
using namespace moesim::platform;

namespace {

Topology gb300_like(int gpus, int gpus_per_domain) {
  Topology t;
  t.gpus = gpus;
  t.gpus_per_domain = gpus_per_domain;
  t.gpu_flop_per_s = 2.5e15;
  t.nvlink_bytes_per_s = 900e9;
  t.nvlink_latency_s = 1e-6;
  t.nic_bytes_per_s = 100e9;
  t.nic_latency_s = 1e-6;
  t.switch_latency_s = 0.5e-6;
  return t;
}

Group first_ranks(int n) {
  Group g;
  for (int r = 0; r < n; ++r) g.ranks.push_back(r);
  return g;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// VmHWM of this process: unlike getrusage in a forked child, it counts the pages shared with
// the parent (libraries, heap) that the child keeps resident.
double peak_rss_mb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
  std::fclose(f);
  return kb / 1024.0;
}

// `repeats` back-to-back collectives of every member of g on the full platform.
std::string bench_full(const char* name, const Topology& t, CollectiveKind kind, const Group& g, double bytes,
                       int repeats) {
  const auto t0 = std::chrono::steady_clock::now();
  auto engine = make_engine();
  auto platform = Platform::build(t, Fidelity::full);
  const double build_s = seconds_since(t0);
  Platform* p = platform.get();
  for (int r : g.ranks)
    sg4::Actor::create("rank" + std::to_string(r), p->host(r), [=] {
      for (int i = 0; i < repeats; ++i) run_collective(*p, kind, g, bytes, r, "bench");
    });
  const auto t1 = std::chrono::steady_clock::now();
  engine->run();
  const double run_s = seconds_since(t1);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%-13s full   %4zu ranks %-14s x%-6d build %.4f s, run %.4f s (%.3f ms per collective), "
                "simulated %.6f ms per collective (closed form %.6f), peak RSS %.0f MB\n",
                name, g.ranks.size(), std::string(to_string(kind)).c_str(), repeats, build_s, run_s,
                1e3 * run_s / repeats, 1e3 * sg4::Engine::get_clock() / repeats,
                1e3 * closed_form_seconds(t, kind, g, bytes), peak_rss_mb());
  return buf;
}

// One representative issuing 10,000 collectives back to back, cycling through the kinds on an
// EP group that spans 2 racks (so both tiers are used).
std::string folded10k() {
  const int collectives = 10000;
  const Topology t = gb300_like(1024, 64);
  const Group ep = first_ranks(128);
  const auto t0 = std::chrono::steady_clock::now();
  auto engine = make_engine();
  auto platform = Platform::build(t, Fidelity::folded, {0});
  const double build_s = seconds_since(t0);
  Platform* p = platform.get();
  const CollectiveKind kinds[] = {CollectiveKind::all_to_all, CollectiveKind::all_to_all, CollectiveKind::all_gather,
                                  CollectiveKind::reduce_scatter, CollectiveKind::all_reduce};
  double expected_s = 0;
  for (int i = 0; i < collectives; ++i) {
    const CollectiveKind k = kinds[i % 5];
    expected_s += closed_form_seconds(t, k, ep, k == CollectiveKind::all_to_all ? 2e6 : 64e6);
  }
  sg4::Actor::create("rep", p->host(0), [&] {
    for (int i = 0; i < collectives; ++i) {
      const CollectiveKind k = kinds[i % 5];
      run_collective(*p, k, ep, k == CollectiveKind::all_to_all ? 2e6 : 64e6, 0, "ep");
    }
  });
  const auto t1 = std::chrono::steady_clock::now();
  engine->run();
  const double run_s = seconds_since(t1);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%-13s folded 1 rep of 128 mixed kinds  x%-6d build %.4f s, run %.4f s (%.1f us per collective), "
                "simulated %.6f s (closed forms %.6f), peak RSS %.0f MB\n",
                "folded10k", collectives, build_s, run_s, 1e6 * run_s / collectives, sg4::Engine::get_clock(),
                expected_s, peak_rss_mb());
  return buf;
}

// The cost of planning, which the engine does once per distinct collective of a GPU: NCCL's
// choice among its algorithms and an EP dispatcher's plan (with the routing recursion).
std::string plans() {
  const int n = 20000;
  const Topology t = gb300_like(1024, 64);
  const Group ep = first_ranks(128);
  auto t0 = std::chrono::steady_clock::now();
  double sink = 0;
  for (int i = 0; i < n; ++i) sink += plan_collective(t, CollectiveKind::all_reduce, ep, 64e6 + i).seconds;
  const double nccl_s = seconds_since(t0);
  EpExchangeRequest r;
  r.dispatcher = EpDispatcher::hybridep;
  r.tokens = 4096;
  r.token_bytes = 7168 * 2;
  r.routing = {256, 8, 8, 4};
  r.sms = 32;
  r.rates = {{0.7, 17e9, 0.8}, {0.65, 33e9, 0.85}};
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) sink += plan_ep_exchange(t, ep, r, i % 128).seconds;
  const double ep_s = seconds_since(t0);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%-13s NCCL plan (128 ranks, 2 domains) %.1f us, EP plan (hybridep, DeepSeek-V3 routing) %.1f us "
                "[%g]\n",
                "plans", 1e6 * nccl_s / n, 1e6 * ep_s / n, sink > 0 ? 1.0 : 0.0);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  // Each entry runs in its own child: SimGrid allows one Engine per process.
  const Topology rack = gb300_like(72, 72);
  const Topology racks4 = gb300_like(256, 64);  // 4 NVL72 racks using 64 GPUs each
  const std::vector<std::pair<std::string, std::function<std::string()>>> scenarios = {
      {"a2a64", [&] { return bench_full("a2a64", rack, CollectiveKind::all_to_all, first_ranks(64), 4e6, 1); }},
      {"a2a64", [&] { return bench_full("a2a64", rack, CollectiveKind::all_to_all, first_ranks(64), 4e6, 100); }},
      {"allreduce256",
       [&] { return bench_full("allreduce256", racks4, CollectiveKind::all_reduce, first_ranks(256), 256e6, 1); }},
      {"allreduce256",
       [&] { return bench_full("allreduce256", racks4, CollectiveKind::all_reduce, first_ranks(256), 256e6, 10); }},
      {"folded10k", folded10k},
      {"plans", plans}};
  bool ran = false;
  for (const auto& [name, fn] : scenarios) {
    if (which != "all" && which != name) continue;
    std::fputs(run_isolated(fn).c_str(), stdout);
    std::fflush(stdout);
    ran = true;
  }
  if (!ran) {
    std::fprintf(stderr, "usage: %s [a2a64 | allreduce256 | folded10k | plans | all]\n", argv[0]);
    return 2;
  }
  return 0;
}
