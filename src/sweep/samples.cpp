#include "moesim/sweep/samples.hpp"

#include "moesim/sweep/worker_pool.hpp"

namespace moesim::sweep {

Scenario sample_scenario(Scenario s, int k) {
  s.seed += k;
  return s;
}

void run_samples_in_workers(int points, int samples, int jobs, const std::function<std::string(int, int)>& job,
                            const std::function<void(int, std::vector<std::string>&)>& done,
                            const std::function<void()>& on_seed) {
  std::vector<std::vector<std::string>> results(static_cast<std::size_t>(points),
                                                std::vector<std::string>(static_cast<std::size_t>(samples)));
  std::vector<int> remaining(static_cast<std::size_t>(points), samples);
  run_in_workers(
      points * samples, jobs, [&](int k) { return job(k / samples, k % samples); },
      [&](int k, const WorkerOutcome& outcome) {
        const auto point = static_cast<std::size_t>(k / samples);
        results[point][static_cast<std::size_t>(k % samples)] =
            outcome.ok ? outcome.output : std::string(kWorkerFailed) + outcome.output;
        if (on_seed) on_seed();
        if (--remaining[point] == 0) done(static_cast<int>(point), results[point]);
      });
}

}  // namespace moesim::sweep
