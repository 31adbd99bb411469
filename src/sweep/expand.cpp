// The points of a sweep: listed points (or the sweep-wide base) crossed with the axes, last
// axis fastest, so a point's index depends only on the sweep file (shards agree on it).
#include "moesim/sweep/spec.hpp"

namespace moesim::sweep {

std::vector<Point> expand(const SweepSpec& spec) {
  std::vector<ListedPoint> listed = spec.listed;
  const bool with_labels = !listed.empty();
  if (!with_labels) listed.push_back(ListedPoint{"", spec.base, {}});

  std::vector<Point> points;
  for (const ListedPoint& lp : listed) {
    Point head;
    head.base = lp.base.empty() ? spec.base : lp.base;
    head.patches = lp.set;
    if (with_labels) head.axis_values.emplace_back("label", lp.label);
    std::vector<Point> partial{head};
    for (const Axis& axis : spec.axes) {
      std::vector<Point> next;
      next.reserve(partial.size() * axis.values.size());
      for (const Point& p : partial)
        for (const nlohmann::json& v : axis.values) {
          Point q = p;
          q.axis_values.emplace_back(axis.name, v);
          if (axis.gpu_count) {
            q.gpus = v.get<int>();
            q.scaling = axis.scaling;
          } else {
            q.patches.emplace_back(axis.path, v);
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

}  // namespace moesim::sweep
