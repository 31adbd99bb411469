// The worker pool under sweeps: results in job order whatever the completion order, and a
// failing or crashing job reported as such without stopping the others.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <stdexcept>

#include "moesim/sweep/worker_pool.hpp"

using moesim::sweep::run_in_workers;
using moesim::sweep::WorkerOutcome;

TEST_CASE("worker results come back in job order", "[sweep]") {
  std::vector<int> finished;
  const auto outcomes = run_in_workers(
      6, 3,
      [](int i) {
        ::usleep(static_cast<useconds_t>((6 - i) * 20000));  // later jobs finish first
        return std::string(static_cast<std::size_t>(i) * 30000, 'x') + std::to_string(i);  // > a pipe buffer
      },
      [&](int i, const WorkerOutcome&) { finished.push_back(i); });
  REQUIRE(outcomes.size() == 6);
  for (int i = 0; i < 6; ++i) {
    CHECK(outcomes[static_cast<std::size_t>(i)].ok);
    CHECK(outcomes[static_cast<std::size_t>(i)].output.size() == static_cast<std::size_t>(i) * 30000 + 1);
  }
  // Reported as they complete: with 3 workers, job 0 (120 ms) ends after job 2 (80 ms).
  REQUIRE(finished.size() == 6);
  CHECK(std::is_permutation(finished.begin(), finished.end(), std::vector<int>{0, 1, 2, 3, 4, 5}.begin()));
  CHECK(finished.front() != 0);
}

TEST_CASE("a throwing or crashing job is reported, the others still run", "[sweep]") {
  const auto outcomes = run_in_workers(
      3, 2,
      [](int i) -> std::string {
        if (i == 0) throw std::runtime_error("no such thing");
        if (i == 1) std::raise(SIGSEGV);
        return "fine";
      },
      nullptr);
  CHECK_FALSE(outcomes[0].ok);
  CHECK(outcomes[0].output == "no such thing");
  CHECK_FALSE(outcomes[1].ok);
  CHECK(outcomes[1].output == "worker killed by signal 11");
  CHECK(outcomes[2].ok);
  CHECK(outcomes[2].output == "fine");
}
