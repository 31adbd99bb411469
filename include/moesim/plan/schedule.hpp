#pragma once
// Pipeline schedules: the order in which one pipeline rank runs the passes of its (micro-batch,
// model chunk) pairs, as the schedules' reference implementations issue them. A schedule is a
// pure function of the layout: the workload places its passes on streams, the memory model
// counts the activations it holds, and both read the same order.
//
// Schedules (layout.schedule):
//  - "1f1b": Megatron-LM's 1F1B, interleaved over vpp model chunks when vpp > 1
//    (schedules.py: forward_backward_pipelining_with[out]_interleaving, get_pp_rank_microbatches).
//  - "zb-h1": zero-bubble ZB-H1, 1F1B with the backward split into B (input gradients) and W
//    (weight gradients), W delayed by the rank index (sail-sg zb-h1-quick-start schedules.py).
//  - "zb-v": zero-bubble ZB-V, two chunks per rank in a V (sail-sg scheduler/zbv.py, built for
//    equal F, B and W times as the paper's handcrafted ZB-V assumes).
//  - "dualpipe": DeepSeek's DualPipe, micro-batches fed from both ends, each rank holding the
//    stage of either direction (deepseek-ai/DualPipe dualpipe.py).
//  - "dualpipev": DualPipeV, the cut-in-half DualPipe on a V (deepseek-ai/DualPipe dualpipev.py).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moesim::plan {

struct Layout;

enum class Schedule : std::uint8_t { one_f_one_b, zb_h1, zb_v, dualpipe, dualpipe_v };

// Names: moesim::pipeline_schedule_names() (config/specs.hpp), in this order; what a search
// enumerates.
std::string_view to_string(Schedule s);
// Throws std::invalid_argument for a name not in pipeline_schedule_names().
Schedule parse_schedule(std::string_view name);

// What one schedule entry runs.
enum class Pass : std::uint8_t {
  forward,      // F
  backward,     // a whole backward: input and weight gradients (B and W in one pass)
  input_grad,   // B: input gradients only; the weight gradients run later as a W entry
  weight_grad,  // W: the weight gradients of an earlier B of the same (micro-batch, chunk)
};
std::string_view to_string(Pass p);

struct ScheduleEntry {
  Pass pass = Pass::forward;
  int microbatch = 0;
  int chunk = 0;        // model chunk on this rank (Layout::stage_index gives its virtual stage)
  // The backward half of an F&B step (DualPipe's overlapped chunks, Megatron's combined 1F1B):
  // the step starts once the inputs of both passes have arrived, and the stack may overlap the
  // two passes' communication with each other's compute (recipe.ep_overlap).
  bool paired = false;
};

// The entries of pipeline rank `pp_rank`, in the order it issues them.
std::vector<ScheduleEntry> pipeline_schedule(const Layout& l, int pp_rank);

// Activations held on a rank: a (micro-batch, chunk) pair holds what its forward saved from the
// moment the forward is issued until its weight gradients are done (the weight-gradient GEMMs
// read the saved inputs; a whole backward or a W ends it, a B does not).
struct InflightPeak {
  std::vector<int> per_chunk;  // pairs of each chunk held at the peak
  int total() const;
};
// The peak over the rank's schedule of sum_c held_c * chunk_weight[c] (e.g. activation bytes per
// pair of chunk c), with the held counts at the first point that reaches it.
InflightPeak inflight_peak(const Layout& l, int pp_rank, const std::vector<double>& chunk_weight);

}  // namespace moesim::plan
