#pragma once
// The result of a search, or of one shard of it, as written to search.json. Every other output
// (table, CSV, Markdown, plot) is derived from it alone, which is what makes a merge of shards
// equal to the unsharded run byte for byte.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moesim/batch/shard.hpp"
#include "moesim/batch/table_text.hpp"

namespace moesim::search {

using Json = batch::Json;

struct SearchResult {
  std::string name;
  std::string description;
  std::string base;                        // the base scenario, as the search file names it
  std::string system;                      // display names of the searched system and model
  std::string model;
  int gpus = 0;
  int evaluated = 0;                       // candidates considered
  int survivors = 0;                       // passed the rules and the memory check
  std::map<std::string, int> rejected;     // reason -> candidates failing it (one may fail several)
  int rejected_candidates = 0;             // evaluated - survivors
  // Candidate indices to simulate: the best estimates, in estimate order, then the reference
  // when it survives and is not among them.
  std::vector<int> plan;
  int best_estimates = 0;                  // how many of the plan are the best estimates
  std::optional<int> reference;            // the base scenario's own settings, when in the space
  std::vector<std::string> reference_rejections;  // why the reference cannot run; empty: it can
  std::optional<batch::Shard> shard;       // absent: every planned simulation (a run or a merge)
  std::vector<Json> candidates;            // one row per simulated candidate, ranked when complete

  bool complete() const { return candidates.size() == plan.size(); }
};

// Ranks complete results: rows with a simulated result first, by TFLOP/s per GPU (highest
// first, ties by estimate), then the others by estimate; fills "rank". A shard's rows are kept in
// plan order with no rank (its best may not be the search's best).
void rank_candidates(SearchResult& r);

// The best row with a simulated result (nullptr when none).
const Json* best_candidate(const SearchResult& r);
// The reference's row (nullptr when it was not simulated).
const Json* reference_candidate_row(const SearchResult& r);

Json to_json(const SearchResult& r);
// `label` names the source in errors. ConfigError on anything but a search result.
SearchResult result_from_json(const Json& j, const std::string& label);
// search.json, or a directory holding one.
SearchResult read_result(const std::filesystem::path& file_or_dir);
// Whether a JSON document is a search result (moesim merge takes both kinds).
bool is_search_result(const Json& j);

// Combines shards of one search: every planned candidate exactly once. ConfigError naming what
// is missing, duplicated or from another search.
SearchResult merge_results(const std::vector<SearchResult>& parts);

}  // namespace moesim::search
