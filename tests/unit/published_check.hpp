#pragma once
// Component figures against their published values, for the communication tests: a figure is
// reproduced within 10 % unless listed as a known miss (documented in docs/method.md with its
// cause). A known miss carries its recorded error, a ratchet: it must stay outside 10 % (a fix
// shows here, and its record is then removed) and may not grow by more than half a point.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace moesim::test {

struct PublishedFigure {
  std::string what;
  double published;
  double simulated;
  double recorded_miss_percent = 0;  // 0: expected within 10 %; else the error recorded, in %
};

inline void check_published(const std::vector<PublishedFigure>& rows) {
  for (const PublishedFigure& p : rows) {
    const double error = p.simulated / p.published - 1;
    INFO(p.what << ": published " << p.published << ", moesim " << p.simulated << " (" << 100 * error << " %)");
    if (p.recorded_miss_percent != 0) {
      INFO("recorded miss " << p.recorded_miss_percent << " %");
      CHECK(std::abs(error) > 0.10);
      CHECK(100 * std::abs(error) <= std::abs(p.recorded_miss_percent) + 0.5);
    } else {
      CHECK(std::abs(error) <= 0.10);
    }
  }
}

}  // namespace moesim::test
