#pragma once
// The full fidelity's event core: every GPU's streams as state machines driven by one actor,
// instead of an actor per (GPU, stream) (issue 40).
//
// What is private to a GPU, its SMs and its NVLink egress port, is shared in moesim's own code
// (SharedRate: no other GPU's activity changes those shares). SimGrid's solver sees only the
// transfers that cross the NICs, whose links (NICs, a leaf's uplinks) other GPUs share. The actor
// runs the GPUs' events in time order on its own and hands the clock to SimGrid only to start a
// NIC transfer at its date or when the next event might come after a transfer's end
// (Activity::wait_any_for with the next event as timeout); while no transfer can have ended, it
// need not ask. A transfer cannot end before its bytes at its NIC's full rate plus the latency of
// the two NICs, so that is how far ahead it looks (nic_transfers.hpp).
#include <vector>

#include "gpu_state.hpp"

namespace moesim::engine {

// Runs one step of every GPU in `gpus` (the full platform's ranks, index_of[rank] its index)
// to its end. Call from inside an actor; returns at the simulated time the last task ends.
// Throws std::logic_error if some task can never run (a program that deadlocks).
void run_event_core(const platform::Platform& platform, std::vector<Gpu>& gpus, const std::vector<int>& index_of,
                    StepHooks& hooks);

}  // namespace moesim::engine
