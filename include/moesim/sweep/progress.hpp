#pragma once
// Progress of a running sweep on stderr: a bar redrawn in place on a terminal, one plain line
// per finished point otherwise (logs of batch jobs, CI).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "moesim/sweep/row.hpp"

namespace moesim::sweep {

class Progress {
 public:
  // `axis_columns` name each point in the plain lines. `terminal`: draw the bar.
  Progress(int total, std::vector<std::string> axis_columns, bool terminal, std::FILE* out = stderr);
  void point_done(const Json& row);
  void finish();  // ends the bar's line

  static bool stderr_is_terminal();

 private:
  int total_;
  int done_ = 0;
  std::vector<std::string> axis_columns_;
  bool terminal_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace moesim::sweep
