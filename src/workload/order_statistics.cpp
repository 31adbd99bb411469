#include "moesim/workload/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

namespace moesim::workload {

namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

double upper_tail(double x) { return 0.5 * std::erfc(x / kSqrt2); }   // 1 - Phi(x)
double cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }         // Phi(x)
double density(double x) { return kInvSqrt2Pi * std::exp(-0.5 * x * x); }

}  // namespace

double normal_max_cdf(double x, double n) {
  if (n == 1) return cdf(x);
  const double q = upper_tail(x);
  return q >= 1 ? 0.0 : std::exp(n * std::log1p(-q));
}

// Where normal_max_cdf rounds to exactly 1 or 0. Phi is monotone, so a bound on it at one point
// x0 holds for every x beyond; bounds (Mills ratio and Chernoff): for x > 0,
// x / (1 + x^2) density(x) <= 1 - Phi(x) <= density(x) / x; for x < 0,
// Phi(x) <= min(exp(-x^2 / 2) / 2, density(x) / |x|). With margins over the rounding of erfc,
// log1p and exp, it computes exactly:
// - 1 where n (1 - Phi) < 2^-56: n log1p(-q) is above -2^-54, and exp returns 1.0 + y, which
//   rounds to 1;
// - 0 where Phi < 2^-56 (erfc rounds to 2 there, so q to 1), or where
//   n log(Phi + 1e-15) < -750 (1 - q, as erfc's rounding leaves it, is below Phi + 1e-15, and
//   exp rounds to 0 below -745.14).
// The thresholds are the farthest-in points of a 1/64 grid where the bounds hold, searched from
// points known to hold: the bound for 1 holds from sqrt(2 (ln n + 56 ln 2)), and the farthest-in
// zero lies below sqrt(2 ln n), where n (1 - Phi) is already below 1.
NormalMaxCdf::NormalMaxCdf(double n) : n_(n) {
  if (n == 1) return;  // Phi itself: no shortcut (its lower tail never rounds to 0 early)
  constexpr double kGrid = 1.0 / 64, kFar = 40;
  const auto on_grid = [](double x) { return std::ceil(x / kGrid) * kGrid; };
  for (double x = on_grid(std::sqrt(2 * (std::log(n) + 56 * std::log(2.0)))); x > 1 && n * density(x) / x < 0x1p-56;
       x -= kGrid)
    certain_one_from_ = x;
  const auto cdf_upper_bound = [](double x) {
    if (x > 0) return 1 - x / (1 + x * x) * density(x);
    const double chernoff = 0.5 * std::exp(-0.5 * x * x);
    return x < 0 ? std::min(chernoff, density(x) / -x) : chernoff;
  };
  for (double x = on_grid(std::sqrt(2 * std::log(n))); x > -kFar; x -= kGrid) {
    const double phi = cdf_upper_bound(x) * (1 + 1e-12);
    if (phi < 0x1p-56 || n * std::log(phi + 1e-15) < -750) {
      certain_zero_below_ = x;
      break;
    }
  }
}

namespace {

// E[X] = lo + integral over [lo, hi] of (1 - F), for a variable almost surely inside [lo, hi]
// with distribution function F (midpoint rule; F smooth on the scale of (hi - lo) / steps).
template <class Cdf>
double mean_from_cdf(double lo, double hi, int steps, Cdf&& F) {
  const double h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i < steps; ++i) sum += 1 - F(lo + (i + 0.5) * h);
  return lo + sum * h;
}

constexpr double kSpan = 9;   // standard deviations below and above that carry no mass

// Where the maximum of n standard normals lies: below kSpan + sqrt(2 ln n).
double max_upper_bound(double n) { return kSpan + std::sqrt(2 * std::log(std::max(n, 1.0))); }

}  // namespace

double expected_max_standard_normal(int n) {
  if (n < 1) throw std::invalid_argument("expected_max_standard_normal: n >= 1");
  if (n == 1) return 0;
  // A folded run asks for the same few n once per stretch; each is a 4,000-point quadrature.
  static std::mutex memo_mutex;
  static std::map<int, double> memo;
  const std::lock_guard<std::mutex> lock(memo_mutex);
  auto found = memo.find(n);
  if (found == memo.end()) {
    const NormalMaxCdf max_cdf(n);
    found = memo.emplace(n, mean_from_cdf(-kSpan, max_upper_bound(n), 4000, max_cdf)).first;
  }
  return found->second;
}

double expected_slowest_factor(const SlowestQuery& q) {
  if (q.world < 1 || q.group < 1 || q.group > q.world)
    throw std::invalid_argument("expected_slowest_factor: 1 <= group <= world");
  const double s = q.persistent_cv, c = q.fresh_cv;
  if (s <= 0 && c <= 0) return 1;
  // Nobody waits for a lone GPU's stretch: its fresh draw b averages out, as E[(1 + s A)(1 + c b)]
  // = 1 + s E[A] with b independent of mean 0, A the stage's slowest GPU (its known draw in a
  // sampled run, else the maximum of `world` normals). No quadrature: it is the folded run's most
  // frequent query.
  if (q.group == 1) return 1 + s * (q.slowest_z ? *q.slowest_z : expected_max_standard_normal(q.world));
  // (1 + s a)(1 + c b) - 1 is s a + c b to first order; its parts are written that way below.
  const double peer_sd = std::sqrt(s * s + c * c);
  const double peers = q.group - 1;
  constexpr int kSteps = 96;                 // quadrature over a fresh or persistent draw
  const double step = 2 * kSpan / kSteps;

  // (1) The group of the stage's slowest GPU decides. That GPU's stretch is s A + c b with A the
  // stage's maximum. Expected run: A is the maximum of the GPUs outside its group's other members
  // (so that the stage counts `world` draws), and the peers are unconditioned, N(0, peer_sd).
  // Sampled run: A is known and the peers' persistent draws lie below it.
  const double outside = static_cast<double>(q.world - q.group + 1);
  const NormalMaxCdf order_cdf(outside);  // P(A <= a)
  // The quadrature's fresh draws and their densities, the same for every x (computed once: this
  // integral is the hottest loop of a folded run).
  double fresh_draw[kSteps], fresh_density[kSteps];
  for (int j = 0; j < kSteps; ++j) {
    fresh_draw[j] = -kSpan + (j + 0.5) * step;
    fresh_density[j] = density(fresh_draw[j]);
  }
  const auto slowest_cdf = [&](double x) -> double {
    if (q.slowest_z) return c <= 0 ? (x >= s * *q.slowest_z ? 1.0 : 0.0) : cdf((x - s * *q.slowest_z) / c);
    if (s <= 0) return cdf(x / c);
    if (c <= 0) return order_cdf(x / s);
    double sum = 0;  // P(s A + c b <= x) = E_b[P(A <= (x - c b) / s)]
    for (int j = 0; j < kSteps; ++j) sum += order_cdf((x - c * fresh_draw[j]) / s) * fresh_density[j];
    return std::min(1.0, sum * step);
  };
  const auto peer_cdf = [&](double x) -> double {
    if (!q.slowest_z || s <= 0) return cdf(x / peer_sd);
    const double top = *q.slowest_z;
    if (c <= 0) return std::min(1.0, cdf(std::min(x / s, top)) / cdf(top));
    double sum = 0;  // E[Phi((x - s a) / c) | a <= A]
    const double from = -kSpan, h = (top - from) / kSteps;
    for (int j = 0; j < kSteps; ++j) {
      const double a = from + (j + 0.5) * h;
      sum += cdf((x - s * a) / c) * density(a);
    }
    return std::min(1.0, sum * h / cdf(top));
  };
  const double top = q.slowest_z ? s * std::max(*q.slowest_z, 0.0) : s * max_upper_bound(outside);
  const double lo = -kSpan * peer_sd, hi = top + kSpan * peer_sd;
  const double slowest_group = mean_from_cdf(lo, hi, 1200, [&](double x) {
    return slowest_cdf(x) * (peers > 0 ? std::pow(peer_cdf(x), peers) : 1.0);
  });
  if (q.slowest_z) return 1 + slowest_group;

  // (2) When the fresh spread dominates, every group is about as slow and the job waits for the
  // slowest of them: a group's mean stretch is E[max of `group` N(0, peer_sd)] on average and
  // varies with its members' mean persistent speed (sd s / sqrt(group)), so the expected worst of
  // world / group groups adds that sd times E[max of their number]. Both (1) and (2) fall short
  // of the truth where the other applies; the larger is taken.
  const int groups = q.world / q.group;
  const double every_group = peer_sd * expected_max_standard_normal(q.group) +
                             s / std::sqrt(static_cast<double>(q.group)) * expected_max_standard_normal(std::max(groups, 1));
  return 1 + std::max(slowest_group, every_group);
}

double expected_capped_max(int n, double cv, double floor, double cap) {
  if (n < 1) throw std::invalid_argument("expected_capped_max: n >= 1");
  const double hi_cap = cap > 0 ? cap : 1 + cv * max_upper_bound(n);
  if (cv <= 0) return std::max(floor, std::min(1.0, hi_cap));
  // max(floor, min(cap, M)) = floor + integral over [floor, cap] of (1 - F_M)
  const double lo = std::max(floor, 1 - kSpan * cv);
  const double hi = std::min(hi_cap, 1 + cv * max_upper_bound(n));
  if (hi <= lo) return std::max(floor, std::min(hi_cap, lo));
  const double below = lo > floor ? lo - floor : 0;  // M is almost surely above lo
  const NormalMaxCdf max_cdf(n);
  return floor + below + (mean_from_cdf(lo, hi, 2000, [&](double x) { return max_cdf((x - 1) / cv); }) - lo);
}

Moments capped_moments(double cv, double cap) {
  if (cv <= 0) return {cap > 0 ? std::min(1.0, cap) : 1.0, 0};
  if (cap <= 0) return {1, cv};
  // X = 1 + cv Z, alpha = (cap - 1) / cv: E[min(X, cap)] = 1 - E[(X - cap)+], and
  // E[min(X, cap)^2] = E[X^2; Z < alpha] + cap^2 P(Z >= alpha).
  const double a = (cap - 1) / cv;
  const double below = cdf(a), tail = upper_tail(a), d = density(a);
  const double mean = 1 - (cv * d - (cap - 1) * tail);
  const double second = below - 2 * cv * d + cv * cv * (below - a * d) + cap * cap * tail;
  return {mean, std::sqrt(std::max(0.0, second - mean * mean))};
}

}  // namespace moesim::workload
