#pragma once
// `moesim search --compare-systems a,b`: the same search on each system, and the best of each
// side by side. Each system is compared at its own best layout, not at one layout that suits
// one of them.
#include <string>
#include <vector>

#include "moesim/search/result.hpp"

namespace moesim::search {

// One column per system, in order, with the ratio of each to the first.
std::string comparison_table(const std::vector<SearchResult>& results);
// {"systems": [{"system", "best": row, ...}, ...], "ratios": [{"system", "tflops_per_gpu": x/first, ...}]}
Json comparison_json(const std::vector<SearchResult>& results);

}  // namespace moesim::search
