#include "moesim/platform/simulate_plan.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "moesim/platform/isolated_run.hpp"

namespace moesim::platform {

double simulate_plan_seconds(const Topology& t, const Group& g, const TierLoad& load, Fidelity fidelity) {
  const std::string out = run_isolated([&]() -> std::string {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    const std::vector<int> reps = {g.ranks.front()};
    auto platform = Platform::build(t, fidelity, reps);
    Platform* p = platform.get();
    const std::vector<int> actors = fidelity == Fidelity::full ? g.ranks : reps;
    // No exception may leave an actor (SimGrid would abort the process): the first is kept, the
    // other actors killed, and it is rethrown once the engine returns.
    std::exception_ptr failure;
    for (int r : actors)
      sg4::Actor::create("rank" + std::to_string(r), p->host(r), [p, &g, &load, r, &failure] {
        try {
          run_load(*p, g, load, r, "plan");
        } catch (const std::exception&) {
          if (!failure) failure = std::current_exception();
          sg4::Actor::kill_all();
        }
      });
    engine->run();
    if (failure) std::rethrow_exception(failure);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", sg4::Engine::get_clock());
    return buf;
  });
  return std::stod(out);
}

}  // namespace moesim::platform
