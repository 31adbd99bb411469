#include "moesim/sweep/run.hpp"

#include <algorithm>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/driver/work_estimate.hpp"
#include "moesim/sweep/point.hpp"
#include "moesim/sweep/samples.hpp"
#include "moesim/sweep/worker_pool.hpp"

namespace moesim::sweep {

Json run_point(const Point& p, const SweepOptions& options, int sample) {
  std::optional<Scenario> s;
  try {
    s = sample_scenario(point_scenario(p, options.configs_dir, options.calibration_overlays), sample);
    driver::RunOptions ro;
    ro.configs_dir = options.configs_dir.string();
    ro.engine.fidelity = options.fidelity;
    ro.engine.sampled = options.samples > 1;
    return result_row(p, driver::run_scenario(*s, ro));
  } catch (const ConfigError& e) {
    return failed_row(p, kStatusInvalid, e.what(), s ? &*s : nullptr);
  } catch (const InfeasibleError& e) {
    return failed_row(p, kStatusInfeasible, e.what(), s ? &*s : nullptr);
  }
}

batch::BatchEstimate estimate_sweep(const SweepSpec& spec, const SweepOptions& options) {
  batch::BatchEstimate e;
  e.command = "sweep";
  e.items = "points";
  e.breakdown = point_factors(spec);
  e.count = count_points(spec);
  std::uint64_t mine = e.count;
  if (options.shard && e.count != batch::kCountSaturated) {
    const auto n = static_cast<std::uint64_t>(options.shard->count), i = static_cast<std::uint64_t>(options.shard->index);
    mine = e.count / n + (i < e.count % n ? 1 : 0);  // points i, i + n, ...
  }
  e.work = options.shard ? "simulations (this shard's points x samples)" : "simulations (points x samples)";
  e.work_items = batch::saturating_multiply(mine, static_cast<std::uint64_t>(std::max(1, options.samples)));
  e.workers = options.jobs > 0 ? options.jobs : available_cores();
  e.memory_bytes = static_cast<double>(e.count) * kBytesPerPoint;
  e.seconds = static_cast<double>(e.work_items) * kCoreSecondsPerSimulation / e.workers;
  return e;
}

void refuse_oversized_sweep(const SweepSpec& spec, const SweepOptions& options, bool force) {
  batch::refuse_oversized_batch(estimate_sweep(spec, options), kMaxSimulations, "docs/sweeps.md",
                                driver::available_memory_bytes(), force);
}

std::vector<std::filesystem::path> input_files(const SweepSpec& spec, const SweepOptions& options) {
  config::InputRecorder recorder;
  recorder.add(spec.file);
  for (const Point& p : expand(spec)) {
    if (options.shard && !options.shard->owns(p.index)) continue;
    try {
      const Scenario s = point_scenario(p, options.configs_dir, options.calibration_overlays);
      driver::RunOptions ro;
      ro.configs_dir = options.configs_dir.string();
      recorder.add(driver::calibration_path(s, ro));
    } catch (const ConfigError&) {
    } catch (const InfeasibleError&) {
    }
  }
  std::vector<std::filesystem::path> unique;
  for (const auto& f : recorder.files())
    if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
  return unique;
}

SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options) {
  const std::vector<Point> all = expand(spec);
  std::vector<Point> mine;
  std::vector<Json> rows;  // finished earlier, then in order of index with the new ones
  for (const Point& p : all) {
    if (options.shard && !options.shard->owns(p.index)) continue;
    if (const auto it = options.finished.find(p.index); it != options.finished.end()) rows.push_back(it->second);
    else mine.push_back(p);
  }

  SweepResult result = empty_result(spec, static_cast<int>(all.size()), options.shard);
  result.rows.resize(mine.size());
  // Rows travel from the workers as JSON text; doubles round-trip exactly, so a row is the
  // same whether it was computed here or in a worker.
  const int samples = std::max(1, options.samples);
  const auto job = [&](int k, int sample) { return run_point(mine[static_cast<std::size_t>(k)], options, sample).dump(); };
  const auto done = [&](int k, std::vector<std::string>& outputs) {
    const Point& p = mine[static_cast<std::size_t>(k)];
    std::vector<Json> seeds;
    for (const std::string& output : outputs) {
      if (output.rfind(kWorkerFailed, 0) == 0) {
        seeds.push_back(failed_row(p, kStatusError, output.substr(std::string(kWorkerFailed).size())));
        continue;
      }
      try {
        seeds.push_back(Json::parse(output));
      } catch (const Json::exception& e) {
        seeds.push_back(failed_row(p, kStatusError, std::string("unreadable worker result: ") + e.what()));
      }
    }
    Json row = combined_sample_row(seeds);
    if (options.on_point) options.on_point(row);
    result.rows[static_cast<std::size_t>(k)] = std::move(row);
  };
  run_samples_in_workers(static_cast<int>(mine.size()), samples,
                         options.jobs > 0 ? options.jobs : available_cores(), job, done, options.on_seed);
  for (Json& row : rows) result.rows.push_back(std::move(row));
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const Json& a, const Json& b) { return a["index"].get<int>() < b["index"].get<int>(); });
  fill_scaling_efficiency(result);
  return result;
}

}  // namespace moesim::sweep
