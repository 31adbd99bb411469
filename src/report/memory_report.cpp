// Memory per GPU in reports: per pipeline rank, the peak (which rank, when in the schedule, of
// which tensors), and the simulated "fits if ..." candidates.
#include <fmt/format.h>

#include <algorithm>

#include "moesim/report/report.hpp"

namespace moesim::report {

namespace {

// Activation kinds of a rank, largest first, those above zero.
std::vector<std::pair<std::string_view, double>> kinds_by_size(const plan::MemoryBreakdown& m) {
  std::vector<std::pair<std::string_view, double>> out;
  for (size_t i = 0; i < m.activations_by_kind.size(); ++i)
    if (m.activations_by_kind[i] > 0) out.emplace_back(plan::to_string(plan::kAllTensorKinds[i]), m.activations_by_kind[i]);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

nlohmann::json candidate_json(const driver::FitCandidate& c) {
  nlohmann::json j = {{"change", c.change}, {"peak_bytes", c.peak_bytes}, {"usable_bytes", c.usable_bytes},
                      {"fits", c.fits}};
  if (c.fits) j["tflops_per_gpu"] = c.tflops_per_gpu;
  return j;
}

}  // namespace

nlohmann::json memory_json(const plan::Layout& l, const plan::MemoryBreakdown& m) {
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, bytes] : kinds_by_size(m)) kinds[std::string(kind)] = bytes;
  return {{"pp_rank", m.pp_rank},
          {"dense_params", m.params.dense_params},
          {"expert_params", m.params.expert_params},
          {"weights_bytes", m.weights_bytes},
          {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes},
          {"activations_bytes", m.activations_bytes},
          {"activations_by_kind_bytes", kinds},
          {"buffers_bytes", m.buffers_bytes},
          {"total_bytes", m.total_bytes()},
          {"usable_bytes", m.usable_bytes},
          {"inflight_chunks", m.inflight_chunks},
          {"peak_moment", plan::peak_moment(l, m.pp_rank)},
          {"fits", m.fits()}};
}

std::string memory_table(const plan::Layout& l, const std::vector<plan::MemoryBreakdown>& memory) {
  std::string out = "\n  memory per GPU (GB)\n";
  out += fmt::format("  {:<6}{:>9}{:>9}{:>10}{:>12}{:>9}{:>9}{:>9}{:>10}\n", "pp", "weights", "grads",
                     "optimizer", "activations", "buffers", "total", "usable", "in-flight");
  bool fits = true;
  for (const auto& m : memory) {
    fits = fits && m.fits();
    out += fmt::format("  {:<6}{:>9.1f}{:>9.1f}{:>10.1f}{:>12.1f}{:>9.1f}{:>9.1f}{:>9.1f}{:>10}{}\n", m.pp_rank,
                       m.weights_bytes / 1e9, m.gradients_bytes / 1e9, m.optimizer_bytes / 1e9,
                       m.activations_bytes / 1e9, m.buffers_bytes / 1e9, m.total_bytes() / 1e9,
                       m.usable_bytes / 1e9, m.inflight_chunks, m.fits() ? "" : "  DOES NOT FIT");
  }
  if (memory.empty()) return out;
  const plan::MemoryBreakdown& peak = plan::peak_rank(memory);
  out += fmt::format("\n  peak: pipeline rank {}, {}: {:.1f} of {:.1f} GB\n", peak.pp_rank,
                     plan::peak_moment(l, peak.pp_rank), peak.total_bytes() / 1e9, peak.usable_bytes / 1e9);
  out += fmt::format("  its {:.1f} GB of activations:", peak.activations_bytes / 1e9);
  for (const auto& [kind, bytes] : kinds_by_size(peak)) out += fmt::format(" {} {:.1f};", kind, bytes / 1e9);
  out.back() = '\n';
  out += fits ? "  fits in memory: yes\n" : "  fits in memory: NO\n";
  return out;
}

nlohmann::json fit_json(const driver::FitReport& f) {
  nlohmann::json j = {{"tflops_per_gpu_as_given", f.tflops_per_gpu}, {"fitting", nlohmann::json::array()},
                      {"not_fitting", nlohmann::json::array()}, {"not_tried", f.not_tried}};
  for (const auto& c : f.fitting) j["fitting"].push_back(candidate_json(c));
  for (const auto& c : f.not_fitting) j["not_fitting"].push_back(candidate_json(c));
  return j;
}

std::string fit_table(const driver::FitReport& f) {
  std::string out = fmt::format(
      "\n  fits if ... (each change simulated; as given it would run at {:.1f} TFLOP/s per GPU)\n",
      f.tflops_per_gpu);
  if (f.fitting.empty()) out += "  no single change tried makes it fit\n";
  for (const auto& c : f.fitting)
    out += fmt::format("  {:<60} peak {:>6.1f} GB  {:>7.1f} TFLOP/s ({:+.1f} %)\n", c.change, c.peak_bytes / 1e9,
                       c.tflops_per_gpu, 100 * (c.tflops_per_gpu / f.tflops_per_gpu - 1));
  for (const auto& c : f.not_fitting)
    out += fmt::format("  not enough: {:<48} peak {:>6.1f} GB of {:.1f}\n", c.change, c.peak_bytes / 1e9,
                       c.usable_bytes / 1e9);
  for (const auto& why : f.not_tried) out += fmt::format("  not tried: {}\n", why);
  return out;
}

}  // namespace moesim::report
