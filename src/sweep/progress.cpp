#include "moesim/sweep/progress.hpp"

#include <fmt/format.h>

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

std::string outcome(const Json& row) {
  if (has_status(row, kStatusOk)) return fmt::format("{:.1f} TFLOP/s/GPU", row["tflops_per_gpu"].get<double>());
  return plain_value(row["status"]) + ": " + plain_value(row["reason"]);
}

constexpr double kSeedLinesEvery_s = 5.0;  // plain lines in logs, not a flood

}  // namespace

Progress::Progress(int total, std::vector<std::string> axis_columns, bool terminal, std::FILE* out, int samples,
                   bool seed_lines)
    : axis_columns_(std::move(axis_columns)),
      per_seed_(samples > 1),
      progress_(per_seed_ ? static_cast<long long>(total) * samples : total, "sweep", per_seed_ ? "seeds" : "points", terminal, out,
                seed_lines ? kSeedLinesEvery_s : 0) {}

void Progress::point_done(const Json& row) {
  const std::string what = fmt::format("point {} ({}): {}", plain_value(row["index"]), point_name(axis_columns_, row),
                                       outcome(row));
  if (per_seed_) progress_.note(what);
  else progress_.job_done(what);
}

void Progress::seed_done() {
  if (per_seed_) progress_.tick();
}

}  // namespace moesim::sweep
