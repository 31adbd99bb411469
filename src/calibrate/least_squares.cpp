// Levenberg-Marquardt with Marquardt's diagonal scaling (moesim/calibrate/least_squares.hpp).
#include "moesim/calibrate/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace moesim::calibrate {

namespace {

double sum_of_squares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

// Solves A x = b for a small symmetric positive definite A (Gaussian elimination with partial
// pivoting; A is at most a handful of parameters wide). False when A is singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const std::size_t n = b.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t row = col + 1; row < n; ++row)
      if (std::abs(a[row][col]) > std::abs(a[pivot][col])) pivot = row;
    if (std::abs(a[pivot][col]) < 1e-300) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (std::size_t row = col + 1; row < n; ++row) {
      const double f = a[row][col] / a[col][col];
      for (std::size_t k = col; k < n; ++k) a[row][k] -= f * a[col][k];
      b[row] -= f * b[col];
    }
  }
  x.assign(n, 0);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return true;
}

}  // namespace

LeastSquaresResult least_squares(const Residuals& residuals, const std::vector<BoundedParameter>& start,
                                 int max_iterations) {
  const std::size_t n = start.size();
  for (const BoundedParameter& p : start)
    if (!(p.lower <= p.value && p.value <= p.upper) || (p.log_scale && p.lower <= 0))
      throw std::invalid_argument("least_squares: a start outside its bounds, or a log-scaled bound at or below 0");
  // u: the coordinates the steps are taken in (ln value for log-scaled parameters).
  auto to_value = [&](std::size_t i, double u) {
    const double v = start[i].log_scale ? std::exp(u) : u;
    return std::clamp(v, start[i].lower, start[i].upper);
  };
  auto to_u = [&](std::size_t i, double v) { return start[i].log_scale ? std::log(v) : v; };
  std::vector<double> values(n), u(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = start[i].value, u[i] = to_u(i, values[i]);

  std::vector<double> r = residuals(values);
  LeastSquaresResult out;
  out.cost_before = sum_of_squares(r);
  double cost = out.cost_before, lambda = 1e-3;
  for (int it = 0; it < max_iterations && n > 0; ++it) {
    out.iterations = it + 1;
    // Forward differences, stepped away from the nearer bound.
    std::vector<std::vector<double>> jac(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double h = start[i].log_scale ? 1e-4 : std::max(1e-4 * std::abs(u[i]), 1e-4);
      const double up = to_value(i, u[i] + h) > values[i] ? h : -h;
      std::vector<double> probe = values;
      probe[i] = to_value(i, u[i] + up);
      const double du = to_u(i, probe[i]) - u[i];
      const std::vector<double> rp = residuals(probe);
      jac[i].resize(r.size());
      for (std::size_t k = 0; k < r.size(); ++k) jac[i][k] = du != 0 ? (rp[k] - r[k]) / du : 0;
    }
    std::vector<std::vector<double>> jtj(n, std::vector<double>(n, 0));
    std::vector<double> jtr(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = 0; k < r.size(); ++k) jtj[i][j] += jac[i][k] * jac[j][k];
      for (std::size_t k = 0; k < r.size(); ++k) jtr[i] -= jac[i][k] * r[k];
    }
    bool improved = false;
    for (int attempt = 0; attempt < 12 && !improved; ++attempt) {
      std::vector<std::vector<double>> a = jtj;
      for (std::size_t i = 0; i < n; ++i) a[i][i] += lambda * std::max(jtj[i][i], 1e-12);
      std::vector<double> step;
      if (!solve(a, jtr, step)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> trial_values(n), trial_u(n);
      for (std::size_t i = 0; i < n; ++i) {
        trial_values[i] = to_value(i, u[i] + step[i]);
        trial_u[i] = to_u(i, trial_values[i]);
      }
      const std::vector<double> trial_r = residuals(trial_values);
      const double trial_cost = sum_of_squares(trial_r);
      if (trial_cost < cost) {
        const double gain = cost - trial_cost;
        values = trial_values, u = trial_u, r = trial_r;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (gain <= 1e-12 * std::max(cost, 1e-30)) it = max_iterations;  // converged
        cost = trial_cost;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  out.values = values;
  out.cost_after = cost;
  return out;
}

}  // namespace moesim::calibrate
