// The worker pool under sweeps: results in job order whatever the completion order, and a
// failing or crashing job reported as such without stopping the others.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "moesim/sweep/worker_pool.hpp"

using moesim::sweep::run_in_workers;
using moesim::sweep::WorkerOutcome;

TEST_CASE("worker results come back in job order", "[sweep]") {
  // Job 0 finishes only after job 2 has been reaped (its pid gone), so the completion order is
  // fixed by the jobs themselves, not by sleeps a loaded machine may stretch.
  char marker[] = "/tmp/moesim-workers-XXXXXX";
  const int marker_fd = ::mkstemp(marker);
  REQUIRE(marker_fd >= 0);
  ::close(marker_fd);
  std::vector<int> finished;
  const auto outcomes = run_in_workers(
      6, 3,
      [&](int i) {
        if (i == 2) std::ofstream(marker) << ::getpid();
        if (i == 0) {
          for (int waited_ms = 0; waited_ms < 60000; ++waited_ms) {
            long job2_pid = 0;
            std::ifstream(marker) >> job2_pid;
            if (job2_pid > 0 && ::kill(static_cast<pid_t>(job2_pid), 0) != 0) break;
            ::usleep(1000);
          }
        }
        return std::string(static_cast<std::size_t>(i) * 30000, 'x') + std::to_string(i);  // > a pipe buffer
      },
      [&](int i, const WorkerOutcome&) { finished.push_back(i); });
  std::remove(marker);
  REQUIRE(outcomes.size() == 6);
  for (int i = 0; i < 6; ++i) {
    CHECK(outcomes[static_cast<std::size_t>(i)].ok);
    CHECK(outcomes[static_cast<std::size_t>(i)].output.size() == static_cast<std::size_t>(i) * 30000 + 1);
  }
  // Reported as they complete: job 2 before job 0.
  REQUIRE(finished.size() == 6);
  CHECK(std::is_permutation(finished.begin(), finished.end(), std::vector<int>{0, 1, 2, 3, 4, 5}.begin()));
  CHECK(std::find(finished.begin(), finished.end(), 2) < std::find(finished.begin(), finished.end(), 0));
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
