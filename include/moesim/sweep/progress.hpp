#pragma once
// Progress of a running sweep on stderr (batch/progress.hpp), one job per point.
#include <cstdio>
#include <string>
#include <vector>

#include "moesim/batch/progress.hpp"
#include "moesim/sweep/row.hpp"

namespace moesim::sweep {

class Progress {
 public:
  // `axis_columns` name each point in the plain lines. `terminal`: draw the bar.
  Progress(int total, std::vector<std::string> axis_columns, bool terminal, std::FILE* out = stderr);
  void point_done(const Json& row);
  void finish() { progress_.finish(); }  // ends the bar's line

  static bool stderr_is_terminal() { return batch::Progress::stderr_is_terminal(); }

 private:
  std::vector<std::string> axis_columns_;
  batch::Progress progress_;
};

}  // namespace moesim::sweep
