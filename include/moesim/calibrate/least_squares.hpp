#pragma once
// A small, deterministic Levenberg-Marquardt: the least-squares fit of a few bounded parameters
// to residuals a model computes (each a log ratio of modelled to measured time). The Jacobian is
// taken by forward differences, so any model will do, piecewise ones (NCCL's algorithm choice)
// included; parameters stay inside their bounds.
#include <functional>
#include <vector>

namespace moesim::calibrate {

struct BoundedParameter {
  double value = 0;     // the start, then the fit
  double lower = 0, upper = 0;
  bool log_scale = false;  // a rate or an efficiency: stepped in ln(value) (lower must be > 0)
};

using Residuals = std::function<std::vector<double>(const std::vector<double>& values)>;

struct LeastSquaresResult {
  std::vector<double> values;
  double cost_before = 0, cost_after = 0;  // sum of squared residuals
  int iterations = 0;
};

LeastSquaresResult least_squares(const Residuals& residuals, const std::vector<BoundedParameter>& start,
                                 int max_iterations = 60);

}  // namespace moesim::calibrate
