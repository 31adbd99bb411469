#pragma once
// Progress of a batch of jobs (a sweep's points, a search's simulations) on stderr: a bar
// redrawn in place on a terminal, one plain line per finished job otherwise (logs of batch jobs,
// CI).
#include <chrono>
#include <cstdio>
#include <string>

namespace moesim::batch {

class Progress {
 public:
  // `command` starts each plain line ("sweep"); `unit` names the jobs on the bar ("points").
  Progress(int total, std::string command, std::string unit, bool terminal, std::FILE* out = stderr);
  // One more job finished; `what` says which and how it went (plain lines only).
  void job_done(const std::string& what);
  void finish();  // ends the bar's line

  static bool stderr_is_terminal();

 private:
  int total_;
  int done_ = 0;
  std::string command_, unit_;
  bool terminal_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace moesim::batch
