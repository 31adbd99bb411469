// Screening candidates: rules, memory, estimate; spread over worker processes in slices.
#include "moesim/search/screen.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include <nlohmann/json.hpp>

#include "moesim/batch/worker_pool.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/megatron_rules.hpp"
#include "moesim/plan/layout.hpp"
#include "moesim/plan/memory.hpp"

namespace moesim::search {

using nlohmann::json;

namespace {

constexpr const char* kMemoryReason = "memory: more than the GPU's usable HBM";

// A worker's slice travels back as JSON; doubles round-trip exactly, so a slice screened in a
// worker equals one screened here.
json to_json(const Screened& s) {
  const workload::StepEstimate& e = s.estimate;
  return json::array({s.rejections, s.max_memory_bytes, s.usable_memory_bytes,
                      json::array({e.step_time_s, e.model_flop_per_gpu, e.tflops_per_gpu, e.compute_s,
                                   e.exposed_comm_s, e.pipeline_s, e.exposed_dp_s, e.optimizer_s})});
}

Screened from_json(const json& j) {
  Screened s;
  s.rejections = j.at(0).get<std::vector<std::string>>();
  s.max_memory_bytes = j.at(1).get<double>();
  s.usable_memory_bytes = j.at(2).get<double>();
  const json& e = j.at(3);
  workload::StepEstimate& x = s.estimate;
  for (auto [i, field] : {std::pair{0, &x.step_time_s}, {1, &x.model_flop_per_gpu}, {2, &x.tflops_per_gpu},
                          {3, &x.compute_s}, {4, &x.exposed_comm_s}, {5, &x.pipeline_s}, {6, &x.exposed_dp_s},
                          {7, &x.optimizer_s}})
    *field = e.at(static_cast<std::size_t>(i)).get<double>();
  return s;
}

}  // namespace

// A number of the candidate's own (a stand-alone run of digits) becomes N, so that candidates
// breaking one rule share a reason; digits that are part of a name ("1F1B", "FP8", "GB300") stay:
// the rule read "interleaved NFNB needs ...".
std::string reason_key(const std::string& category, const std::string& rule_text) {
  const auto is_letter = [&](std::size_t at) {
    return at < rule_text.size() && std::isalpha(static_cast<unsigned char>(rule_text[at]));
  };
  std::string out = category + ": ";
  for (std::size_t i = 0; i < rule_text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(rule_text[i]))) {
      out += rule_text[i];
      continue;
    }
    std::size_t end = i;
    while (end < rule_text.size() && std::isdigit(static_cast<unsigned char>(rule_text[end]))) ++end;
    const bool in_name = (i > 0 && is_letter(i - 1)) || is_letter(end);
    out += in_name ? rule_text.substr(i, end - i) : "N";
    i = end - 1;
  }
  return out;
}

Screened screen_one(const Scenario& base, const Candidate& c, const cost::KernelCalibration& cal) {
  Screened out;
  Scenario s = base;
  apply(c, s);
  // What Megatron-Core refuses (the scenario reader's check), then the layout rules. A rule's
  // requirement names no candidate's values: it is its own reason.
  for (const auto& [index, values] : config::broken_megatron_rules(s))
    out.rejections.push_back("megatron: " + config::megatron_rules()[index].requirement);
  plan::Layout layout;
  try {
    layout = plan::make_layout(s);
  } catch (const InfeasibleError& e) {
    for (const std::string& p : e.problems()) out.rejections.push_back(reason_key("layout", p));
    if (e.problems().empty()) out.rejections.push_back(reason_key("layout", e.what()));
    return out;
  }
  if (!out.rejections.empty()) return out;
  for (const plan::MemoryBreakdown& m : plan::memory_per_stage(s, layout)) {
    out.max_memory_bytes = std::max(out.max_memory_bytes, m.total_bytes());
    out.usable_memory_bytes = m.usable_bytes;
  }
  if (out.max_memory_bytes > out.usable_memory_bytes) {
    out.rejections.push_back(kMemoryReason);
    return out;
  }
  try {
    out.estimate = workload::estimate_step(s, layout, cal);
  } catch (const std::exception& e) {
    // Not a rule of the layout: a candidate the estimate cannot price is reported, not ranked.
    out.rejections.push_back(reason_key("error", e.what()));
  }
  return out;
}

std::vector<Screened> screen_all(const Scenario& base, const std::vector<Candidate>& candidates,
                                 const cost::KernelCalibration& cal, int jobs,
                                 const std::function<void(int, int)>& on_chunk) {
  const int n = static_cast<int>(candidates.size());
  const int workers = std::max(1, jobs);
  // A few slices per worker: a slow slice (long pipelines) does not hold the others back.
  const int slices = std::min(n, 4 * workers);
  if (slices == 0) return {};
  const auto first = [&](int slice) { return static_cast<int>(static_cast<long long>(n) * slice / slices); };
  const auto job = [&](int slice) {
    json out = json::array();
    for (int i = first(slice); i < first(slice + 1); ++i)
      out.push_back(to_json(screen_one(base, candidates[static_cast<std::size_t>(i)], cal)));
    return out.dump();
  };
  int done = 0;
  const auto outcomes = batch::run_in_workers(slices, workers, job, [&](int, const batch::WorkerOutcome&) {
    if (on_chunk) on_chunk(++done, slices);
  });
  std::vector<Screened> out;
  out.reserve(candidates.size());
  for (int slice = 0; slice < slices; ++slice) {
    const batch::WorkerOutcome& o = outcomes[static_cast<std::size_t>(slice)];
    if (!o.ok)
      throw std::runtime_error("screening candidates " + std::to_string(first(slice)) + " to " +
                               std::to_string(first(slice + 1) - 1) + " failed: " + o.output);
    for (const json& j : json::parse(o.output)) out.push_back(from_json(j));
  }
  return out;
}

}  // namespace moesim::search
