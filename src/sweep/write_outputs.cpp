#include <fmt/format.h>

#include <stdexcept>

#include "moesim/sweep/plot.hpp"
#include "moesim/sweep/writers.hpp"
#include "moesim/util/atomic_file.hpp"
#include "moesim/util/terminal_text.hpp"

namespace moesim::sweep {

void write_outputs(const std::filesystem::path& dir, const SweepResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  util::write_file_atomically(dir / "sweep.json", result_json_text(r));
  util::write_file_atomically(dir / "sweep.csv", util::terminal_safe(result_csv(r)));
  util::write_file_atomically(dir / "sweep.md", util::terminal_safe(result_markdown(r)));
}

std::vector<std::string> output_file_names(bool plots) {
  std::vector<std::string> names{"sweep.json", "sweep.csv", "sweep.md"};
  if (!plots) return names;
  for (const std::vector<std::string>& more : {plot_file_names(), plot_images()})
    names.insert(names.end(), more.begin(), more.end());
  return names;
}

std::string status_summary(const SweepResult& r) {
  std::vector<std::string> parts;
  for (const char* status : {kStatusOk, kStatusInvalid, kStatusInfeasible, kStatusError}) {
    int n = 0;
    for (const Json& row : r.rows) n += has_status(row, status) ? 1 : 0;
    if (n > 0 || status == std::string(kStatusOk)) parts.push_back(fmt::format("{} {}", n, status));
  }
  const std::string scope = r.shard ? fmt::format(" of shard {}/{}", r.shard->index, r.shard->count) : "";
  return fmt::format("{} points{}: {}", r.rows.size(), scope, fmt::join(parts, ", "));
}

int error_rows(const SweepResult& r) {
  int n = 0;
  for (const Json& row : r.rows) n += has_status(row, kStatusError) ? 1 : 0;
  return n;
}

}  // namespace moesim::sweep
