#pragma once
// --samples N: a point simulated at N seeds (the scenario's seed and the N - 1 after it), each in
// its own worker process (worker_pool.hpp), summarised as the mean and a 95 % confidence interval
// of the mean (util/statistics.hpp). Seed k draws the same speed for GPU r
// at every GPU count, so seed k at 1,024 GPUs is seed k's 256-GPU cluster grown by 768 GPUs:
// scaling efficiencies are taken per seed and then summarised.
#include <functional>
#include <string>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::sweep {

// Sample k of a --samples run: the scenario with seed + k.
Scenario sample_scenario(Scenario s, int k);

// Runs job(point, sample) for every point and sample in workers (`jobs` at once) and hands each
// point's results, in sample order, to done(point, results) as soon as its last one is in.
// A failed job's result is the worker's message, prefixed by kWorkerFailed. `on_seed`, if
// given, runs here as each job finishes (progress of a point's seeds).
inline constexpr const char* kWorkerFailed = "\x01worker failed: ";
void run_samples_in_workers(int points, int samples, int jobs,
                            const std::function<std::string(int point, int sample)>& job,
                            const std::function<void(int point, std::vector<std::string>& results)>& done,
                            const std::function<void()>& on_seed = nullptr);

}  // namespace moesim::sweep
