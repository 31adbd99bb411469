// Static ECMP as balls into bins: each flow hashed onto one of a leaf's uplinks.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "moesim/platform/topology.hpp"

namespace moesim::platform {

namespace {

// log(n!) for n = 0..flows.
std::vector<double> log_factorials(int flows) {
  std::vector<double> table(static_cast<std::size_t>(flows) + 1, 0.0);
  for (int n = 1; n <= flows; ++n) table[static_cast<std::size_t>(n)] = std::lgamma(n + 1.0);
  return table;
}

// P(no uplink carries more than `cap` of `flows` flows), exactly: placing the flows uplink by
// uplink, uplink i of the i still open takes each remaining flow with probability 1/i.
double probability_max_at_most(int flows, int uplinks, int cap, const std::vector<double>& log_factorial) {
  const auto lf = [&](int n) { return log_factorial[static_cast<std::size_t>(n)]; };
  std::vector<double> placed(static_cast<std::size_t>(flows) + 1, 0.0);  // flows left -> probability
  placed[static_cast<std::size_t>(flows)] = 1.0;
  for (int open = uplinks; open >= 2; --open) {
    std::vector<double> next(placed.size(), 0.0);
    const double p = 1.0 / open, log_p = std::log(p), log_q = std::log1p(-p);
    for (int left = 0; left <= flows; ++left) {
      const double w = placed[static_cast<std::size_t>(left)];
      if (w == 0) continue;
      for (int here = 0; here <= std::min(cap, left); ++here) {
        const double log_binomial = lf(left) - lf(here) - lf(left - here);
        const double log_here = log_binomial + here * log_p + (left - here) * log_q;  // binomial(left, p)
        next[static_cast<std::size_t>(left - here)] += w * std::exp(log_here);
      }
    }
    placed = std::move(next);
  }
  double total = 0;  // the last uplink takes whatever is left
  for (int left = 0; left <= std::min(cap, flows); ++left) total += placed[static_cast<std::size_t>(left)];
  return total;
}

// The same, with the uplinks' loads taken as independent Poisson(flows / uplinks) counts. The
// CDF is summed term by term from each term's logarithm, so a large mean does not underflow.
class PoissonMax {
 public:
  PoissonMax(int flows, int uplinks) : mean_(static_cast<double>(flows) / uplinks), uplinks_(uplinks) {}
  // P(max <= cap) for cap = 0, 1, 2, ... in turn.
  double next() {
    cdf_ += std::exp(k_ * std::log(mean_) - mean_ - std::lgamma(k_ + 1.0));
    ++k_;
    return std::pow(std::min(1.0, cdf_), uplinks_);
  }

 private:
  double mean_;
  int uplinks_;
  int k_ = 0;
  double cdf_ = 0;
};

}  // namespace

double ecmp_efficiency(int flows, int uplinks) {
  if (flows < 1 || uplinks < 1)
    throw std::invalid_argument("ecmp_efficiency: flows and uplinks must be positive, got " + std::to_string(flows) +
                                " and " + std::to_string(uplinks));
  // The exact count costs uplinks x flows x cap per cap: kept to about 1e7 steps in all.
  const double mean = static_cast<double>(flows) / uplinks;
  const double last_cap = mean + 6 * std::sqrt(mean) + 6;
  const bool exact = static_cast<double>(flows) * uplinks * last_cap * last_cap <= 1e7;
  const std::vector<double> log_factorial = exact ? log_factorials(flows) : std::vector<double>{};
  PoissonMax poisson(flows, uplinks);
  // E[max] = sum over c >= 0 of P(max > c), up to where the busiest uplink is surely below c
  // (40 standard deviations above the mean leave under 1e-300 per uplink).
  const double beyond = std::min(static_cast<double>(flows), mean + 40 * std::sqrt(mean) + 40);
  double expected_max = 0;
  for (int cap = 0; cap < beyond; ++cap) {
    const double at_most = exact ? probability_max_at_most(flows, uplinks, cap, log_factorial) : poisson.next();
    expected_max += 1.0 - at_most;
    if (1.0 - at_most < 1e-12) break;
  }
  return std::min(1.0, mean / std::max(expected_max, mean));
}

}  // namespace moesim::platform
