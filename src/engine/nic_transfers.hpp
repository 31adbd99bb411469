#pragma once
// The event core's NIC transfers (event_core.hpp) as SimGrid runs them: the only activities its
// solver sees in the full fidelity, since the links they cross (NICs, a leaf's uplinks) are
// shared between GPUs. Knows the earliest date any of them can end, so that the core may run
// the GPUs' own events up to it without asking SimGrid.
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <queue>
#include <vector>

#include "gpu_state.hpp"

namespace moesim::engine {

class NicTransfers {
 public:
  NicTransfers(const platform::Platform& platform, const std::vector<Gpu>& gpus);
  // A step cut short by an error leaves transfers in flight: cancelled, they go quietly.
  ~NicTransfers();
  NicTransfers(const NicTransfers&) = delete;
  NicTransfers& operator=(const NicTransfers&) = delete;

  // Starts transfer `id` (the caller's slot, reused once its transfer ended) of `bytes` > 0 from
  // GPU `from` to GPU `to` (indices into the GPUs) at SimGrid's current date, at most
  // `rate_cap` bytes/s when positive.
  void start(int id, int from, int to, double bytes, double rate_cap);
  // No transfer in flight ends before this date (infinity: none in flight).
  double safe_until();
  bool busy() const { return !in_flight_.empty() || !posting_.empty(); }
  // Waits for the next transfer to end and returns its id, or -1 once `timeout_s` has passed
  // (negative: no timeout). Call while busy().
  int wait_next(double timeout_s);
  // At the step's end: the agents leave.
  void stop();

 private:
  struct Slot {
    simgrid::s4u::CommPtr comm{};     // the sending half (null until its agent posted it)
    simgrid::s4u::CommPtr receive{};  // a capped transfer's receiving half
    bool active = false;              // started and not yet done
    std::uint64_t serial = 0;         // which start of this slot
    double bytes = 0;
    double rate_cap = 0;
  };
  // Posts the halves of rate-capped transfers from its GPU's host: SimGrid 3.32 ignores the rate
  // of a host-to-host comm, while a mailbox comm between actors on the two hosts honours it (the
  // rate is the sender's). One per GPU that takes part in one, created on first use; asleep on
  // its semaphore between requests (a suspended actor would suspend its transfers too).
  struct Agent {
    simgrid::s4u::ActorPtr actor;
    simgrid::s4u::SemaphorePtr wake_up;
    std::vector<int> sends, receives;  // transfers to post
    bool asleep = false;
  };
  struct EarliestEnd {
    double t;
    std::size_t slot;
    std::uint64_t serial;
    bool operator>(const EarliestEnd& o) const { return t > o.t; }
  };

  void ask(int gpu, bool send, int id);
  void agent_loop(int gpu, simgrid::s4u::Semaphore& wake_up);
  simgrid::s4u::Mailbox* mailbox(int id);
  void flush_agents();

  const platform::Platform& platform_;
  const std::vector<Gpu>& gpus_;
  std::vector<Slot> slots_;
  std::vector<Agent> agents_;  // by GPU; never grows
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;  // one per slot, so each send meets its receive
  std::vector<int> posting_;  // capped transfers asked of the agents, not yet waited on
  long long requested_ = 0, posted_ = 0;  // halves asked of the agents, and posted
  bool stopping_ = false;
  void* received_ = nullptr;  // where receives land (nobody reads them)
  char payload_ = 0;          // mailbox puts need a non-null payload
  std::vector<simgrid::s4u::ActivityPtr> in_flight_;
  std::vector<int> in_flight_ids_;
  // The first entry whose transfer is still in flight bounds safe_until().
  std::priority_queue<EarliestEnd, std::vector<EarliestEnd>, std::greater<>> earliest_end_;
  std::uint64_t serial_ = 0;
};

}  // namespace moesim::engine
