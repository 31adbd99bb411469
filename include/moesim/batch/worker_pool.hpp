#pragma once
// Runs independent jobs in forked worker processes, a bounded number at a time: the parallel
// layer under `moesim sweep` and `moesim search`.
//
// Why processes and not threads: every simulation already forks (platform::run_isolated, as
// SimGrid allows one engine per process), and forking from a multi-threaded process is unsafe.
// One short-lived worker per job keeps each job's memory and crashes to itself.
#include <functional>
#include <string>
#include <vector>

namespace moesim::batch {

struct WorkerOutcome {
  bool ok = false;
  std::string output;  // what the job returned; if !ok, why the worker failed
};

// Runs job(i) for i in [0, count) in at most `jobs` workers at once and returns the outcomes in
// job order, whatever order they finish in. `on_done(i, outcome)` runs in the calling process
// as each job finishes (completion order), e.g. for progress.
std::vector<WorkerOutcome> run_in_workers(int count, int jobs, const std::function<std::string(int)>& job,
                                          const std::function<void(int, const WorkerOutcome&)>& on_done);

// Processors available to this process: the default for --jobs.
int available_cores();

}  // namespace moesim::batch
