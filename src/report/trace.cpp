// The Chrome trace-event JSON writer (Perfetto, chrome://tracing). One process per observed
// pipeline rank (the folded representative, named with how many GPUs it stands for), one thread
// per stream, one complete ("X") event per task, "s"/"f" flow events from each pipeline send to
// the task of the receiving rank that waited for it, and a host track: the CPU thread issuing each
// compute segment's kernels from the segment's start (the model's CPU starts cold after each
// communication point), so host-bound stretches show as a host event as long as its segment.
// Timestamps in microseconds, the format's
// unit; they are written unrounded so that event durations add up to the report's breakdown.
#include "moesim/report/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace moesim::report {

using nlohmann::json;
using workload::Stream;
using workload::Task;
using workload::TaskKind;

namespace {

constexpr double kUs = 1e6;  // seconds -> microseconds

std::string_view group_name(workload::GroupRole g) {
  switch (g) {
    case workload::GroupRole::tp: return "tp";
    case workload::GroupRole::ep: return "ep";
    case workload::GroupRole::dp: return "dp";
    case workload::GroupRole::edp: return "edp";
    case workload::GroupRole::dp_shard: return "dp_shard";
    case workload::GroupRole::dp_replicate: return "dp_replicate";
    case workload::GroupRole::edp_shard: return "edp_shard";
    case workload::GroupRole::edp_replicate: return "edp_replicate";
  }
  return "?";
}

json task_args(const Task& t, double seconds) {
  json a = json::object();
  if (t.microbatch >= 0) a["microbatch"] = t.microbatch;
  if (t.chunk >= 0) a["chunk"] = t.chunk;
  a["phase"] = workload::to_string(t.phase);
  switch (t.kind) {
    case TaskKind::compute:
      // The cost model prices a segment (the kernels between two communication points) as a
      // whole, so a segment's kernels are summarised here rather than drawn one by one.
      a["kernels"] = t.kernels;
      a["flop"] = t.flop;
      a["model_flop"] = t.model_flop;
      a["achieved_tflops"] = seconds > 0 ? t.flop / seconds / 1e12 : 0.0;
      a["kernel_us"] = t.gpu_seconds * kUs;
      a["host_launch_excess_us"] = std::max(0.0, t.seconds - t.gpu_seconds) * kUs;
      if (t.recompute_seconds > 0) a["recompute_us"] = t.recompute_seconds * kUs;
      break;
    case TaskKind::collective:
      a["collective"] = platform::to_string(t.collective);
      a["group"] = group_name(t.group);
      if (t.ep_token_bytes > 0) {
        // An EP exchange: what the rank routes, one copy per token; the dispatcher decides how
        // many copies cross which link (the run's traffic table).
        a["tokens"] = t.ep_tokens;
        a["token_bytes"] = t.ep_token_bytes;
        a["bytes"] = t.ep_tokens * t.ep_token_bytes;
        a["kernel"] = t.ep_combine_kernel ? "combine" : "dispatch";
      } else {
        a["bytes"] = t.bytes;
      }
      break;
    case TaskKind::pp_send:
      a["bytes"] = t.bytes;
      a["to_pp_rank"] = t.peer_pp_rank;
      break;
    case TaskKind::host_copy:
      a["bytes"] = t.bytes;
      break;
  }
  return a;
}

json metadata_event(const char* name, int pid, int tid, json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// Which micro-batches get events: all of them, or the first and last `keep` when the trace
// would exceed its budget (the steady state in between repeats the same pattern).
struct Selection {
  int microbatches = 0;
  int keep = 0;  // per end; 0 = all
  bool kept(const Task& t) const {
    return keep == 0 || t.microbatch < keep || t.microbatch >= microbatches - keep;
  }
};

Selection select_microbatches(const driver::RunResult& r, std::size_t budget) {
  Selection sel;
  sel.microbatches = r.layout.microbatches;
  std::size_t total = 0, per_step = 0;
  for (const auto& st : r.sim.stages) {
    total += st.timeline.size();
    for (const auto& iv : st.timeline)
      if (r.program.stages[st.pp_rank].tasks[iv.task].microbatch < 0) ++per_step;
  }
  if (total <= budget || sel.microbatches <= 2) return sel;
  const double per_mb = static_cast<double>(total - per_step) / sel.microbatches;
  const double room = budget > per_step ? static_cast<double>(budget - per_step) : 0.0;
  sel.keep = std::max(1, static_cast<int>(room / per_mb / 2));
  if (2 * sel.keep >= sel.microbatches) sel.keep = 0;
  return sel;
}

// Whether the run simulated one GPU per role rather than every GPU.
bool folded(const driver::RunResult& r) { return r.sim.simulated_gpus < r.layout.world; }

// Folded, the observed GPU stands for its replicas; in full fidelity it is one of them, shown.
std::string process_name(const driver::RunResult& r, const engine::StageResult& st) {
  const std::string name = fmt::format("pp{} / rank {}", st.pp_rank, st.observed_rank);
  if (st.replicas <= 1) return name;
  return folded(r) ? fmt::format("{} (x{} replicas)", name, st.replicas)
                   : fmt::format("{} (1 of {} alike, all simulated)", name, st.replicas);
}

json metadata(const driver::RunResult& r, const Selection& sel, std::size_t omitted) {
  const plan::Layout& l = r.layout;
  const int replicas = r.sim.stages.empty() ? 1 : r.sim.stages.front().replicas;
  json m = {
      {"generator", std::string("moesim ") + MOESIM_VERSION},
      {"scenario", r.scenario.name},
      {"scenario_file", r.scenario.file},
      {"gpus", r.scenario.gpus},
      {"layout", fmt::format("tp {} cp {} pp {} vpp {} dp {} ep {} etp {} edp {}, {} micro-batches",
                             l.tp, l.cp, l.pp, l.vpp, l.dp, l.ep, l.etp, l.edp, l.microbatches)},
      {"step_time_s", r.metrics.step_time_s},
      {"model_tflops_per_gpu", r.metrics.tflops_per_gpu},
      {"fidelity", folded(r) ? "folded" : "full"},
      {"time_unit", "microseconds"},
      {"processes", folded(r) ? fmt::format("one per pipeline rank: its observed GPU, which stands for {} "
                                            "GPUs that do the same work at the same times", replicas)
                              : std::string("one per pipeline rank: the GPU whose time the report shows "
                                            "(every GPU was simulated)")},
      {"compute_events", "one per compute segment (the kernels between two communication points); "
                         "its kernel count, FLOPs and achieved TFLOP/s are args"},
      {"flows", "pipeline send -> the receiving rank's first task that waited for it"},
      {"summarised", sel.keep > 0},
  };
  if (sel.keep > 0) {
    m["kept_microbatches"] = fmt::format("0-{} and {}-{}", sel.keep - 1, sel.microbatches - sel.keep,
                                         sel.microbatches - 1);
    m["omitted_task_events"] = omitted;
  }
  return m;
}

// The first task of each program that waits for each pipeline message (-1: none).
std::vector<std::vector<int>> message_waiters(const workload::StepProgram& p) {
  std::vector<std::vector<int>> out(p.stages.size(), std::vector<int>(p.message_count, -1));
  for (size_t r = 0; r < p.stages.size(); ++r)
    for (size_t t = 0; t < p.stages[r].tasks.size(); ++t) {
      const int m = p.stages[r].tasks[t].wait_message.id;
      if (m >= 0 && out[r][m] < 0) out[r][m] = static_cast<int>(t);
    }
  return out;
}

// A flow event sits in the middle of its slice so that it binds to that slice unambiguously.
double mid_us(const engine::TaskInterval& iv) { return (iv.start_s + iv.end_s) / 2 * kUs; }

}  // namespace

std::string_view stream_track_name(Stream s) {
  switch (s) {
    case Stream::compute: return "compute";
    case Stream::tp_comm: return "TP communication";
    case Stream::ep_comm: return "EP communication (dispatch, combine)";
    case Stream::pp_send: return "PP send";
    case Stream::dp_comm: return "DP communication (gradients, parameters)";
    case Stream::dp_gather: return "FSDP parameter all-gathers";
    case Stream::host_copy: return "activation offload (host copies)";
  }
  return "?";
}

// The host thread's track, after the streams'.
constexpr int kHostTrack = workload::kStreams;

json trace_json(const driver::RunResult& r, const TraceOptions& options) {
  const workload::StepProgram& prog = r.program;
  bool recorded = !r.sim.stages.empty() && prog.stages.size() == static_cast<size_t>(r.layout.pp);
  for (const auto& st : r.sim.stages) recorded = recorded && !st.timeline.empty();
  if (!recorded)
    throw std::invalid_argument("a trace needs a run made with engine::Options::record_timeline");

  const Selection sel = select_microbatches(r, options.max_task_events);
  json events = json::array();
  std::size_t omitted = 0;
  // Per pp rank: where each task ran (null when not recorded or left out of the trace).
  std::vector<std::vector<const engine::TaskInterval*>> placed(prog.stages.size());
  for (const engine::StageResult& st : r.sim.stages) {
    const int pid = st.pp_rank;
    events.push_back(metadata_event("process_name", pid, 0, {{"name", process_name(r, st)}}));
    events.push_back(metadata_event("process_sort_index", pid, 0, {{"sort_index", pid}}));
    for (int s = 0; s < workload::kStreams; ++s) {
      events.push_back(metadata_event("thread_name", pid, s,
                                      {{"name", stream_track_name(static_cast<Stream>(s))}}));
      events.push_back(metadata_event("thread_sort_index", pid, s, {{"sort_index", s}}));
    }
    events.push_back(metadata_event("thread_name", pid, kHostTrack, {{"name", "host CPU (issues the kernels)"}}));
    events.push_back(metadata_event("thread_sort_index", pid, kHostTrack, {{"sort_index", kHostTrack}}));
    const auto& tasks = prog.stages[st.pp_rank].tasks;
    placed[st.pp_rank].assign(tasks.size(), nullptr);
    for (const engine::TaskInterval& iv : st.timeline) {
      const Task& t = tasks[iv.task];
      if (!sel.kept(t)) {
        ++omitted;
        continue;
      }
      placed[st.pp_rank][iv.task] = &iv;
      const double seconds = iv.end_s - iv.start_s;
      events.push_back({{"ph", "X"}, {"name", t.label}, {"cat", workload::to_string(t.activity)},
                        {"pid", pid}, {"tid", static_cast<int>(t.stream)},
                        {"ts", iv.start_s * kUs}, {"dur", seconds * kUs},
                        {"args", task_args(t, seconds)}});
      if (t.kind == TaskKind::compute && t.host_seconds > 0)
        events.push_back({{"ph", "X"}, {"name", t.label}, {"cat", "host"}, {"pid", pid}, {"tid", kHostTrack},
                          {"ts", iv.start_s * kUs}, {"dur", std::min(t.host_seconds, seconds) * kUs},
                          {"args", {{"host_us", t.host_seconds * kUs}, {"kernels", t.kernels}}}});
    }
  }

  const auto waiters = message_waiters(prog);
  for (size_t from = 0; from < placed.size(); ++from)
    for (size_t id = 0; id < placed[from].size(); ++id) {
      const engine::TaskInterval* send = placed[from][id];
      const Task& t = prog.stages[from].tasks[id];
      if (!send || t.kind != TaskKind::pp_send) continue;
      const int to = t.peer_pp_rank;
      const int waiter = waiters[to][t.message.id];
      const bool seen = waiter >= 0 && static_cast<size_t>(waiter) < placed[to].size();
      const engine::TaskInterval* recv = seen ? placed[to][waiter] : nullptr;
      if (!recv) continue;
      const Stream recv_stream = prog.stages[to].tasks[waiter].stream;
      events.push_back({{"ph", "s"}, {"name", "pp message"}, {"cat", "pp"}, {"id", t.message.id},
                        {"pid", static_cast<int>(from)}, {"tid", static_cast<int>(Stream::pp_send)},
                        {"ts", mid_us(*send)}});
      events.push_back({{"ph", "f"}, {"bp", "e"}, {"name", "pp message"}, {"cat", "pp"},
                        {"id", t.message.id}, {"pid", to}, {"tid", static_cast<int>(recv_stream)},
                        {"ts", mid_us(*recv)}});
    }

  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"metadata", metadata(r, sel, omitted)}};
}

}  // namespace moesim::report
