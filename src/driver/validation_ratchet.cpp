// The accuracy ratchet: CI compares every row's error with the one recorded in
// tests/validation/baseline.json, so that no change moves the errors silently. Errors are kept
// in percent with two decimals (what the page shows, and a diff a reviewer can read).
#include <fmt/format.h>

#include <cmath>

#include "moesim/driver/validate.hpp"

namespace moesim::driver {

namespace {

double percent(double relative) {
  const double p = std::round(10000 * relative) / 100;
  return p == 0 ? 0.0 : p;  // no "-0.0" in the file
}

// Rows (and ratios) found on one side only.
void missing(const nlohmann::json& a, const nlohmann::json& b, const std::string& what, const std::string& why,
             std::vector<std::string>& out) {
  for (const auto& item : a.items())
    if (!b.contains(item.key())) out.push_back(fmt::format("{} {}: {}", what, item.key(), why));
}

}  // namespace

nlohmann::json ratchet_baseline(const Validation& v) {
  nlohmann::json rows = nlohmann::json::object(), ratios = nlohmann::json::object();
  for (const auto& r : v.runs) rows[r.published.id] = percent(r.relative_error);
  for (const auto& p : v.pairs)
    ratios[p.gb300_id + " / " + p.gb200_id] = percent(p.simulated_ratio / p.published_ratio - 1);
  return {{"rows", rows}, {"ratios", ratios}};
}

std::vector<std::string> ratchet_violations(const nlohmann::json& current, const nlohmann::json& baseline,
                                            double slack_points) {
  std::vector<std::string> out;
  const double inside = 100 * kValidationTolerance;
  for (const char* kind : {"rows", "ratios"}) {
    const nlohmann::json& cur = current.at(kind);
    const nlohmann::json& base = baseline.at(kind);
    const std::string what = std::string(kind) == "rows" ? "row" : "ratio";
    missing(cur, base, what, "no recorded error (new): record it", out);
    missing(base, cur, what, "recorded but no longer validated: record its removal", out);
    for (const auto& item : cur.items()) {
      if (!base.contains(item.key())) continue;
      const double now = item.value().get<double>(), before = base.at(item.key()).get<double>();
      if (std::abs(now) > std::abs(before) + slack_points)
        out.push_back(fmt::format("{} {}: |error| grew from {:.2f} % to {:.2f} % ({:+.2f} points)", what, item.key(),
                                  std::abs(before), std::abs(now), std::abs(now) - std::abs(before)));
      else if (what == "row" && std::abs(before) <= inside && std::abs(now) > inside)
        out.push_back(fmt::format("row {}: left the +-{:.0f} % band: {:+.2f} % -> {:+.2f} %", item.key(), inside, before, now));
    }
  }
  return out;
}

std::vector<std::string> ratchet_improvements(const nlohmann::json& current, const nlohmann::json& baseline,
                                              double slack_points) {
  std::vector<std::string> out;
  for (const char* kind : {"rows", "ratios"})
    for (const auto& item : current.at(kind).items()) {
      if (!baseline.at(kind).contains(item.key())) continue;
      const double now = item.value().get<double>(), before = baseline.at(kind).at(item.key()).get<double>();
      if (std::abs(now) < std::abs(before) - slack_points)
        out.push_back(fmt::format("{}: |error| {:.2f} % -> {:.2f} %", item.key(), std::abs(before), std::abs(now)));
    }
  return out;
}

}  // namespace moesim::driver
