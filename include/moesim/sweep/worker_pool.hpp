#pragma once
// The sweep's worker pool is the shared one (batch/worker_pool.hpp).
#include "moesim/batch/worker_pool.hpp"

namespace moesim::sweep {

using batch::available_cores;
using batch::run_in_workers;
using batch::WorkerOutcome;

}  // namespace moesim::sweep
