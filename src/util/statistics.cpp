#include "moesim/util/statistics.hpp"

#include <cmath>
#include <stdexcept>

namespace moesim::util {

double student_t975(int dof) {
  if (dof < 1) throw std::invalid_argument("student_t975: dof >= 1");
  // Tabulated (Abramowitz & Stegun, Table 26.10) to 30; beyond, the Cornish-Fisher expansion
  // around the normal quantile, accurate to 1e-4 there.
  static const double table[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
                                 2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
                                 2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (dof <= 30) return table[dof - 1];
  const double z = 1.959963984540054, v = dof;
  return z + (z * z * z + z) / (4 * v) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
}

Interval interval95(const std::vector<double>& xs) {
  if (xs.empty()) throw std::invalid_argument("interval95: no samples");
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  if (xs.size() == 1) return {mean, mean, mean};
  double ss = 0;
  for (double x : xs) ss += (x - mean) * (x - mean);
  const double n = static_cast<double>(xs.size());
  const double half = student_t975(static_cast<int>(xs.size()) - 1) * std::sqrt(ss / (n - 1) / n);
  return {mean, mean - half, mean + half};
}

}  // namespace moesim::util
