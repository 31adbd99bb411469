#pragma once
// Runs a piece of work in a forked child process and returns the string it produced.
//
// Why: SimGrid 3.32 allows one Engine and one platform per process (a second Engine aborts with
// "Cannot change the model after the initialization"). Tests, sweeps and calibration runs that
// need several simulations therefore run each one in its own child: the body creates the Engine,
// builds the platform, runs it, and returns its result serialised (e.g. JSON).
#include <functional>
#include <string>

namespace moesim::platform {

// Forks; the child runs `body`, writes the returned string to a pipe and _exit(0)s (no atexit
// handlers, no destructors of the parent's objects). The parent waits and returns the string.
// Throws std::runtime_error, quoting the child's exit status or signal and the tail of its
// stderr, when the child throws, aborts (e.g. xbt_die) or exits otherwise. The child restores
// default handlers for fatal signals first, so a test framework's handlers stay the parent's.
// Call it from a process that has not created an Engine itself (the child inherits it).
std::string run_isolated(const std::function<std::string()>& body);

}  // namespace moesim::platform
