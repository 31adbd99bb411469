#pragma once
// Confidence intervals of a mean over seeds (--samples): Student's t, two-sided 95 %.
#include <vector>

namespace moesim::util {

struct Interval {
  double mean = 0;
  double low = 0;   // of the 95 % confidence interval of the mean; = mean for one sample
  double high = 0;
};

// Two-sided 95 % quantile of Student's t (dof >= 1).
double student_t975(int dof);
// Throws std::invalid_argument for no samples.
Interval interval95(const std::vector<double>& xs);

}  // namespace moesim::util
