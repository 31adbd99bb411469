#pragma once
// The last checks between a scenario and SimGrid, and between SimGrid and the report. Every
// input has a physical range (the schema), but quantities derived from several of them (a
// task's duration, a domain's uplink) and the result itself are checked too: SimGrid aborts on
// an infinite rate ("The Impossible Did Happen"), and a report must not print a 300-digit step
// time or an MFU above 100 %. Errors are ConfigErrors naming the scenario's file and the key.
#include "moesim/config/specs.hpp"
#include "moesim/platform/platform.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::driver {

// The platform's speeds, bandwidths and latencies (platform::check_topology) and the program's
// task durations and sizes (workload::check_program); a placement the fidelity can simulate.
void check_simulation_inputs(const Scenario& s, const workload::StepProgram& program, platform::Fidelity fidelity);

// A finite, positive step time and a throughput within the GPU's dense peak.
void check_result(const Scenario& s, double step_time_s, double tflops_per_gpu, double peak_tflops);

}  // namespace moesim::driver
