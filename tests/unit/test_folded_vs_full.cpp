// Folded fidelity against full fidelity on every bundled scenario of 256 GPUs (issue 40): with
// identical GPUs and balanced routing every rank of a role does the same work, so the folded
// representatives must give the full simulation's step within 0.5 %; with the scenario's own
// variability the folded expectation must be the mean of full fidelity's seeds within 0.5 %.
// Full fidelity simulates every GPU (about 1 s each in a Release build): [end-to-end], left out
// of the sanitized run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "scenario_fixtures.hpp"

using namespace moesim;

namespace {

// The bundled scenarios of 256 GPUs.
std::vector<Scenario> bundled_256() {
  std::vector<std::filesystem::path> files;
  for (const char* folder : {"scenarios", "scenarios/frameworks"})
    for (const auto& entry : std::filesystem::directory_iterator(test::repo() / folder))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<Scenario> found;
  for (const auto& file : files) {
    Scenario s = config::load_scenario(file);
    if (s.gpus == 256) found.push_back(std::move(s));
  }
  return found;
}

driver::RunResult run_at(const Scenario& s, platform::Fidelity fidelity) {
  driver::RunOptions o;
  o.configs_dir = test::configs_dir().string();
  o.engine.fidelity = fidelity;
  return driver::run_scenario(s, o);
}
double step_s(const Scenario& s, platform::Fidelity fidelity) { return run_at(s, fidelity).metrics.step_time_s; }

}  // namespace

TEST_CASE("folded and full fidelity agree within 0.5 % on every bundled 256-GPU scenario", "[end-to-end][fidelity]") {
  int compared = 0;
  for (const Scenario& bundled : bundled_256()) {
    const Scenario s = test::identical_gpus(bundled);
    const driver::RunResult folded_run = run_at(s, platform::Fidelity::folded);
    const driver::RunResult full_run = run_at(s, platform::Fidelity::full);
    const double folded = folded_run.metrics.step_time_s, full = full_run.metrics.step_time_s;
    INFO(s.file << ": folded " << folded << " s, full " << full << " s");
    CHECK(full == Approx(folded).epsilon(0.005));
    // Each stage's observed GPU moves the bytes of every collective it runs, counted each time
    // (full fidelity keeps a collective's plan after its first run: the counting must not stop).
    REQUIRE(full_run.sim.stages.size() == folded_run.sim.stages.size());
    for (std::size_t k = 0; k < full_run.sim.stages.size(); ++k) {
      const engine::Traffic& a = full_run.sim.stages[k].traffic;
      const engine::Traffic& b = folded_run.sim.stages[k].traffic;
      INFO("stage " << k);
      CHECK(a.ep_nvlink_bytes + a.ep_nic_bytes == Approx(b.ep_nvlink_bytes + b.ep_nic_bytes).epsilon(1e-9));
      CHECK(a.other_nvlink_bytes + a.other_nic_bytes == Approx(b.other_nvlink_bytes + b.other_nic_bytes).epsilon(1e-9));
    }
    ++compared;
  }
  // gb200-256, gb300-256-ep64-two-racks, gb300-256-record, gb300-256-record-mbs2 and the
  // TorchTitan runs on 256 GPUs: the test must not pass by finding none.
  CHECK(compared >= 7);
}

TEST_CASE("the folded expectation is full fidelity's mean over seeds within 0.5 % with the bundled variability",
          "[end-to-end][fidelity]") {
  // The scenario's own GPU speed spread, kernel jitter and expert load: the folded fidelity
  // prices the expected slowest member of each synchronised stretch (order statistics), full
  // fidelity draws every GPU; the mean of six seeds (the scenario's and the five after it, as
  // `--samples 6`) must come within the same 0.5 %.
  constexpr int kSeeds = 6;
  int compared = 0;
  for (Scenario s : bundled_256()) {
    const double folded = step_s(s, platform::Fidelity::folded);
    double full_mean = 0;
    const int first_seed = s.seed;
    for (int k = 0; k < kSeeds; ++k) {
      s.seed = first_seed + k;
      full_mean += step_s(s, platform::Fidelity::full) / kSeeds;
    }
    INFO(s.file << ": folded " << folded << " s, full's mean " << full_mean << " s");
    CHECK(full_mean == Approx(folded).epsilon(0.005));
    ++compared;
  }
  CHECK(compared >= 7);
}
