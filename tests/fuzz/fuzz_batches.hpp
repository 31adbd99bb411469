#pragma once
// The search and sweep targets: a search or sweep document through the reader the CLI uses
// (load_search_json, load_sweep_json), sized and refused as `moesim search` and `moesim sweep`
// do before any work (batch::refuse_oversized_batch), then expanded: the candidates or points
// enumerated (up to a bound per fuzzing iteration) and a sample of them loaded and checked as a
// worker would before it simulates. Nothing is simulated and no worker process is started.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_checks.hpp"
#include "moesim/search/run.hpp"
#include "moesim/search/screen.hpp"
#include "moesim/search/space.hpp"
#include "moesim/sweep/point.hpp"
#include "moesim/sweep/run.hpp"

namespace moesim::fuzz {

// Per fuzzing iteration: the candidates or points enumerated (the bundled searches' spaces hold
// 16,128 to 25,920 candidates), and how many of them are screened or loaded (about 10 and 50 ms
// each under the sanitizers: a few keep an iteration near a tenth of a second).
inline constexpr std::uint64_t kMaxFuzzCandidates = 30'000;
inline constexpr std::uint64_t kMaxFuzzPoints = 4'096;
inline constexpr std::size_t kScreenedCandidates = 4;
inline constexpr std::size_t kLoadedPoints = 4;

// Where a fuzzed search or sweep file stands: beside the bundled ones, so that their base
// scenarios ("../gb300-256-record.json") resolve as they do for the bundled files.
inline std::filesystem::path fuzz_file(const char* folder) {
  return std::filesystem::path(MOESIM_SOURCE_DIR) / "scenarios" / folder / label();
}

// `count` indices spread evenly over 0 .. n-1 (all of them when n <= count).
inline std::vector<std::size_t> spread(std::size_t n, std::size_t count) {
  std::vector<std::size_t> out;
  const std::size_t m = std::min(n, count);
  for (std::size_t k = 0; k < m; ++k) out.push_back(k * n / m);
  return out;
}

inline Outcome run_search(const nlohmann::json& document) {
  const search::SearchSpec spec = search::load_search_json(document, fuzz_file("search"));
  const Scenario base = sweep::point_scenario(search::base_point(spec), bundled_configs());
  check_scenario(base);
  const search::Space space = search::resolve_space(spec, base);
  batch::refuse_oversized_batch(search::estimate_search(space, 1), search::kMaxCandidates, "docs/search.md",
                                driver::available_memory_bytes(), /*force=*/false);
  const std::uint64_t count = search::count_candidates(space);
  if (count > kMaxFuzzCandidates) return Outcome::too_large;
  const std::vector<search::Candidate> candidates = search::enumerate(space);
  // The refusal sized the space by count_candidates: it must be what enumerate builds.
  require(candidates.size() == count,
          fmt::format("count_candidates {} != enumerated {} ({})", count, candidates.size(), search::axis_sizes(space)));
  for (std::size_t i : spread(candidates.size(), kScreenedCandidates)) {
    const search::Screened s = search::screen_one(base, candidates[i], bundled_calibration());
    // The screen turns an estimate's unexpected failure into an "error: ..." rejection so that
    // one candidate does not stop a search; for the fuzzer it is a crash like any other.
    for (const std::string& why : s.rejections)
      require(why.rfind("error:", 0) != 0, "screening " + search::describe(candidates[i]) + " failed: " + why);
    if (s.survives())
      require(std::isfinite(s.estimate.step_time_s) && s.estimate.step_time_s > 0 &&
                  std::isfinite(s.estimate.tflops_per_gpu),
              "a surviving candidate without a finite estimate: " + search::describe(candidates[i]));
  }
  return Outcome::expanded;
}

// One point as a sweep worker loads it before the simulation; a point that does not load is a
// row saying why, not a failure of the sweep.
inline void load_point(const sweep::Point& p, bool with_setup) {
  try {
    const Scenario s = sweep::point_scenario(p, bundled_configs());
    check_scenario(s);
    const plan::Layout l = plan::make_layout(s);
    check_layout(s, l);
    if (with_setup) check_setup(s, l);
  } catch (const ConfigError& e) {
    check_config_error(e);
  } catch (const InfeasibleError& e) {
    check_infeasible_error(e);
  }
}

inline Outcome run_sweep(const nlohmann::json& document) {
  const sweep::SweepSpec spec = sweep::load_sweep_json(document, fuzz_file("sweeps"));
  sweep::SweepOptions options;
  options.jobs = 1;
  options.configs_dir = bundled_configs();
  sweep::refuse_oversized_sweep(spec, options, /*force=*/false);
  const std::uint64_t count = sweep::count_points(spec);
  if (count > kMaxFuzzPoints) return Outcome::too_large;
  const std::vector<sweep::Point> points = sweep::expand(spec);
  require(points.size() == count, fmt::format("count_points {} != expanded {} ({})", count, points.size(),
                                              sweep::point_factors(spec)));
  const std::size_t columns = spec.axis_columns().size();
  const sweep::Axis* gpu_axis = spec.gpu_axis();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const sweep::Point& p = points[i];
    require(p.index == static_cast<int>(i) && p.axis_values.size() == columns,
            fmt::format("point {}: index {} and {} axis values for {} columns", i, p.index, p.axis_values.size(),
                        columns));
    // The GPU count a point runs at is the one its row shows in the GPU-count column.
    if (gpu_axis == nullptr) continue;
    for (const auto& [column, value] : p.axis_values)
      if (column == gpu_axis->name)
        require(p.gpus && nlohmann::json(*p.gpus) == value,
                fmt::format("point {} runs at {} GPUs, its {} column says {}", i, p.gpus ? *p.gpus : 0, column,
                            value.dump()));
  }
  bool first = true;
  for (std::size_t i : spread(points.size(), kLoadedPoints)) {
    load_point(points[i], first);  // the step program of one point (the others share its cost code)
    first = false;
  }
  return Outcome::expanded;
}

}  // namespace moesim::fuzz
