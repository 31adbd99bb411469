// search.json: ranking, writing, reading back and merging the results of a search.
#include "moesim/search/result.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "moesim/config/error.hpp"
#include "moesim/batch/result_file.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/sweep/row.hpp"

namespace moesim::search {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "moesim-search-result/1";

bool simulated_ok(const Json& row) { return sweep::has_status(row, sweep::kStatusOk); }

// Everything but the rows and the shard: what shards of one search share.
Json header(const SearchResult& r) {
  Json j;
  j["format"] = kFormat;
  j["search"] = r.name;
  j["description"] = r.description;
  j["base"] = r.base;
  j["system"] = r.system;
  j["model"] = r.model;
  j["gpus"] = r.gpus;
  j["evaluated"] = r.evaluated;
  j["survivors"] = r.survivors;
  j["rejected_candidates"] = r.rejected_candidates;
  // Most frequent reason first; ties by name (std::map order), so the order is deterministic.
  std::vector<std::pair<std::string, int>> reasons(r.rejected.begin(), r.rejected.end());
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  j["rejected"] = Json::object();
  for (const auto& [reason, count] : reasons) j["rejected"][reason] = count;
  j["plan"] = r.plan;
  j["best_estimates"] = r.best_estimates;
  j["reference"] = r.reference ? Json(*r.reference) : Json(nullptr);
  j["reference_rejections"] = r.reference_rejections;
  return j;
}

// A simulated candidate is on the front when no other is at least as fast with at most as much
// memory per GPU and strictly better in one of the two.
void mark_pareto_front(std::vector<Json>& rows) {
  const auto memory = [](const Json& row) { return row["max_memory_per_gpu_bytes"].get<double>(); };
  const auto speed = [](const Json& row) { return row["tflops_per_gpu"].get<double>(); };
  for (Json& row : rows) {
    if (!simulated_ok(row)) {
      row["pareto_front"] = nullptr;
      continue;
    }
    bool dominated = false;
    for (const Json& other : rows)
      dominated = dominated || (simulated_ok(other) && memory(other) <= memory(row) && speed(other) >= speed(row) &&
                                (memory(other) < memory(row) || speed(other) > speed(row)));
    row["pareto_front"] = !dominated;
  }
}

}  // namespace

void rank_candidates(SearchResult& r) {
  auto& rows = r.candidates;
  const auto estimate_rank = [](const Json& row) { return row["estimate_rank"].get<int>(); };
  if (!r.complete() || r.shard) {
    std::stable_sort(rows.begin(), rows.end(), [&](const Json& a, const Json& b) { return estimate_rank(a) < estimate_rank(b); });
    for (Json& row : rows) row["rank"] = row["pareto_front"] = nullptr;
    return;
  }
  mark_pareto_front(rows);
  std::stable_sort(rows.begin(), rows.end(), [&](const Json& a, const Json& b) {
    const bool ok_a = simulated_ok(a), ok_b = simulated_ok(b);
    if (ok_a != ok_b) return ok_a;
    if (ok_a) {
      const double ta = a["tflops_per_gpu"].get<double>(), tb = b["tflops_per_gpu"].get<double>();
      if (ta != tb) return ta > tb;
    }
    return estimate_rank(a) < estimate_rank(b);
  });
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i]["rank"] = static_cast<int>(i + 1);
}

const Json* best_candidate(const SearchResult& r) {
  const Json* best = nullptr;
  for (const Json& row : r.candidates)
    if (simulated_ok(row) && (!best || row["tflops_per_gpu"].get<double>() > (*best)["tflops_per_gpu"].get<double>()))
      best = &row;
  return best;
}

const Json* reference_candidate_row(const SearchResult& r) {
  for (const Json& row : r.candidates)
    if (row["reference"].get<bool>()) return &row;
  return nullptr;
}

Json to_json(const SearchResult& r) {
  Json j = header(r);
  j["simulated"] = static_cast<int>(r.candidates.size());
  if (r.shard) j["shard"] = {{"index", r.shard->index}, {"count", r.shard->count}};
  j["candidates"] = r.candidates;
  return j;
}

bool is_search_result(const Json& j) { return j.is_object() && j.value("format", "") == kFormat; }

SearchResult result_from_json(const Json& j, const std::string& label) {
  if (!is_search_result(j))
    throw ConfigError(label, "$.format", std::string("a search result (\"format\": \"") + kFormat +
                                             "\", the search.json that moesim search writes)");
  SearchResult r;
  try {
    r.name = j.at("search").get<std::string>();
    r.description = j.at("description").get<std::string>();
    r.base = j.at("base").get<std::string>();
    r.system = j.at("system").get<std::string>();
    r.model = j.at("model").get<std::string>();
    r.gpus = j.at("gpus").get<int>();
    r.evaluated = j.at("evaluated").get<int>();
    r.survivors = j.at("survivors").get<int>();
    r.rejected_candidates = j.at("rejected_candidates").get<int>();
    for (const auto& item : j.at("rejected").items()) r.rejected[item.key()] = item.value().get<int>();
    r.plan = j.at("plan").get<std::vector<int>>();
    r.best_estimates = j.at("best_estimates").get<int>();
    if (!j.at("reference").is_null()) r.reference = j.at("reference").get<int>();
    r.reference_rejections = j.at("reference_rejections").get<std::vector<std::string>>();
    if (j.contains("shard")) r.shard = batch::Shard{j["shard"].at("index").get<int>(), j["shard"].at("count").get<int>()};
    r.candidates = j.at("candidates").get<std::vector<Json>>();
  } catch (const Json::exception& e) {
    throw ConfigError(label, "$", std::string("a search result as moesim search writes it: ") + e.what());
  }
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const Json& row = r.candidates[i];
    const bool planned = row.is_object() && row.contains("index") && row["index"].is_number_integer() &&
                         std::find(r.plan.begin(), r.plan.end(), row["index"].get<int>()) != r.plan.end();
    if (!planned || !row.contains("estimate_rank") || !row.contains("status"))
      throw ConfigError(label, fmt::format("$.candidates[{}]", i), "a candidate row of a planned simulation (its index in \"plan\")");
  }
  return r;
}

SearchResult read_result(const fs::path& file_or_dir) {
  const batch::ResultFile f = batch::read_result_file(file_or_dir, "search.json", "search result");
  return result_from_json(f.json, f.file.string());
}

SearchResult merge_results(const std::vector<SearchResult>& parts) {
  if (parts.empty()) throw ConfigError("merge", "$", "at least one search result");
  SearchResult out = parts.front();
  out.shard.reset();
  out.candidates.clear();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const SearchResult& p = parts[i];
    if (header(p) != header(parts.front()))
      throw ConfigError(fmt::format("merge input {}", i + 1), "$",
                        fmt::format("a shard of the same search as input 1 (\"{}\", {} candidates, {} planned "
                                    "simulations); got \"{}\", {} candidates, {} planned simulations, or another "
                                    "base, space or rejection count",
                                    parts.front().name, parts.front().evaluated, parts.front().plan.size(), p.name,
                                    p.evaluated, p.plan.size()));
    out.candidates.insert(out.candidates.end(), p.candidates.begin(), p.candidates.end());
  }
  std::vector<int> duplicated, missing;
  for (int index : out.plan) {
    const auto n = std::count_if(out.candidates.begin(), out.candidates.end(),
                                 [&](const Json& row) { return row["index"].get<int>() == index; });
    if (n == 0) missing.push_back(index);
    if (n > 1) duplicated.push_back(index);
  }
  if (!duplicated.empty())
    throw ConfigError("merge", "$", fmt::format("each planned candidate once; candidates {} appear in more than one input",
                                                fmt::join(duplicated, ", ")));
  if (!missing.empty())
    throw ConfigError("merge", "$", fmt::format("all {} planned simulations; candidates {} are in no input (a shard missing?)",
                                                out.plan.size(), fmt::join(missing, ", ")));
  rank_candidates(out);
  return out;
}

}  // namespace moesim::search
