// Pairing two results' points and showing them side by side.
#include <fmt/format.h>

#include <map>

#include "moesim/sweep/compare.hpp"
#include "moesim/sweep/writers.hpp"

namespace moesim::sweep {

namespace {

struct Metric {
  const char* column;
  const char* label;
  double scale;     // shown value = column value * scale
  const char* spec; // fmt spec of the shown value
};

// The first kMainMetrics appear in the one-line-per-pair table.
constexpr std::size_t kMainMetrics = 4;
const std::vector<Metric> kMetrics = {
    {"tflops_per_gpu", "model TFLOP/s per GPU", 1, "{:.1f}"},
    {"step_time_s", "step time (s)", 1, "{:.3f}"},
    {"mfu", "MFU (%)", 100, "{:.1f}"},
    {"max_memory_per_gpu_bytes", "max memory per GPU (GB)", 1e-9, "{:.1f}"},
    {"tokens_per_s_per_gpu", "tokens/s per GPU", 1, "{:.0f}"},
    {"scaling_efficiency", "scaling efficiency (%)", 100, "{:.1f}"},
    {"energy_j_per_step", "energy per step (MJ)", 1e-6, "{:.2f}"},
    {"tokens_per_kwh", "tokens per kWh", 1, "{:.0f}"},
    {"tflops_per_kw", "TFLOP/s per kW per GPU", 1, "{:.1f}"},
    {"compute_s", "  compute (s)", 1, "{:.3f}"},
    {"host_overhead_s", "  host launch overhead (s)", 1, "{:.3f}"},
    {"exposed_ep_dispatch_s", "  exposed EP dispatch (s)", 1, "{:.3f}"},
    {"exposed_ep_combine_s", "  exposed EP combine (s)", 1, "{:.3f}"},
    {"exposed_tp_s", "  exposed TP (s)", 1, "{:.3f}"},
    {"exposed_pp_s", "  exposed PP (s)", 1, "{:.3f}"},
    {"exposed_dp_s", "  exposed DP (s)", 1, "{:.3f}"},
    {"bubble_s", "  pipeline bubble (s)", 1, "{:.3f}"},
    {"optimizer_s", "  optimizer (s)", 1, "{:.3f}"}};

struct Pairing {
  std::vector<std::pair<const Json*, const Json*>> pairs;
  std::vector<const Json*> only_a, only_b;
};

Pairing pair_rows(const SweepResult& a, const SweepResult& b) {
  Pairing p;
  if (a.rows.size() == 1 && b.rows.size() == 1) {
    p.pairs.emplace_back(&a.rows[0], &b.rows[0]);
    return p;
  }
  const bool by_axes = a.axis_columns == b.axis_columns && !a.axis_columns.empty();
  const auto key = [&](const SweepResult& r, const Json& row) {
    if (!by_axes) return plain_value(row["index"]);
    Json values = Json::array();
    for (const std::string& c : r.axis_columns) values.push_back(row[c]);
    return values.dump();
  };
  std::map<std::string, const Json*> in_b;
  for (const Json& row : b.rows) in_b.emplace(key(b, row), &row);
  for (const Json& row : a.rows) {
    const auto it = in_b.find(key(a, row));
    if (it == in_b.end()) {
      p.only_a.push_back(&row);
      continue;
    }
    p.pairs.emplace_back(&row, it->second);
    in_b.erase(it);
  }
  for (const Json& row : b.rows)
    if (in_b.count(key(b, row))) p.only_b.push_back(&row);
  return p;
}

std::string shown(const Json& v, const Metric& m) {
  return v.is_number() ? fmt::format(fmt::runtime(m.spec), v.get<double>() * m.scale) : "–";
}

// A row's 95 % interval of `m` (--samples), or null.
const Json& interval(const Json& row, const Metric& m) {
  static const Json none;
  const std::string key = std::string(m.column) + "_ci95";
  return row.contains(key) && row[key].is_array() ? row[key] : none;
}

// The value, with the half-width of its interval when it has one: "1399.5±4.4".
std::string shown_with_interval(const Json& row, const Metric& m) {
  const Json& ci = interval(row, m);
  if (!ci.is_array() || !row[m.column].is_number()) return shown(row[m.column], m);
  const double half = (ci[1].get<double>() - ci[0].get<double>()) / 2 * m.scale;
  return shown(row[m.column], m) + "±" + fmt::format(fmt::runtime(m.spec), half);
}

std::string ratio(const Json& a, const Json& b) {
  if (!a.is_number() || !b.is_number() || a.get<double>() == 0) return "–";
  return fmt::format("{:.3f}", b.get<double>() / a.get<double>());
}

std::string header(const SweepResult& a, const SweepResult& b) {
  return fmt::format("A: {}\nB: {}\n\n", a.name, b.name);
}

std::string detailed(const SweepResult& a, const SweepResult& b, const Json& ra, const Json& rb) {
  std::string out = header(a, b);
  out += fmt::format("  {:<30}{:>14}{:>14}{:>9}\n", "", "A", "B", "B/A");
  const auto text_line = [&](const char* label, const std::string& x, const std::string& y) {
    out += fmt::format("  {:<30}{:>14}{:>14}\n", label, x, y);
  };
  text_line("point", point_name(a.axis_columns, ra), point_name(b.axis_columns, rb));
  text_line("status", plain_value(ra["status"]), plain_value(rb["status"]));
  text_line("system", plain_value(ra["system_name"]), plain_value(rb["system_name"]));
  text_line("precision", plain_value(ra["precision"]), plain_value(rb["precision"]));
  text_line("GPUs", plain_value(ra["gpu_count"]), plain_value(rb["gpu_count"]));
  for (const Metric& m : kMetrics)
    out += fmt::format("  {:<30}{:>14}{:>14}{:>9}\n", m.label, shown_with_interval(ra, m), shown_with_interval(rb, m),
                       ratio(ra[m.column], rb[m.column]));
  text_line("fits in memory", plain_value(ra["fits_in_memory"]), plain_value(rb["fits_in_memory"]));
  return out;
}

std::string compact(const SweepResult& a, const SweepResult& b, const Pairing& p) {
  std::string out = header(a, b);
  std::size_t width = 5;
  for (const auto& [ra, rb] : p.pairs) width = std::max(width, point_name(a.axis_columns, *ra).size());
  out += fmt::format("  {:<{}}", "point", width);
  for (std::size_t i = 0; i < kMainMetrics; ++i) out += fmt::format(" | {:^29}", kMetrics[i].label);
  out += fmt::format("\n  {:<{}}", "", width);
  for (std::size_t i = 0; i < kMainMetrics; ++i) out += fmt::format(" | {:>10}{:>10}{:>9}", "A", "B", "B/A");
  out += "\n";
  for (const auto& [ra, rb] : p.pairs) {
    out += fmt::format("  {:<{}}", point_name(a.axis_columns, *ra), width);
    for (std::size_t i = 0; i < kMainMetrics; ++i) {
      const Metric& m = kMetrics[i];
      out += fmt::format(" | {:>10}{:>10}{:>9}", shown_with_interval(*ra, m), shown_with_interval(*rb, m),
                         ratio((*ra)[m.column], (*rb)[m.column]));
    }
    out += "\n";
  }
  for (const Json* r : p.only_a) out += fmt::format("  only in A: {}\n", point_name(a.axis_columns, *r));
  for (const Json* r : p.only_b) out += fmt::format("  only in B: {}\n", point_name(b.axis_columns, *r));
  return out;
}

}  // namespace

std::string compare_table(const SweepResult& a, const SweepResult& b) {
  const Pairing p = pair_rows(a, b);
  if (p.pairs.size() == 1 && p.only_a.empty() && p.only_b.empty())
    return detailed(a, b, *p.pairs[0].first, *p.pairs[0].second);
  return compact(a, b, p);
}

Json compare_json(const SweepResult& a, const SweepResult& b) {
  const Pairing p = pair_rows(a, b);
  Json j;
  j["a"] = a.name;
  j["b"] = b.name;
  j["pairs"] = Json::array();
  for (const auto& [ra, rb] : p.pairs) {
    Json pair = {{"a_point", point_name(a.axis_columns, *ra)}, {"b_point", point_name(b.axis_columns, *rb)}};
    for (const Metric& m : kMetrics) {
      const Json& x = (*ra)[m.column];
      const Json& y = (*rb)[m.column];
      const bool ratio_defined = x.is_number() && y.is_number() && x.get<double>() != 0;
      pair[m.column] = {{"a", x}, {"b", y}, {"ratio", ratio_defined ? Json(y.get<double>() / x.get<double>()) : Json(nullptr)}};
      if (interval(*ra, m).is_array() || interval(*rb, m).is_array()) {
        pair[m.column]["a_ci95"] = interval(*ra, m);
        pair[m.column]["b_ci95"] = interval(*rb, m);
      }
    }
    j["pairs"].push_back(std::move(pair));
  }
  j["only_in_a"] = Json::array();
  j["only_in_b"] = Json::array();
  for (const Json* r : p.only_a) j["only_in_a"].push_back(point_name(a.axis_columns, *r));
  for (const Json* r : p.only_b) j["only_in_b"].push_back(point_name(b.axis_columns, *r));
  return j;
}

}  // namespace moesim::sweep
