#pragma once
// A GPU's state while the event core (event_core.hpp) runs its step: where each stream stands,
// the collective it runs, the GPU's own shared resources (SMs, NVLink port), and the sends and
// receives waiting for their match. Laid out for the caches: past a thousand GPUs this state is
// cold by the time a GPU's next event comes, and each cache line an event touches is a miss.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "moesim/engine/shared_rate.hpp"
#include "moesim/platform/collective.hpp"
#include "moesim/workload/program.hpp"

namespace moesim::engine::event_core {

// What a stream does when its pending wake-up comes.
enum class Next : std::uint8_t { start_task, finish_task, deliver_message, tier_latency_done, part_done, barrier_released };

struct TierRun {
  double done_at_s = 0;
  int pending = 0;  // its transfers and receives not yet done
  bool complete = false;
};

// Where a stream stands, in 8 bytes: a GPU's seven share one cache line with its stage's
// tables, so that a wake-up and a readiness check (which reads the other streams' positions)
// touch one line of the GPU's state. Past a thousand GPUs that state is out of the caches by the
// time the GPU's next event comes, and each line it touches is a miss.
struct StreamCursor {
  std::uint32_t k = 0;   // its current task: stage->ids[stream][k]
  bool waiting = false;  // idle until that task is ready
  Next next = Next::start_task;
  bool observed = false;  // the GPU's (Gpu::observed), read by a task's start and end from here
};
static_assert(sizeof(StreamCursor) == 8);

// The collective a stream runs, in one cache line (its tiers inside it: a part has at most the
// NVLink and the NIC tier): its part, its tiers, where it stands, the SMs it holds.
struct alignas(64) StreamRun {
  static constexpr std::size_t kMaxTiers = 2;
  const platform::FullMemberPart* part = nullptr;
  const platform::Group* group = nullptr;
  std::array<TierRun, kMaxTiers> tiers;
  std::uint32_t barrier = 0;  // the group's barrier for this stream (named in start_collective)
  int group_size = 0;
  int member_index = 0;  // the GPU's place in the group, from which the part's receivers count
  std::int16_t sm_job = -1;
  std::uint8_t tier = 0;  // the sequential part's current tier
  bool leaving = false;   // past its part, at the closing barrier
};
static_assert(sizeof(StreamRun) == 64);

// A send posted to a peer that has not yet posted the receive it matches (FIFO, as a mailbox).
struct PendingSend {
  int gpu;
  int tier;
  double bytes;
  double rate_cap;
};

// A collective as a GPU runs it: its group, its part, its place in the group and its kernels' SMs.
struct RunPlan {
  const platform::Group* group = nullptr;  // nullptr: not planned yet
  const platform::FullMemberPart* part = nullptr;
  int member_index = 0;  // the GPU's place in the group
  int group_size = 0;
  int first_rank = 0;  // the group's, which names its barriers
  int sms = 0;         // the collective's kernels' SMs
};

// A GPU's plan of one distinct collective of its program (a plan slot), kept from its first run
// and read at each start: 8 bytes, a shared plan's number and the GPU's place in the group. All
// but the place is the same for every member of the group (the part counts its receivers from
// the member's place, member_parts.hpp), so it is kept once per group, in a line its members read
// at about the same time; 32 bytes per GPU and slot were a miss at each start past a thousand
// GPUs, 8 bytes per GPU share a line among eight.
struct KeptPlan {
  std::uint32_t shared = 0;  // 1 + the shared plan's index; 0: not planned yet
  std::int32_t member_index = 0;
};
static_assert(sizeof(KeptPlan) == 8);

// A stage program's tasks by stream, and where each task stands on its stream: a task is done
// once its stream has moved past it, so readiness reads the GPU's few stream counters instead of
// a flag per task (kilobytes per GPU, cold by the time the GPU's next event comes).
struct StageTasks {
  const workload::RankProgram* program = nullptr;
  const std::vector<std::uint8_t>* dependents = nullptr;       // per task: streams to wake
  const std::vector<std::uint8_t>* message_waiters = nullptr;  // per message: streams to wake
  std::array<std::vector<int>, workload::kStreams> ids;
  std::vector<std::pair<std::uint8_t, std::uint32_t>> place;  // by task: (stream, index on it)
  // By task: its collective's plan slot, one per distinct plan key (gpu_state.hpp's plan_key at
  // the program's own EP loads); plan_slots of them.
  std::vector<std::uint32_t> plan_slot;
  std::uint32_t plan_slots = 0;
};

struct alignas(64) GpuRun {
  const StageTasks* stage = nullptr;
  std::array<StreamCursor, workload::kStreams> cursors;  // with `stage`, the GPU's first cache line
  SharedRate sms{1.0};  // in seconds of the GPU's full speed; its fields and first job in the GPU's second line
  SharedRate port{1.0};
  std::array<StreamRun, workload::kStreams> streams;
  // Per stream and NIC route (leaf, spine): sends waiting for a receive, and receives posted
  // (the tier each belongs to) waiting for a send; first in, first matched. A few at most, so
  // vectors (a deque allocates on construction, for 28 queues per GPU).
  std::array<std::array<std::vector<PendingSend>, 2>, workload::kStreams> sends_waiting;
  std::array<std::array<std::vector<int>, 2>, workload::kStreams> receives_posted;

  // Fetches the lines an event of this GPU reads, ahead of it: every kind reads the cursors and
  // the SMs (a task's end wakes its stream, a start takes SMs; the second line holds the jobs a
  // collective's held SMs add beside a compute task), a wake its stream's collective. A variant
  // that also fetched the NVLink port's lines and the transfer's entry (the two measured only
  // together) was slower at 8,192 GPUs (bench/README.md, session 36).
  void prefetch(bool wake, std::uint32_t stream) const {
    __builtin_prefetch(this);
    __builtin_prefetch(&sms);
    __builtin_prefetch(reinterpret_cast<const char*>(&sms) + 64);
    if (wake) __builtin_prefetch(&streams[stream]);
  }
  // Fetches, for writing, what a member released from its collective's barrier touches first:
  // the cursor its wake writes and, at the opening barrier, the NVLink port its part's sends take.
  void prefetch_released(bool opening) const {
    __builtin_prefetch(this, 1);
    if (!opening) return;
    __builtin_prefetch(&port, 1);
    __builtin_prefetch(reinterpret_cast<const char*>(&port) + 64, 1);
  }
};

}  // namespace moesim::engine::event_core
