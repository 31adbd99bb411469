#include "moesim/batch/work_limit.hpp"

#include <fmt/format.h>

#include "moesim/config/error.hpp"

namespace moesim::batch {

std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kCountSaturated : product;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kCountSaturated : sum;
}

namespace {

std::string count_text(std::uint64_t n) {
  if (n == kCountSaturated) return "more than 1.8e+19";
  return n < 1000000 ? fmt::format("{}", n) : fmt::format("{:.3g}", static_cast<double>(n));
}

std::string duration_text(double seconds) {
  return seconds < 120    ? fmt::format("{:.0f} s", seconds)
         : seconds < 7200 ? fmt::format("{:.0f} min", seconds / 60)
         : seconds < 2 * 86400 ? fmt::format("{:.1f} h", seconds / 3600)
                               : fmt::format("{:.3g} days", seconds / 86400);
}

}  // namespace

std::string BatchEstimate::text() const {
  std::string out = fmt::format("{} {}", count_text(count), items);
  if (!breakdown.empty()) out += " (" + breakdown + ")";
  if (work_items != count) out += fmt::format(", {} {}", count_text(work_items), work);
  return out + fmt::format("; about {:.3g} GB of memory and {} of wall time on {} worker{}", memory_bytes / 1e9,
                           duration_text(seconds), workers, workers == 1 ? "" : "s");
}

void refuse_oversized_batch(const BatchEstimate& e, std::uint64_t limit, const std::string& limit_doc,
                            double available_bytes, bool force) {
  if (e.count > kMaxIndexedItems)
    throw InfeasibleError(fmt::format("this {} cannot run: {}; moesim numbers its {} with 32-bit integers, at most "
                                      "2^31 - 1 = {} (--force does not lift this): use fewer values per axis, or "
                                      "split it into several {} files",
                                      e.command, e.text(), e.items, kMaxIndexedItems, e.command));
  if (force) return;
  if (e.work_items > limit)
    throw InfeasibleError(fmt::format("this {} is larger than moesim runs unasked: {}; the limit ({}) is {} {}: "
                                      "use fewer values per axis, or add --force to run it anyway",
                                      e.command, e.text(), limit_doc, limit, e.work));
  if (e.memory_bytes > available_bytes)
    throw InfeasibleError(fmt::format("this {} would not fit on this machine: {}, and {:.3g} GB are available: use "
                                      "fewer values per axis, or add --force to run it anyway (or set "
                                      "MOESIM_MEMORY_BYTES)",
                                      e.command, e.text(), available_bytes / 1e9));
}

}  // namespace moesim::batch
