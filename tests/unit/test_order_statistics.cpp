// The folded fidelity's expected order statistics (workload/order_statistics.hpp) against
// closed forms derived by hand and against Monte-Carlo of the mechanism they stand for.
// Tolerances were fixed before the results were seen: quadrature 1e-6; Monte-Carlo 4 standard
// errors of the estimate (stated per case).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "moesim/workload/order_statistics.hpp"

using namespace moesim::workload;

namespace {

// Mean and standard error of `draw()` over `n` samples.
template <class F>
std::pair<double, double> monte_carlo(int n, F&& draw) {
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean) / n)};
}

}  // namespace

TEST_CASE("NormalMaxCdf skips only evaluations that round to exactly 1 or 0", "[order_statistics]") {
  // Bit for bit what normal_max_cdf computes, on a grid finer than the quadratures' and through
  // both saturated tails, for group sizes from 2 to a million; and the shortcuts start within
  // half a standard deviation of where the exact values saturate (else they save little).
  constexpr double kStep = 1.0 / 1024;
  for (const double n : {1.0, 2.0, 3.0, 7.0, 97.0, 128.0, 1024.0, 65536.0, 1e6}) {
    const NormalMaxCdf fast(n);
    int mismatches = 0;
    double ones_from = 45, zeros_below = -45;  // where the exact values stay saturated
    for (double x = -45; x <= 45; x += kStep) {
      const double exact = normal_max_cdf(x, n);
      mismatches += fast(x) != exact;
      if (exact != 1.0) ones_from = x + kStep;
      if (exact == 0.0 && zeros_below == x - kStep) zeros_below = x;
    }
    INFO("n = " << n << ": exact 1 from " << ones_from << ", shortcut from " << fast.certain_one_from()
                << "; exact 0 below " << zeros_below << ", shortcut below " << fast.certain_zero_below());
    CHECK(mismatches == 0);
    if (n == 1) {
      CHECK(std::isinf(fast.certain_one_from()));
      CHECK(std::isinf(fast.certain_zero_below()));
    } else {
      CHECK(fast.certain_one_from() - ones_from <= 0.5);
      CHECK(zeros_below - fast.certain_zero_below() <= 0.5);
    }
  }
}

TEST_CASE("expected maximum of n standard normals: closed forms for 1, 2 and 3", "[order_statistics]") {
  // E[max(X1, X2)] = E|X1 - X2| / 2 = sqrt(2) sqrt(2/pi) / 2 = 1/sqrt(pi); for three, 3/(2 sqrt(pi))
  // (David & Nagaraja, Order Statistics, 3rd ed., §3.2; both follow from E[X_(n)] by symmetry).
  const double pi = 3.141592653589793;
  CHECK(expected_max_standard_normal(1) == 0);
  CHECK(expected_max_standard_normal(2) == Approx(1 / std::sqrt(pi)).epsilon(1e-6));
  CHECK(expected_max_standard_normal(3) == Approx(1.5 / std::sqrt(pi)).epsilon(1e-6));
  // Grows with n, as sqrt(2 ln n) to leading order.
  double previous = 0;
  for (int n : {4, 32, 256, 1024, 8192}) {
    const double e = expected_max_standard_normal(n);
    CHECK(e > previous);
    CHECK(e < std::sqrt(2 * std::log(n)));
    previous = e;
  }
  CHECK_THROWS_AS(expected_max_standard_normal(0), std::invalid_argument);
}

TEST_CASE("expected maximum of 32 and 1,024 standard normals against Monte-Carlo", "[order_statistics]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z;
  for (int n : {32, 1024}) {
    const auto [mean, se] = monte_carlo(4000, [&] {
      double m = -1e300;
      for (int i = 0; i < n; ++i) m = std::max(m, z(rng));
      return m;
    });
    INFO("n " << n << ": Monte-Carlo " << mean << " +- " << se);
    CHECK(std::abs(expected_max_standard_normal(n) - mean) < 4 * se);
  }
}

TEST_CASE("the slowest-member factor reduces to a maximum of normals when one spread is zero", "[order_statistics]") {
  // Persistent spread only: the job runs at its slowest GPU, 1 + cv E[max of world normals].
  SlowestQuery q;
  q.world = 256;
  q.group = 32;
  q.persistent_cv = 0.0148;
  CHECK(expected_slowest_factor(q) == Approx(1 + 0.0148 * expected_max_standard_normal(256)).epsilon(1e-6));
  // Fresh spread only: every stretch waits for the slowest of its group, 1 + cv E[max of group].
  q.persistent_cv = 0;
  q.fresh_cv = 0.01;
  CHECK(expected_slowest_factor(q) == Approx(1 + 0.01 * expected_max_standard_normal(32)).epsilon(1e-6));
  // Neither: nominal. A known slowest GPU without jitter: exactly its speed.
  q.fresh_cv = 0;
  CHECK(expected_slowest_factor(q) == 1);
  q.persistent_cv = 0.02;
  q.slowest_z = 2.5;
  CHECK(expected_slowest_factor(q) == Approx(1 + 0.02 * 2.5).epsilon(1e-4));
  q.group = 300;
  CHECK_THROWS_AS(expected_slowest_factor(q), std::invalid_argument);
}

TEST_CASE("a stretch nobody waits for keeps its mean: the fresh spread of a lone GPU averages out",
          "[order_statistics]") {
  // E[(1 + s A)(1 + c b)] = 1 + s E[A] for b independent of A with mean 0, whatever c.
  SlowestQuery q;
  q.world = 128;
  q.group = 1;
  q.persistent_cv = 0.0148;
  for (const double fresh : {0.0, 0.002, 0.05}) {
    q.fresh_cv = fresh;
    CHECK(expected_slowest_factor(q) == 1 + 0.0148 * expected_max_standard_normal(128));
  }
  q.slowest_z = 2.75;  // a sampled run: the stage's own slowest GPU
  CHECK(expected_slowest_factor(q) == 1 + 0.0148 * 2.75);
  // A second member waiting at the stretch's end can only add to it.
  q.slowest_z.reset();
  q.group = 2;
  CHECK(expected_slowest_factor(q) > 1 + 0.0148 * expected_max_standard_normal(128));
}

TEST_CASE("the slowest-member factor with both spreads against Monte-Carlo of a synchronised job",
          "[order_statistics]") {
  // The mechanism: world / group groups; every GPU keeps its speed a for the whole step; each of
  // K stretches draws fresh b per GPU and the group waits for its slowest; the job ends with its
  // slowest group. Per trial: max over groups of the mean over stretches of the group maximum.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z;
  constexpr int kStretches = 200, kTrials = 300;
  struct Case {
    int world, group;
    double persistent, fresh;
  };
  for (const Case c : {Case{256, 32, 0.0148, 0.004}, Case{1024, 32, 0.0148, 0.004}, Case{128, 16, 0.01, 0.01},
                       Case{64, 8, 0.005, 0.02}}) {
    std::vector<double> a(static_cast<std::size_t>(c.world));
    const auto [mean, se] = monte_carlo(kTrials, [&] {
      for (double& x : a) x = z(rng);
      double job = 0;
      for (int g = 0; g < c.world / c.group; ++g) {
        double sum = 0;
        for (int k = 0; k < kStretches; ++k) {
          double slowest = 0;
          for (int i = 0; i < c.group; ++i)
            slowest = std::max(slowest, (1 + c.persistent * a[static_cast<std::size_t>(g * c.group + i)]) *
                                            (1 + c.fresh * z(rng)));
          sum += slowest;
        }
        job = std::max(job, sum / kStretches);
      }
      return job;
    });
    SlowestQuery q;
    q.world = c.world;
    q.group = c.group;
    q.persistent_cv = c.persistent;
    q.fresh_cv = c.fresh;
    const double folded = expected_slowest_factor(q);
    INFO("world " << c.world << " group " << c.group << ": folded " << folded << ", Monte-Carlo " << mean << " +- "
                  << se);
    // Within the Monte-Carlo's 4 standard errors or 0.1 % of the step (the approximation's
    // stated accuracy), whichever is larger.
    CHECK(std::abs(folded - mean) < std::max(4 * se, 1e-3));
  }
}

TEST_CASE("capped maxima and moments against their definitions", "[order_statistics]") {
  // No spread: the mean, floored and capped.
  CHECK(expected_capped_max(32, 0, 0, 0) == 1);
  CHECK(expected_capped_max(32, 0, 0, 0.9) == 0.9);
  CHECK(expected_capped_max(32, 0, 1.2, 0) == 1.2);
  // No cap and a floor far below: 1 + cv E[max].
  CHECK(expected_capped_max(32, 0.05, -10, 0) == Approx(1 + 0.05 * expected_max_standard_normal(32)).epsilon(1e-6));
  // Moments of min(X, cap): no cap -> (1, cv); a cap far above -> the same; at the mean, by hand:
  // E[min(X, 1)] = 1 - cv phi(0) = 1 - cv / sqrt(2 pi).
  const Moments free = capped_moments(0.1, 0);
  CHECK(free.mean == 1);
  CHECK(free.sd == 0.1);
  CHECK(capped_moments(0.1, 3).mean == Approx(1).epsilon(1e-9));
  CHECK(capped_moments(0.1, 3).sd == Approx(0.1).epsilon(1e-9));
  CHECK(capped_moments(0.1, 1).mean == Approx(1 - 0.1 / std::sqrt(2 * 3.141592653589793)).epsilon(1e-9));

  std::mt19937_64 rng(3);
  std::normal_distribution<double> z;
  const double cv = 0.2, cap = 1.1;
  const auto [mean_max, se_max] = monte_carlo(20000, [&] {
    double m = -1e300;
    for (int i = 0; i < 8; ++i) m = std::max(m, 1 + cv * z(rng));
    return std::max(1.0, std::min(cap, m));
  });
  CHECK(std::abs(expected_capped_max(8, cv, 1, cap) - mean_max) < 4 * se_max);
  std::vector<double> xs(200000);
  for (double& x : xs) x = std::min(cap, 1 + cv * z(rng));
  double m = 0, m2 = 0;
  for (double x : xs) m += x;
  m /= xs.size();
  for (double x : xs) m2 += (x - m) * (x - m);
  const double sd = std::sqrt(m2 / xs.size());
  CHECK(capped_moments(cv, cap).mean == Approx(m).epsilon(2e-3));
  CHECK(capped_moments(cv, cap).sd == Approx(sd).epsilon(1e-2));
}
