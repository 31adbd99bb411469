#include "moesim/search/run.hpp"

#include <algorithm>

#include "moesim/batch/worker_pool.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/driver/work_estimate.hpp"
#include "moesim/search/screen.hpp"
#include "moesim/search/space.hpp"
#include "moesim/sweep/point.hpp"
#include "moesim/sweep/run.hpp"

namespace moesim::search {

sweep::Point base_point(const SearchSpec& spec) {
  sweep::Point p;
  p.base = spec.base;
  p.patches = spec.set;
  p.origins = spec.set_origins;  // a typo in "set" is the search file's, not the base's
  p.gpus = spec.gpus;
  p.scaling = sweep::GpuScaling::weak;
  return p;
}

namespace {

// Result columns a candidate row takes from the simulation's sweep row, in order.
const std::vector<std::string> kSimulatedColumns = {
    "status", "reason", "tflops_per_gpu", "tokens_per_s_per_gpu", "step_time_s", "mfu", "dp", "microbatches",
    "max_memory_per_gpu_bytes", "usable_memory_per_gpu_bytes"};
const std::vector<std::string> kBreakdownColumns = {
    "compute_s", "recompute_s", "host_overhead_s", "exposed_ep_dispatch_s", "exposed_ep_combine_s",
    "exposed_tp_s", "exposed_pp_s", "exposed_dp_s", "bubble_s", "optimizer_s"};

Json candidate_row(int index, int estimate_rank, bool reference, const Candidate& c, const Screened& s, const Json& sim) {
  Json row;
  row["rank"] = nullptr;
  row["index"] = index;
  row["estimate_rank"] = estimate_rank;
  row["reference"] = reference;
  row["layout"] = layout_json(c);
  row["recipe"] = recipe_json(c);
  for (const std::string& col : kSimulatedColumns) row[col] = sim.contains(col) ? sim[col] : Json(nullptr);
  const bool ok = sweep::has_status(sim, sweep::kStatusOk);
  row["memory_headroom_bytes"] =
      ok ? Json(sim["usable_memory_per_gpu_bytes"].get<double>() - sim["max_memory_per_gpu_bytes"].get<double>())
         : Json(nullptr);
  row["fits_in_memory"] = sim.contains("fits_in_memory") ? sim["fits_in_memory"] : Json(nullptr);
  for (const std::string& col : kBreakdownColumns) row[col] = sim.contains(col) ? sim[col] : Json(nullptr);
  row["pareto_front"] = nullptr;
  row["estimated_step_time_s"] = s.estimate.step_time_s;
  row["estimated_tflops_per_gpu"] = s.estimate.tflops_per_gpu;
  return row;
}

sweep::SweepOptions simulation_options(const SearchOptions& o) {
  sweep::SweepOptions so;
  so.configs_dir = o.configs_dir;
  so.calibration_overlays = o.calibration_overlays;
  so.fidelity = o.fidelity;
  return so;
}

Scenario base_scenario(const SearchSpec& spec, const SearchOptions& options) {
  return sweep::point_scenario(base_point(spec), options.configs_dir, options.calibration_overlays);
}

cost::KernelCalibration calibration(const Scenario& base, const SearchOptions& options) {
  driver::RunOptions ro;
  ro.configs_dir = options.configs_dir.string();
  return driver::load_kernel_calibration(base, ro);
}

}  // namespace

batch::BatchEstimate estimate_search(const Space& space, int jobs) {
  batch::BatchEstimate e;
  e.command = "search";
  e.items = e.work = "candidates";
  e.breakdown = "axes: " + axis_sizes(space);
  e.count = e.work_items = count_candidates(space);
  e.workers = std::max(1, jobs);
  e.memory_bytes = static_cast<double>(e.count) * kBytesPerCandidate;
  e.seconds = static_cast<double>(e.count) * kCoreSecondsPerCandidate / e.workers;
  return e;
}

SearchResult run_search(const SearchSpec& spec, const SearchOptions& options) {
  const Scenario base = base_scenario(spec, options);
  const Space space = resolve_space(spec, base);
  const int jobs = options.jobs > 0 ? options.jobs : batch::available_cores();
  batch::refuse_oversized_batch(estimate_search(space, jobs), kMaxCandidates, "docs/search.md",
                                driver::available_memory_bytes(), options.force);
  const std::vector<Candidate> candidates = enumerate(space);
  const auto on_chunk = [&](int done, int total) {
    if (options.on_screening) options.on_screening(done, total, static_cast<int>(candidates.size()));
  };
  const std::vector<Screened> screened = screen_all(base, candidates, calibration(base, options), jobs, on_chunk);

  SearchResult r;
  r.name = spec.name;
  r.description = spec.description;
  r.base = spec.base.name;
  r.system = base.system.name;
  r.model = base.model.name;
  r.gpus = base.gpus;
  r.evaluated = static_cast<int>(candidates.size());
  r.shard = options.shard;
  std::vector<int> survivors;
  for (int i = 0; i < r.evaluated; ++i) {
    const Screened& s = screened[static_cast<std::size_t>(i)];
    if (s.survives()) survivors.push_back(i);
    for (const std::string& why : s.rejections) ++r.rejected[why];
  }
  r.survivors = static_cast<int>(survivors.size());
  r.rejected_candidates = r.evaluated - r.survivors;
  // Best estimate first; candidate order breaks ties, so the ranking is a function of the space.
  std::stable_sort(survivors.begin(), survivors.end(), [&](int a, int b) {
    return screened[static_cast<std::size_t>(a)].estimate.tflops_per_gpu >
           screened[static_cast<std::size_t>(b)].estimate.tflops_per_gpu;
  });
  std::vector<int> estimate_rank(candidates.size(), 0);
  for (std::size_t k = 0; k < survivors.size(); ++k) estimate_rank[static_cast<std::size_t>(survivors[k])] = static_cast<int>(k + 1);

  const Candidate reference = reference_candidate(base);
  const auto ref = std::find(candidates.begin(), candidates.end(), reference);
  if (ref != candidates.end()) {
    r.reference = static_cast<int>(ref - candidates.begin());
    r.reference_rejections = screened[static_cast<std::size_t>(*r.reference)].rejections;
  }
  const int simulate = std::min(options.simulate.value_or(spec.simulate), r.survivors);
  r.plan.assign(survivors.begin(), survivors.begin() + simulate);
  r.best_estimates = simulate;
  if (r.reference && r.reference_rejections.empty() &&
      std::find(r.plan.begin(), r.plan.end(), *r.reference) == r.plan.end())
    r.plan.push_back(*r.reference);
  if (options.on_screened) options.on_screened(r);

  std::vector<int> mine;  // plan positions this shard simulates
  for (int k = 0; k < static_cast<int>(r.plan.size()); ++k)
    if (!options.shard || options.shard->owns(k)) mine.push_back(k);
  const sweep::SweepOptions so = simulation_options(options);
  const auto row_for = [&](int k, const Json& sim) {
    const int index = r.plan[static_cast<std::size_t>(mine[static_cast<std::size_t>(k)])];
    const auto i = static_cast<std::size_t>(index);
    return candidate_row(index, estimate_rank[i], r.reference && *r.reference == index, candidates[i], screened[i], sim);
  };
  const auto job = [&](int k) {
    sweep::Point p = base_point(spec);
    const int index = r.plan[static_cast<std::size_t>(mine[static_cast<std::size_t>(k)])];
    p.index = index;
    for (auto& patch : patches(candidates[static_cast<std::size_t>(index)])) p.patches.push_back(std::move(patch));
    // Rows travel as JSON text; doubles round-trip exactly.
    return row_for(k, sweep::run_point(p, so)).dump();
  };
  r.candidates.resize(mine.size());
  const auto done = [&](int k, const batch::WorkerOutcome& outcome) {
    Json row;
    try {
      if (outcome.ok) row = Json::parse(outcome.output);
    } catch (const Json::exception& e) {
      row = row_for(k, {{"status", sweep::kStatusError}, {"reason", std::string("unreadable worker result: ") + e.what()}});
    }
    if (!outcome.ok) row = row_for(k, {{"status", sweep::kStatusError}, {"reason", outcome.output}});
    if (options.on_simulated) options.on_simulated(row);
    r.candidates[static_cast<std::size_t>(k)] = std::move(row);
  };
  batch::run_in_workers(static_cast<int>(mine.size()), jobs, job, done);
  rank_candidates(r);
  return r;
}

std::vector<std::filesystem::path> input_files(const SearchSpec& spec, const SearchOptions& options) {
  config::InputRecorder recorder;
  recorder.add(spec.file);
  const Scenario base = base_scenario(spec, options);
  driver::RunOptions ro;
  ro.configs_dir = options.configs_dir.string();
  recorder.add(driver::calibration_path(base, ro));
  std::vector<std::filesystem::path> unique;
  for (const auto& f : recorder.files())
    if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
  return unique;
}

SearchSpec on_system(const SearchSpec& spec, const std::string& system) {
  SearchSpec out = spec;
  out.set.emplace_back("system", system);
  out.set_origins.push_back({"--compare-systems", "$", "$"});
  out.name = spec.name + " [" + system + "]";
  return out;
}

}  // namespace moesim::search
