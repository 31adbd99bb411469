#include "moesim/batch/progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace moesim::batch {

namespace {

constexpr int kBarWidth = 30;

}  // namespace

Progress::Progress(int total, std::string command, std::string unit, bool terminal, std::FILE* out)
    : total_(total), command_(std::move(command)), unit_(std::move(unit)), terminal_(terminal), out_(out) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::job_done(const std::string& what) {
  ++done_;
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (terminal_) {
    const int filled = total_ > 0 ? kBarWidth * done_ / total_ : kBarWidth;
    fmt::print(out_, "\r[{}{}] {}/{} {}, {:.1f} s", std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(kBarWidth - filled), '.'), done_, total_, unit_, elapsed_s);
    std::fflush(out_);
    return;
  }
  fmt::print(out_, "{}: {}/{} done after {:.1f} s: {}\n", command_, done_, total_, elapsed_s, what);
  std::fflush(out_);
}

void Progress::finish() {
  if (terminal_ && done_ > 0) fmt::print(out_, "\n");
}

}  // namespace moesim::batch
