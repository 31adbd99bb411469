#pragma once
// One training step as a program per pipeline rank: tasks on streams with dependencies, the way
// a CUDA stream executes kernels in order and waits on events. All ranks of a pipeline stage
// run the same program (balanced routing), so one program per pp rank serves both fidelities;
// the engine resolves each task's group role to the ranks of the GPU that runs it.
#include <cstdint>
#include <string>
#include <vector>

#include "moesim/platform/collective.hpp"

namespace moesim::workload {

// dp_comm carries the data-parallel reductions (and the distributed optimizer's gathers);
// dp_gather the per-block parameter gathers of FSDP, which FSDP2 issues on a stream of their own;
// host_copy the offloaded activations' copies to and from host memory (copy engines).
enum class Stream : std::uint8_t { compute, tp_comm, ep_comm, pp_send, dp_comm, dp_gather, host_copy };
inline constexpr int kStreams = 7;

// host_copy: a copy between the GPU and host memory over the GPU's own host link, `seconds`
// long, beside the SMs.
enum class TaskKind : std::uint8_t { compute, collective, pp_send, host_copy };

// Which group of the running GPU a collective uses. Under HSDP (layout.dp_shard) the data-parallel
// groups split into the ranks a block is sharded over and the replicas of each shard.
enum class GroupRole : std::uint8_t { tp, ep, dp, edp, dp_shard, dp_replicate, edp_shard, edp_replicate };
inline constexpr int kGroupRoles = 8;

// What the time is spent on, for the breakdown.
enum class Activity : std::uint8_t {
  compute, tp_comm, ep_dispatch, ep_combine, pp_comm, dp_grad_sync, dp_param_gather, optimizer, host_copy
};
std::string_view to_string(Activity a);
// The dispatch's EP exchange carries the router's probabilities with its tokens, forward, and
// their gradients back (HybridEP's FORWARD_DISPATCH and BACKWARD_COMBINE kernels); the combine's
// carries none in either pass (HEP: hybrid_ep_backend.cuh; MLM-A2A: fused_a2a.py).
constexpr bool ep_carries_probabilities(Activity a) { return a == Activity::ep_dispatch; }

// A task's pass: forward, a whole backward, a backward's input-gradient part (B) or its
// weight-gradient part (W) when the schedule splits them, or the once-per-step work.
enum class Phase : std::uint8_t { forward, backward, input_grad, weight_grad, step };
std::string_view to_string(Phase p);

// A message between pipeline ranks: forward activations or backward gradients of one
// micro-batch for one virtual stage.
struct MessageKey {
  std::int32_t id = -1;  // dense index: (direction * microbatches + microbatch) * stages + stage,
                         // direction 0 for activations, 1 for gradients; stage = the receiver's
};

struct Task {
  TaskKind kind = TaskKind::compute;
  Stream stream = Stream::compute;
  Activity activity = Activity::compute;
  Phase phase = Phase::forward;
  std::int32_t microbatch = -1;
  std::int16_t chunk = -1;          // virtual stage (model chunk) on this rank
  std::string label;                // e.g. "layer 12 attention"
  std::int16_t layer = -1;          // MoE layer of an expert segment or EP collective, else -1
  bool routed = false;              // compute whose work is the tokens routed to this GPU's experts

  // compute
  double seconds = 0;               // duration on an otherwise idle GPU, host launches included
  double gpu_seconds = 0;           // of which the kernels themselves
  double host_seconds = 0;          // CPU time to issue its kernels, from its start (the CPU starts
                                    // cold after each communication point: cost/section_cost.hpp)
  double flop = 0;
  double model_flop = 0;
  std::int32_t kernels = 0;
  double recompute_seconds = 0;

  // collective: NCCL's (bytes as platform::run_collective takes them) or, for the EP group, an
  // exchange of the recipe's dispatcher described by what it carries; the engine plans both
  // (platform/nccl.hpp, platform/ep_dispatch.hpp) on the GPU's own group
  platform::CollectiveKind collective = platform::CollectiveKind::all_to_all;
  GroupRole group = GroupRole::ep;
  double bytes = 0;
  double ep_tokens = 0;             // EP exchange: tokens this rank routes
  double ep_token_bytes = 0;        // EP exchange: bytes of one token copy
  bool ep_combine_kernel = false;   // EP exchange: the combine kernel (forward combine, backward dispatch)

  // pp_send
  std::int16_t peer_pp_rank = -1;
  MessageKey message;               // delivered to the peer when the send completes

  // dependencies: earlier tasks of the same program, and a message from another pp rank
  std::vector<std::int32_t> deps;
  MessageKey wait_message;

};

struct RankProgram {
  int pp_rank = 0;
  std::vector<Task> tasks;
};

struct StepProgram {
  std::vector<RankProgram> stages;  // one per pp rank
  int message_count = 0;            // size of the MessageKey space
  double model_flop_per_gpu = 0;    // Megatron-convention FLOPs of the step per GPU (from the
                                    // formula, not from the tasks)
};

}  // namespace moesim::workload
