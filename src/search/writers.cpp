// The ranked table (terminal and Markdown), CSV and JSON of a search.
#include "moesim/search/writers.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "moesim/search/space.hpp"
#include "moesim/sweep/row.hpp"
#include "moesim/util/atomic_file.hpp"
#include "moesim/util/terminal_text.hpp"

namespace moesim::search {

namespace {

using batch::plain_value;

std::string number(const Json& v, const char* spec, double scale = 1) {
  return v.is_number() ? fmt::format(fmt::runtime(spec), v.get<double>() * scale) : "–";
}

double part(const Json& row, const char* column) { return row[column].is_number() ? row[column].get<double>() : 0; }

// The exposed costs a reader compares first: EP all-to-alls, the pipeline bubble, and the rest
// (TP, PP, DP, host launches, optimizer).
double exposed_ep_s(const Json& row) { return part(row, "exposed_ep_dispatch_s") + part(row, "exposed_ep_combine_s"); }
double other_exposed_s(const Json& row) {
  return part(row, "exposed_tp_s") + part(row, "exposed_pp_s") + part(row, "exposed_dp_s") + part(row, "host_overhead_s") +
         part(row, "optimizer_s");
}

std::string layout_cell(const Json& row) {
  const Json& l = row["layout"];
  std::string out = fmt::format("TP{} PP{} VPP{} EP{}", l["tp"].get<int>(), l["pp"].get<int>(), l["vpp"].get<int>(),
                                l["ep"].get<int>());
  if (l["etp"].get<int>() > 1) out += fmt::format(" ETP{}", l["etp"].get<int>());
  if (l["cp"].get<int>() > 1) out += fmt::format(" CP{}", l["cp"].get<int>());
  out += fmt::format(" mbs{}", l["micro_batch"].get<int>());
  // fmt rather than string concatenation: GCC 12 warns falsely (-Wrestrict) on the latter here.
  if (l["schedule"].get<std::string>() != "1f1b") out += fmt::format(" {}", l["schedule"].get<std::string>());
  if (!l["pipeline_layout"].get<std::string>().empty()) out += fmt::format(" {}", l["pipeline_layout"].get<std::string>());
  if (const std::string sharding = l.value("sharding", std::string("optimizer")); sharding != "optimizer")
    out += fmt::format(" {}", sharding);
  return out;
}

// Dispatcher and graph scope are shown only when the simulated candidates differ in them.
struct RecipeColumns {
  bool dispatcher = false, cuda_graphs = false;
};

RecipeColumns varying(const SearchResult& r) {
  std::set<std::string> dispatchers, graphs;
  for (const Json& row : r.candidates) {
    dispatchers.insert(row["recipe"]["dispatcher"].get<std::string>());
    graphs.insert(row["recipe"]["cuda_graphs"].get<std::string>());
  }
  return {dispatchers.size() > 1, graphs.size() > 1};
}

std::string recipe_cell(const Json& row, const RecipeColumns& show) {
  const Json& rc = row["recipe"];
  std::vector<std::string> parts;
  if (rc["ep_overlap"].get<bool>()) parts.push_back("ep_overlap");
  if (rc["delay_wgrad"].get<bool>()) parts.push_back("delay_wgrad");
  const auto modules = rc["recompute"].get<std::vector<std::string>>();
  parts.push_back(modules.empty() ? "no recompute" : fmt::format("recompute {}", fmt::join(modules, "+")));
  if (show.dispatcher) parts.push_back(rc["dispatcher"].get<std::string>());
  if (show.cuda_graphs) parts.push_back("graphs " + rc["cuda_graphs"].get<std::string>());
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string memory_cell(const Json& row) {
  if (!row["max_memory_per_gpu_bytes"].is_number()) return "–";
  return fmt::format("{:.1f} ({:+.1f})", row["max_memory_per_gpu_bytes"].get<double>() / 1e9,
                     row["memory_headroom_bytes"].get<double>() / 1e9);
}

std::string rank_cell(const Json& row) {
  std::string out = row["rank"].is_number() ? plain_value(row["rank"]) : "–";
  if (row["reference"].get<bool>()) out += " ref";
  if (row["pareto_front"].is_boolean() && row["pareto_front"].get<bool>()) out += " *";
  return out;
}

struct Cells {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
};

Cells table_cells(const SearchResult& r) {
  Cells c;
  c.header = {"rank", "layout", "recipe", "TFLOP/s/GPU", "tokens/s/GPU", "step (s)", "memory GB (headroom)",
              "exposed EP (s)", "bubble (s)", "other exposed (s)", "estimate TFLOP/s (#)"};
  c.right = {true, false, false, true, true, true, true, true, true, true, true};
  const RecipeColumns show = varying(r);
  for (const Json& row : r.candidates) {
    const bool ok = sweep::has_status(row, sweep::kStatusOk);
    c.rows.push_back({rank_cell(row), layout_cell(row), recipe_cell(row, show), number(row["tflops_per_gpu"], "{:.1f}"),
                      number(row["tokens_per_s_per_gpu"], "{:.0f}"), number(row["step_time_s"], "{:.3f}"),
                      memory_cell(row), ok ? fmt::format("{:.3f}", exposed_ep_s(row)) : "–",
                      number(row["bubble_s"], "{:.3f}"), ok ? fmt::format("{:.3f}", other_exposed_s(row)) : "–",
                      fmt::format("{:.1f} (#{})", row["estimated_tflops_per_gpu"].get<double>(),
                                  row["estimate_rank"].get<int>())});
  }
  return c;
}

// What the search covered, how many candidates each rule rejected, what was simulated.
std::vector<std::string> summary_lines(const SearchResult& r) {
  std::vector<std::string> out;
  out.push_back(fmt::format("{} x {} GPUs, {}; base {}", r.system, r.gpus, r.model, r.base));
  out.push_back(fmt::format("{} candidates: {} pass the layout rules and the memory model, {} rejected{}", r.evaluated,
                            r.survivors, r.rejected_candidates, r.rejected.empty() ? "" : " (a candidate counts under each rule it breaks):"));
  std::vector<std::pair<std::string, int>> reasons(r.rejected.begin(), r.rejected.end());
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [why, n] : reasons) out.push_back(fmt::format("  {:>7}  {}", n, why));
  std::string simulated = fmt::format("{} simulated", r.candidates.size());
  if (r.shard) simulated += fmt::format(" by shard {}/{} (of {} planned)", r.shard->index, r.shard->count, r.plan.size());
  simulated += fmt::format(": the best {} estimates", r.best_estimates);
  if (static_cast<int>(r.plan.size()) > r.best_estimates) simulated += " and the reference (the base scenario's settings)";
  out.push_back(simulated);
  if (!r.reference) out.push_back("reference: the base scenario's own settings are not in the space");
  else if (!r.reference_rejections.empty())
    out.push_back(fmt::format("reference (the base scenario's settings) rejected: {}", fmt::join(r.reference_rejections, "; ")));
  if (r.shard) return out;
  const Json* best = best_candidate(r);
  const Json* ref = reference_candidate_row(r);
  if (best) out.push_back(fmt::format("best: {}: {:.1f} TFLOP/s per GPU", candidate_name(*best), (*best)["tflops_per_gpu"].get<double>()));
  if (best && ref && sweep::has_status(*ref, sweep::kStatusOk))
    out.push_back(fmt::format("reference: rank {} of {}, {:.1f} TFLOP/s per GPU; the best is {:+.1f} % faster",
                              (*ref)["rank"].get<int>(), r.candidates.size(), (*ref)["tflops_per_gpu"].get<double>(),
                              100 * ((*best)["tflops_per_gpu"].get<double>() / (*ref)["tflops_per_gpu"].get<double>() - 1)));
  return out;
}

std::string aligned(const Cells& c) {
  std::vector<std::size_t> width(c.header.size());
  for (std::size_t i = 0; i < c.header.size(); ++i) {
    width[i] = c.header[i].size();
    for (const auto& row : c.rows) width[i] = std::max(width[i], row[i].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = " ";
    for (std::size_t i = 0; i < cells.size(); ++i)
      out += c.right[i] ? fmt::format(" {:>{}}", cells[i], width[i]) : fmt::format(" {:<{}}", cells[i], width[i]);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(c.header);
  for (const auto& row : c.rows) out += line(row);
  return out;
}

// The CSV's columns: the identifying ones, then the layout and recipe flattened, then the rest.
std::vector<std::string> csv_columns(const SearchResult& r) {
  std::vector<std::string> out;
  if (r.candidates.empty()) return out;
  for (const auto& item : r.candidates.front().items()) {
    if (item.value().is_object())
      for (const auto& inner : item.value().items()) out.push_back(inner.key());
    else
      out.push_back(item.key());
  }
  return out;
}

}  // namespace

std::string candidate_name(const Json& row) { return describe(candidate_from_json(row["layout"], row["recipe"])); }

std::string result_json_text(const SearchResult& r) { return to_json(r).dump(2) + "\n"; }

std::string result_csv(const SearchResult& r) {
  const std::vector<std::string> columns = csv_columns(r);
  std::vector<std::vector<std::string>> lines{columns};
  for (const Json& row : r.candidates) {
    lines.emplace_back();
    for (const std::string& c : columns) {
      const Json& v = row.contains(c) ? row[c] : row["layout"].contains(c) ? row["layout"][c] : row["recipe"][c];
      lines.back().push_back(plain_value(v));
    }
  }
  return batch::csv_text(lines);
}

std::string result_table(const SearchResult& r) {
  std::string out = fmt::format("{}\n", r.name);
  for (const std::string& line : summary_lines(r)) out += "  " + line + "\n";
  if (r.candidates.empty()) return out;
  out += fmt::format("\n{}", aligned(table_cells(r)));
  out += "\n  rank: by simulated TFLOP/s per GPU (\"ref\": the base scenario's settings; \"*\": on the Pareto front of "
         "throughput and memory); memory: the fullest GPU, headroom to usable HBM; estimate: the ranking estimate and "
         "its rank among all survivors.\n";
  return out;
}

std::string result_markdown(const SearchResult& r) {
  std::string out = fmt::format("# {}\n\n", batch::md_cell(r.name));
  if (!r.description.empty()) out += r.description + "\n\n";
  for (const std::string& line : summary_lines(r)) out += (line.rfind("  ", 0) == 0 ? "  -" + line.substr(1) : "- " + line) + "\n";
  if (r.candidates.empty()) return out;
  const Cells c = table_cells(r);
  out += "\n|";
  std::string rule = "|";
  for (std::size_t i = 0; i < c.header.size(); ++i) {
    out += " " + c.header[i] + " |";
    rule += c.right[i] ? "---:|" : "---|";
  }
  out += "\n" + rule + "\n";
  for (const auto& row : c.rows) {
    std::vector<std::string> cells;
    for (const std::string& cell : row) cells.push_back(batch::md_cell(cell));
    out += "| " + fmt::format("{}", fmt::join(cells, " | ")) + " |\n";
  }
  out += "\nrank: by simulated TFLOP/s per GPU (model FLOPs, Megatron convention); \"ref\": the base scenario's "
         "settings; \"*\": on the Pareto front of throughput and memory. Memory: the fullest GPU (GB) and its headroom "
         "to usable HBM. Estimate: the ranking estimate and its rank among all candidates that passed the checks.\n";
  std::string notes;
  for (const Json& row : r.candidates)
    if (!sweep::has_status(row, sweep::kStatusOk))
      notes += fmt::format("- {}: {}: {}\n", batch::md_cell(candidate_name(row)), plain_value(row["status"]),
                           batch::md_cell(plain_value(row["reason"])));
  if (!notes.empty()) out += "\nCandidates without a simulated result:\n\n" + notes;
  return out;
}

std::vector<std::string> output_file_names() {
  std::vector<std::string> names{"search.json", "search.csv", "search.md", "plot.gp", "plot-candidates.dat"};
  for (const std::string& image : plot_images()) names.push_back(image);
  return names;
}

batch::PlotOutcome write_outputs(const std::filesystem::path& dir, const SearchResult& r, const std::string& gnuplot) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  util::write_file_atomically(dir / "search.json", result_json_text(r));
  util::write_file_atomically(dir / "search.csv", util::terminal_safe(result_csv(r)));
  util::write_file_atomically(dir / "search.md", util::terminal_safe(result_markdown(r)));
  return batch::draw_with_gnuplot(dir, plot_files(r), "plot.gp", plot_images(),
                                  "no plot: no candidate has a simulated result", gnuplot);
}

}  // namespace moesim::search
