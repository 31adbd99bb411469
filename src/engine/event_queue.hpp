#pragma once
// The event core's queue (event_core.hpp): its GPUs' events in (date, sequence) order, so that
// events of one date run in the order they were scheduled. Most are due at once (a stream woken
// by what just ended): those go to a FIFO beside the heap, which merged with the heap by (date,
// sequence) gives the heap's order alone at a fraction of its cost.
#include <cstdint>
#include <queue>
#include <vector>

namespace moesim::engine {

enum class EventKind : std::uint8_t { wake, compute_due, port_due, transfer_done };

struct Event {
  double t;
  std::uint64_t seq;  // equal dates run in the order they were scheduled
  EventKind kind;
  int gpu;
  std::uint64_t value;  // wake: the stream; *_due: the resource's version; transfer_done: the transfer
};

class EventQueue {
 public:
  // Schedules an event at `t`, at least `now_s` (the date of the event being handled).
  void push(double t, double now_s, EventKind kind, int gpu, std::uint64_t value) {
    const Event e{t, seq_++, kind, gpu, value};
    if (t == now_s) due_now_.push_back(e);
    else later_.push(e);
  }
  bool empty() const { return head_ == due_now_.size() && later_.empty(); }
  const Event& top() const { return fifo_first() ? due_now_[head_] : later_.top(); }
  Event pop() {
    if (!fifo_first()) {
      const Event e = later_.top();
      later_.pop();
      return e;
    }
    const Event e = due_now_[head_++];
    if (head_ == due_now_.size()) {
      due_now_.clear();
      head_ = 0;
    }
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  };
  bool fifo_first() const { return head_ < due_now_.size() && (later_.empty() || !Later{}(due_now_[head_], later_.top())); }

  std::priority_queue<Event, std::vector<Event>, Later> later_;
  std::vector<Event> due_now_;  // scheduled at the date then handled, in sequence
  std::size_t head_ = 0;
  std::uint64_t seq_ = 0;
};

}  // namespace moesim::engine
