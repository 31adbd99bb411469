#pragma once
// What a search or a sweep will cost, estimated from the sizes of its axes before a single
// candidate or point is built (issue 42: a 19-million-candidate space grew to 11.5 GB with no
// output, a 1e6-point sweep spent 100 s expanding in silence). The count is the product of the
// axes' sizes, computed without overflow (it saturates); a batch above its documented limit or
// beyond this machine's memory is refused with the estimate unless forced, and one beyond what
// an int indexes is refused always. As driver/work_estimate.hpp does for one run.
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::batch {

// a * b, or kCountSaturated when the product does not fit 64 bits.
inline constexpr std::uint64_t kCountSaturated = UINT64_MAX;
std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);

// Items are indexed with int (candidates, sweep points, rows): more can never run.
inline constexpr std::uint64_t kMaxIndexedItems = INT_MAX;

struct BatchEstimate {
  std::string command;          // "search", "sweep": for the message
  std::string items;            // "candidates", "points"
  std::string breakdown;        // the factors, e.g. "tp 4 x pp 5 x ..."
  std::uint64_t count = 0;      // items in the product (kCountSaturated: beyond 2^64 - 1)
  std::string work;             // what the work and the limit count, e.g. "simulations (points x samples)"
  std::uint64_t work_items = 0; // that count (saturating)
  double memory_bytes = 0;      // peak of this process, rough
  double seconds = 0;           // wall time on `workers` processes, rough
  int workers = 1;
  // "2.4e+09 candidates (tp 4 x ...); about 2.4e+03 GB of memory and 3.1 h of wall time on 2 workers"
  std::string text() const;
};

// InfeasibleError (exit 3) with the estimate and the fix when the batch holds more items than
// an int indexes (always), or, unless `force`, when its work exceeds `limit` or its memory
// exceeds `available_bytes` (driver::available_memory_bytes()). `limit_doc` names the document
// that gives the limit.
void refuse_oversized_batch(const BatchEstimate& e, std::uint64_t limit, const std::string& limit_doc,
                            double available_bytes, bool force);

}  // namespace moesim::batch
