#include "moesim/model/routing.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace moesim::model {

RoutingShape routing_shape(const ModelSpec& m) {
  RoutingShape r;
  r.experts = m.moe.experts;
  r.top_k = m.moe.top_k;
  r.groups = m.moe.router_groups > 1 ? m.moe.router_groups : 1;
  r.groups_per_token = m.moe.router_groups_per_token > 0 && m.moe.router_groups_per_token < r.groups
                           ? m.moe.router_groups_per_token
                           : r.groups;
  return r;
}

namespace {

// The Markov chain of routing.hpp, memoised over (taken, chosen groups, units hit).
class DistinctUnits {
 public:
  DistinctUnits(const RoutingShape& r, int unit)
      : E_(r.experts), k_(r.top_k), G_(r.groups), M_(r.groups_per_token), Eg_(r.experts / r.groups), L_(unit),
        memo_(static_cast<std::size_t>((k_ + 1) * (M_ + 1) * (k_ + 1)), -1.0) {}

  double expected() { return at(0, 0, 0); }

 private:
  double& slot(int s, int j, int h) {
    return memo_[static_cast<std::size_t>((s * (M_ + 1) + j) * (k_ + 1) + h)];
  }

  // Units hit when the next taken expert comes from a chosen group.
  double from_chosen(int s, int j, int h) {
    if (L_ > Eg_) return at(s + 1, j, h);  // chosen groups lie in hit units
    const double hit = static_cast<double>(h * L_ - s) / (j * Eg_ - s);
    return (hit > 0 ? hit * at(s + 1, j, h) : 0.0) + (hit < 1 ? (1 - hit) * at(s + 1, j, h + 1) : 0.0);
  }

  // Units hit when the next taken expert opens a new group.
  double from_new_group(int s, int j, int h) {
    if (L_ <= Eg_) return at(s + 1, j + 1, h + 1);
    const double hit = static_cast<double>(h * (L_ / Eg_) - j) / (G_ - j);
    return (hit > 0 ? hit * at(s + 1, j + 1, h) : 0.0) + (hit < 1 ? (1 - hit) * at(s + 1, j + 1, h + 1) : 0.0);
  }

  double at(int s, int j, int h) {
    if (s == k_) return h;
    double& memo = slot(s, j, h);
    if (memo >= 0) return memo;
    double value;
    if (j < M_) {
      const double chosen = static_cast<double>(j * Eg_ - s) / (E_ - s);
      value = (chosen > 0 ? chosen * from_chosen(s, j, h) : 0.0) + (1 - chosen) * from_new_group(s, j, h);
    } else {
      value = from_chosen(s, j, h);
    }
    return memo = value;
  }

  int E_, k_, G_, M_, Eg_, L_;
  std::vector<double> memo_;
};

}  // namespace

double expected_distinct_units(const RoutingShape& r, int experts_per_unit) {
  if (r.experts <= 0 || r.top_k <= 0) return 0;
  if (r.top_k > r.experts || r.groups < 1 || r.experts % r.groups != 0 || r.groups_per_token < 1 ||
      r.groups_per_token > r.groups || r.top_k > r.groups_per_token * (r.experts / r.groups))
    throw std::invalid_argument("expected_distinct_units: inconsistent routing (experts " + std::to_string(r.experts) +
                                ", top_k " + std::to_string(r.top_k) + ", groups " + std::to_string(r.groups) +
                                ", groups per token " + std::to_string(r.groups_per_token) + ")");
  if (experts_per_unit < 1 || r.experts % experts_per_unit != 0)
    throw std::invalid_argument("expected_distinct_units: " + std::to_string(experts_per_unit) +
                                " experts per unit do not divide " + std::to_string(r.experts) + " experts");
  RoutingShape shape = r;
  const int group_size = r.experts / r.groups;
  const bool nested = group_size % experts_per_unit == 0 || experts_per_unit % group_size == 0;
  if (r.groups_per_token == r.groups) {
    // No group limit: the k experts are a uniform k-subset; one group of all experts is exact.
    shape.groups = shape.groups_per_token = 1;
  } else if (!nested) {
    throw std::invalid_argument("expected_distinct_units: units of " + std::to_string(experts_per_unit) +
                                " experts and router groups of " + std::to_string(group_size) + " do not nest");
  }
  return DistinctUnits(shape, experts_per_unit).expected();
}

double probability_unit_hit(const RoutingShape& r, int experts_in_unit) {
  if (r.top_k < 0 || r.top_k > r.experts || experts_in_unit < 0 || experts_in_unit > r.experts)
    throw std::invalid_argument("probability_unit_hit: " + std::to_string(experts_in_unit) + " of " +
                                std::to_string(r.experts) + " experts, top_k " + std::to_string(r.top_k));
  // C(E - e, k) / C(E, k) = prod_{i < k} (E - e - i) / (E - i): the k experts all miss the unit.
  double miss = 1.0;
  for (int i = 0; i < r.top_k && miss > 0; ++i)
    miss *= std::max(0.0, static_cast<double>(r.experts - experts_in_unit - i)) / (r.experts - i);
  return 1.0 - miss;
}

double expected_distinct_units_uneven(const RoutingShape& r, const std::vector<int>& experts_in_unit) {
  long long total = 0;
  for (int e : experts_in_unit) {
    if (e <= 0) throw std::invalid_argument("expected_distinct_units_uneven: a unit of " + std::to_string(e) + " experts");
    total += e;
  }
  if (total != r.experts)
    throw std::invalid_argument("expected_distinct_units_uneven: units of " + std::to_string(total) +
                                " experts in all, the routing has " + std::to_string(r.experts));
  double sum = 0;
  for (int e : experts_in_unit) sum += probability_unit_hit(r, e);
  return sum;
}

double expected_distinct_ranks(const RoutingShape& r, int ep) {
  if (ep <= 1) return r.top_k > 0 ? 1.0 : 0.0;
  return expected_distinct_units(r, r.experts / ep);
}

double expected_distinct_nodes(const RoutingShape& r, int ep, int ranks_per_node) {
  if (ranks_per_node >= ep) return r.top_k > 0 ? 1.0 : 0.0;
  return expected_distinct_units(r, r.experts / ep * ranks_per_node);
}

}  // namespace moesim::model
