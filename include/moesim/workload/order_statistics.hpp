#pragma once
// Expected order statistics behind the folded fidelity's variability (docs/method.md,
// "Variability and expert load"): one representative stands for a synchronisation group, so it
// takes the expected time of the group's slowest member. All by numerical quadrature of the
// exact distribution functions; normal spreads throughout.
#include <limits>
#include <optional>

namespace moesim::workload {

// P(max of n i.i.d. standard normals <= x) = Phi(x)^n, accurate where Phi is close to 1 (the
// upper tail of a large maximum).
double normal_max_cdf(double x, double n);

// normal_max_cdf for one n, bit for bit, without evaluating it where it rounds to exactly 1 or 0
// (the quadratures below spend most of their points there).
class NormalMaxCdf {
 public:
  explicit NormalMaxCdf(double n);
  double operator()(double x) const {
    if (x >= certain_one_from_) return 1.0;
    if (x <= certain_zero_below_) return 0.0;
    return normal_max_cdf(x, n_);
  }
  // Where the shortcuts start (infinite: none, as for n = 1).
  double certain_one_from() const { return certain_one_from_; }
  double certain_zero_below() const { return certain_zero_below_; }

 private:
  double n_;
  double certain_one_from_ = std::numeric_limits<double>::infinity();
  double certain_zero_below_ = -std::numeric_limits<double>::infinity();
};

// E[max of n i.i.d. standard normals] (0 for n = 1). Throws std::invalid_argument for n < 1.
double expected_max_standard_normal(int n);

// How one synchronised stretch of work is spread over the GPUs of a job.
struct SlowestQuery {
  int world = 1;             // GPUs of the pipeline stage running the stretch (all its pipelines)
  int group = 1;             // GPUs that wait for each other at the end of the stretch
  double persistent_cv = 0;  // per-GPU speed spread, the same for the whole step
  double fresh_cv = 0;       // spread drawn anew for every stretch (kernel jitter, routed tokens)
  // The stage's slowest GPU speed in standard deviations, when a sampled run knows it; absent:
  // its distribution (the maximum of `world` standard normals).
  std::optional<double> slowest_z;
};

// Expected time factor of the stretch on the stage's critical path, the larger of (1) the group
// holding the stage's slowest GPU: E[max over it of (1 + persistent_cv a_i)(1 + fresh_cv b_i)],
// that GPU's a the stage's maximum and its peers' (a, b) combined into N(0, sqrt(p^2 + f^2));
// and (2) the slowest of world / group equally spread groups, when the fresh spread dominates.
// Exact when either spread is zero (an order statistic of normals); with both,
// tests/unit/test_order_statistics.cpp checks it against a Monte-Carlo of the mechanism to 0.1 %
// of the step.
double expected_slowest_factor(const SlowestQuery& q);

// E[max(floor, min(cap, M))], M the maximum of n i.i.d. N(1, cv); cap <= 0: no cap.
double expected_capped_max(int n, double cv, double floor, double cap);

// Mean and standard deviation of min(X, cap) for X ~ N(1, cv); cap <= 0: no cap.
struct Moments {
  double mean = 1;
  double sd = 0;
};
Moments capped_moments(double cv, double cap);

}  // namespace moesim::workload
