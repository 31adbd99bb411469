#pragma once
// Progress of a batch of jobs (a sweep's points, a search's simulations or screening slices, the
// seeds of --samples, the steps of validate) on stderr: a bar redrawn in place on a terminal,
// plain lines otherwise (logs of batch jobs, CI). Text from user files (names, reasons) is shown
// with its control characters escaped (util/terminal_text.hpp). Never on stdout: outputs stay
// the same whether progress is shown or not.
#include <chrono>
#include <cstdio>
#include <string>

namespace moesim::batch {

class Progress {
 public:
  // `command` starts each plain line ("sweep"); `unit` names the jobs ("points").
  // `tick_lines_every_s`: how often tick() writes a plain line (0: never; the last job always
  // writes one when it is > 0), so that 100,000 seeds do not flood a log.
  Progress(long long total, std::string command, std::string unit, bool terminal, std::FILE* out = stderr,
           double tick_lines_every_s = 0);
  // One more job finished; `what` says which and how it went (a plain line for each).
  void job_done(const std::string& what);
  // One more job finished, not worth a line of its own (a seed of a sampled point).
  void tick();
  // A plain line about the jobs so far, without counting one (a point whose seeds are all in).
  void note(const std::string& what);
  void finish();  // ends the bar's line

  static bool stderr_is_terminal();

 private:
  double elapsed_s() const;
  void draw_bar(bool force);
  void line(const std::string& what);

  long long total_;
  long long done_ = 0;
  std::string command_, unit_;
  bool terminal_;
  std::FILE* out_;
  double tick_lines_every_s_;
  double last_output_s_ = -1;  // when the bar or a tick line was last written
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace moesim::batch
