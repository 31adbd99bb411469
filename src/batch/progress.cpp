#include "moesim/batch/progress.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "moesim/util/terminal_text.hpp"

namespace moesim::batch {

namespace {

constexpr int kBarWidth = 30;
constexpr double kBarRedrawEvery_s = 0.1;  // a bar redrawn per job of 100,000 would hog the terminal

}  // namespace

Progress::Progress(long long total, std::string command, std::string unit, bool terminal, std::FILE* out,
                   double tick_lines_every_s)
    : total_(total),
      command_(std::move(command)),
      unit_(std::move(unit)),
      terminal_(terminal),
      out_(out),
      tick_lines_every_s_(tick_lines_every_s) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::draw_bar(bool force) {
  const double now = elapsed_s();
  if (!force && done_ < total_ && last_output_s_ >= 0 && now - last_output_s_ < kBarRedrawEvery_s) return;
  last_output_s_ = now;
  drawn_ = true;
  const auto filled = static_cast<int>(total_ > 0 ? kBarWidth * std::min(done_, total_) / total_ : kBarWidth);
  fmt::print(out_, "\r[{}{}] {}/{} {}, {:.1f} s", std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(kBarWidth - filled), '.'), done_, total_, unit_, now);
  std::fflush(out_);
}

void Progress::line(const std::string& what) {
  fmt::print(out_, "{}: {}/{} {} done after {:.1f} s{}{}\n", command_, done_, total_, unit_, elapsed_s(),
             what.empty() ? "" : ": ", util::terminal_safe(what));
  std::fflush(out_);
}

void Progress::job_done(const std::string& what) {
  ++done_;
  if (terminal_) return draw_bar(true);
  // The historical plain line of a finished job: "sweep: 3/12 done after 4.2 s: point 2 (...)".
  fmt::print(out_, "{}: {}/{} done after {:.1f} s: {}\n", command_, done_, total_, elapsed_s(), util::terminal_safe(what));
  std::fflush(out_);
}

void Progress::tick() {
  ++done_;
  if (terminal_) return draw_bar(false);
  if (tick_lines_every_s_ <= 0) return;
  const double now = elapsed_s();
  if (done_ < total_ && last_output_s_ >= 0 && now - last_output_s_ < tick_lines_every_s_) return;
  last_output_s_ = now;
  line("");
}

void Progress::note(const std::string& what) {
  if (!terminal_) line(what);
}

void Progress::finish() {
  if (terminal_ && drawn_) fmt::print(out_, "\n");
}

}  // namespace moesim::batch
