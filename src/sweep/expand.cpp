// The points of a sweep: listed points (or the sweep-wide base) crossed with the axes, last
// axis fastest, so a point's index depends only on the sweep file (shards agree on it).
#include "moesim/sweep/spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "moesim/batch/work_limit.hpp"

namespace moesim::sweep {

std::vector<Point> expand(const SweepSpec& spec) {
  std::vector<ListedPoint> listed = spec.listed;
  const bool with_labels = !listed.empty();
  if (!with_labels) listed.push_back(ListedPoint{"", spec.base, {}});

  const std::string file = spec.file.filename().string();
  std::vector<Point> points;
  for (std::size_t l = 0; l < listed.size(); ++l) {
    const ListedPoint& lp = listed[l];
    Point head;
    head.base = lp.base.empty() ? spec.base : lp.base;
    head.patches = lp.set;
    for (const auto& [path, value] : lp.set) {
      const std::string at = fmt::format("$.points[{}].set.{}", l, path);
      head.origins.push_back({file, at, at});
    }
    if (with_labels) head.axis_values.emplace_back("label", lp.label);
    std::vector<Point> partial{head};
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const Axis& axis = spec.axes[a];
      std::vector<Point> next;
      next.reserve(partial.size() * axis.values.size());
      for (const Point& p : partial)
        for (std::size_t v = 0; v < axis.values.size(); ++v) {
          Point q = p;
          q.axis_values.emplace_back(axis.name, axis.values[v]);
          if (axis.gpu_count) {
            q.gpus = axis.values[v].get<int>();
            q.scaling = axis.scaling;
          } else {
            q.patches.emplace_back(axis.path, axis.values[v]);
            q.origins.push_back({file, fmt::format("$.axes[{}].path", a), fmt::format("$.axes[{}].values[{}]", a, v)});
          }
          next.push_back(std::move(q));
        }
      partial = std::move(next);
    }
    for (Point& p : partial) points.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < points.size(); ++i) points[i].index = static_cast<int>(i);
  return points;
}

std::uint64_t count_points(const SweepSpec& spec) {
  std::uint64_t n = std::max<std::size_t>(1, spec.listed.size());
  for (const Axis& axis : spec.axes) n = batch::saturating_multiply(n, axis.values.size());
  return n;
}

std::string point_factors(const SweepSpec& spec) {
  std::vector<std::string> factors;
  if (!spec.listed.empty()) factors.push_back(fmt::format("points {}", spec.listed.size()));
  for (const Axis& axis : spec.axes) factors.push_back(fmt::format("{} {}", axis.name, axis.values.size()));
  return fmt::format("{}", fmt::join(factors, ", "));
}

}  // namespace moesim::sweep
