#pragma once
// The step as a Chrome trace-event JSON file (opens in Perfetto and chrome://tracing): one
// process per simulated representative GPU, one thread per stream, one complete event per task,
// flow arrows for pipeline messages. Format decisions are in docs/quickstart.md (section Trace).
#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "moesim/driver/run.hpp"

namespace moesim::report {

struct TraceOptions {
  // Above this many task events the middle (steady-state) micro-batches are left out and the
  // metadata says which were kept. At about 400 bytes per event with its args and flows, the
  // default keeps a file under 100 MB.
  std::size_t max_task_events = 250'000;
};

// Needs a run made with engine::Options::record_timeline (timelines and the program);
// throws std::invalid_argument otherwise.
nlohmann::json trace_json(const driver::RunResult& r, const TraceOptions& options = {});

// The thread (track) name of each stream, in workload::Stream order.
std::string_view stream_track_name(workload::Stream s);

}  // namespace moesim::report
