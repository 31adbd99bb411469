#pragma once
// One collective plan simulated alone on an idle platform (for `moesim collective` and tests):
// the same platform and runner the training step uses.
#include "moesim/platform/collective.hpp"

namespace moesim::platform {

// Runs `load` for the group on a platform of `t`, in a child process (isolated_run.hpp), and
// returns the simulated seconds until the last member is done. Folded: the first member of the
// group alone, as the step's representative; full: every member, each with `load` (a symmetric
// placement: every spanned domain holds as many members).
double simulate_plan_seconds(const Topology& t, const Group& g, const TierLoad& load, Fidelity fidelity);

}  // namespace moesim::platform
