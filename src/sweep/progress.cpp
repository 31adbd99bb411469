#include "moesim/sweep/progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

constexpr int kBarWidth = 30;

std::string outcome(const Json& row) {
  if (has_status(row, kStatusOk)) return fmt::format("{:.1f} TFLOP/s/GPU", row["tflops_per_gpu"].get<double>());
  return plain_value(row["status"]) + ": " + plain_value(row["reason"]);
}

}  // namespace

Progress::Progress(int total, std::vector<std::string> axis_columns, bool terminal, std::FILE* out)
    : total_(total), axis_columns_(std::move(axis_columns)), terminal_(terminal), out_(out) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::point_done(const Json& row) {
  ++done_;
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (terminal_) {
    const int filled = total_ > 0 ? kBarWidth * done_ / total_ : kBarWidth;
    fmt::print(out_, "\r[{}{}] {}/{} points, {:.1f} s", std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(kBarWidth - filled), '.'), done_, total_, elapsed_s);
    std::fflush(out_);
    return;
  }
  fmt::print(out_, "sweep: {}/{} done after {:.1f} s: point {} ({}): {}\n", done_, total_, elapsed_s,
             plain_value(row["index"]), point_name(axis_columns_, row), outcome(row));
  std::fflush(out_);
}

void Progress::finish() {
  if (terminal_ && done_ > 0) fmt::print(out_, "\n");
}

}  // namespace moesim::sweep
