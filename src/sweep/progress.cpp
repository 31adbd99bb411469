#include "moesim/sweep/progress.hpp"

#include <fmt/format.h>

#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

std::string outcome(const Json& row) {
  if (has_status(row, kStatusOk)) return fmt::format("{:.1f} TFLOP/s/GPU", row["tflops_per_gpu"].get<double>());
  return plain_value(row["status"]) + ": " + plain_value(row["reason"]);
}

}  // namespace

Progress::Progress(int total, std::vector<std::string> axis_columns, bool terminal, std::FILE* out)
    : axis_columns_(std::move(axis_columns)), progress_(total, "sweep", "points", terminal, out) {}

void Progress::point_done(const Json& row) {
  progress_.job_done(fmt::format("point {} ({}): {}", plain_value(row["index"]), point_name(axis_columns_, row),
                                 outcome(row)));
}

}  // namespace moesim::sweep
