// Method check (docs/method.md, "Platform and engine"): the folded representative and the full per-rank simulation agree
// with each other and with the closed form for every collective, for groups inside a domain and
// across domains (to rounding: every spanned domain holds the same number of members).
#include <catch2/catch.hpp>

#include "test_platform_support.hpp"

using namespace moesim::platform;
using namespace moesim::platform::testing;

TEST_CASE("folded and full agree for every collective and placement", "[platform]") {
  struct Case {
    const char* what;
    Topology topology;
    Group group;
  };
  const Case cases[] = {
      {"8 ranks in an NVL72 domain", gb300_like(72), range_group(0, 8)},
      {"32 ranks in an NVL72 domain", gb300_like(72), range_group(0, 32)},
      {"64 ranks in an NVL72 domain", gb300_like(72), range_group(0, 64)},
      {"8 ranks over 2 domains of 4", gb300_like(8, 4), range_group(0, 8)},
      {"32 ranks over 4 HGX domains", gb300_like(32, 8), range_group(0, 32)},
      {"64 ranks as 2 domains x 32", gb300_like(64, 32), range_group(0, 64)},
      {"64 ranks as 8 HGX domains x 8", gb300_like(64, 8), range_group(0, 64)},
  };
  for (const Case& c : cases) {
    for (CollectiveKind kind : {CollectiveKind::all_to_all, CollectiveKind::all_gather,
                                CollectiveKind::reduce_scatter, CollectiveKind::all_reduce}) {
      const double bytes = kind == CollectiveKind::all_to_all ? 2e6 : 128e6;
      INFO(c.what << ", " << to_string(kind));
      const double full = simulate(c.topology, Fidelity::full, kind, c.group, bytes);
      const double folded = simulate(c.topology, Fidelity::folded, kind, c.group, bytes);
      CHECK(folded == Approx(full).epsilon(1e-9));
      CHECK(full == Approx(closed_form_seconds(c.topology, kind, c.group, bytes)).epsilon(1e-9));
    }
  }
}
