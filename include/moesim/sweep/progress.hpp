#pragma once
// Progress of a running sweep on stderr (batch/progress.hpp), one job per point; with --samples,
// one job per seed (a bar of seeds, a plain line per finished point, and with `seed_lines` a
// plain line every few seconds in between).
#include <cstdio>
#include <string>
#include <vector>

#include "moesim/batch/progress.hpp"
#include "moesim/sweep/row.hpp"

namespace moesim::sweep {

class Progress {
 public:
  // `axis_columns` name each point in the plain lines. `terminal`: draw the bar.
  Progress(int total, std::vector<std::string> axis_columns, bool terminal, std::FILE* out = stderr,
           int samples = 1, bool seed_lines = false);
  void point_done(const Json& row);
  void seed_done();  // with samples > 1: one seed of a point finished
  void finish() { progress_.finish(); }  // ends the bar's line

  static bool stderr_is_terminal() { return batch::Progress::stderr_is_terminal(); }

 private:
  std::vector<std::string> axis_columns_;
  bool per_seed_;
  batch::Progress progress_;
};

}  // namespace moesim::sweep
