#pragma once
// The full fidelity's event queue (src/engine/event_core.cpp): its GPUs' events in (date,
// sequence) order, so that events of one date run in the order they were scheduled.
//
// - Most events are due at once (a stream woken by what just ended): those go to a FIFO.
// - The rest wait in a radix heap (Ahuja et al. 1990, for a monotone queue: nothing is
//   scheduled before the last date taken out, which a discrete-event simulation guarantees).
//   Bucket b holds the events whose date's bits first differ from that last date's at bit b-1;
//   bucket 0 those at that date, in sequence. A push appends to one bucket and a pop reads the
//   front of bucket 0, so both touch a few hot cache lines. A binary or 4-ary heap walks its
//   levels instead, and past a thousand GPUs each level is a cache miss.
// The sequence is where an event stands, not a field: every bucket and the FIFO hold their
// events in the order they were scheduled, and of two events of one date, one in the heap and
// one in the FIFO, the heap's came first (it was scheduled before the clock reached that date,
// the FIFO's once it had). So an event is 16 bytes, a date and what it is for, and the queue
// moves a third fewer bytes than with a sequence number beside it. The order is the one a single
// queue sorted by (date, sequence) would give, whatever the structure: the results do not depend
// on it.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace moesim::engine {

enum class EventKind : std::uint8_t { wake, compute_due, port_due, transfer_done };

struct Event {
  double t;
  // The engine's GPU index (a run has at most 2^24 GPUs, config/scenario) in the low 24 bits, the
  // kind in the high 8: one word, written whole. Bit-fields made each push read the word it
  // writes, and an append to the queue's next cold line waited for memory instead of leaving the
  // write to the store buffer.
  std::uint32_t gpu_and_kind;
  // wake: the stream; *_due: the resource's version, modulo 2^32 (a resource's shares would have
  // to change 2^32 times while one of its events waits for a stale one to pass as current);
  // transfer_done: the transfer.
  std::uint32_t value;

  static constexpr std::uint32_t kGpuMask = (1u << 24) - 1;
  static Event make(double t, EventKind kind, int gpu, std::uint32_t value) {
    return {t, (static_cast<std::uint32_t>(gpu) & kGpuMask) | (static_cast<std::uint32_t>(kind) << 24), value};
  }
  int gpu() const { return static_cast<int>(gpu_and_kind & kGpuMask); }
  EventKind kind() const { return static_cast<EventKind>(gpu_and_kind >> 24); }
};
static_assert(sizeof(Event) == 16);

class EventQueue {
 public:
  // Schedules an event at `t` >= `now_s` (the date of the event being handled, or 0 before the
  // first). Throws std::logic_error for a date before the last one taken out.
  void push(double t, double now_s, EventKind kind, int gpu, std::uint64_t value) {
    const Event e = Event::make(t, kind, gpu, static_cast<std::uint32_t>(value));
    if (t == now_s) {
      due_now_.push_back(e);
      return;
    }
    const std::uint64_t k = key(t);
    if (k < last_key_) throw std::logic_error("event queue: an event scheduled before the last date taken out");
    const std::size_t b = bucket_of(k);
    buckets_[b].push_back(e);
    ++later_;
    // Keep the earliest of the first non-empty bucket (what top() shows while bucket 0 is empty):
    // a lower bucket was empty until now, so its one event is the earliest; of equal dates, the
    // one scheduled first.
    if (min_valid_ && b > 0 && (b < min_bucket_ || (b == min_bucket_ && t < buckets_[b][min_index_].t))) {
      min_bucket_ = b;
      min_index_ = buckets_[b].size() - 1;
    }
  }
  bool empty() const { return head_ == due_now_.size() && later_ == 0; }
  const Event& top() { return fifo_first() ? due_now_[head_] : later_top(); }
  Event pop() {
    if (!fifo_first()) {
      if (front_ == buckets_[0].size()) refill();
      const Event e = buckets_[0][front_++];
      --later_;
      if (front_ == buckets_[0].size()) {
        buckets_[0].clear();
        front_ = 0;
      }
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
  static constexpr int kBuckets = 65;

  // A non-negative date's bits, in the dates' order.
  static std::uint64_t key(double t) { return std::bit_cast<std::uint64_t>(t + 0.0); }
  std::size_t bucket_of(std::uint64_t k) const {
    return k == last_key_ ? 0 : static_cast<std::size_t>(64 - std::countl_zero(k ^ last_key_));
  }

  // At equal dates the heap's event goes first: it was scheduled before the FIFO's (above).
  bool fifo_first() {
    const bool fifo = head_ < due_now_.size();
    return later_ == 0 ? fifo : fifo && later_top().t > due_now_[head_].t;
  }

  // The earliest event in the buckets: bucket 0's front, else the earliest of the first
  // non-empty bucket. Looking must not move the date the buckets count from: events may still
  // come before it (a transfer that ends first wakes a stream after a latency).
  const Event& later_top() {
    if (front_ < buckets_[0].size()) return buckets_[0][front_];
    if (!min_valid_) {
      min_bucket_ = 1;
      while (buckets_[min_bucket_].empty()) ++min_bucket_;
      const std::vector<Event>& b = buckets_[min_bucket_];
      // The first of the earliest date: the one scheduled first.
      min_index_ = static_cast<std::size_t>(
          std::min_element(b.begin(), b.end(), [](const Event& x, const Event& y) { return x.t < y.t; }) - b.begin());
      min_valid_ = true;
    }
    return buckets_[min_bucket_][min_index_];
  }

  // Taking out of an empty bucket 0: its date becomes the earliest event's, and the first
  // non-empty bucket's events all move to lower buckets (each move takes an event to a lower
  // bucket, so one moves at most 64 times); those at that date go to bucket 0.
  // Every bucket holds its events in sequence: a push appends the latest, and a refill moves a
  // bucket's events in their order into buckets that were empty (those below the first
  // non-empty one). So bucket 0 needs no sort.
  void refill() {
    later_top();
    std::vector<Event>& from = buckets_[min_bucket_];
    last_key_ = key(from[min_index_].t);
    min_valid_ = false;
    for (const Event& e : from) buckets_[bucket_of(key(e.t))].push_back(e);
    from.clear();
  }

  std::array<std::vector<Event>, kBuckets> buckets_;
  std::uint64_t last_key_ = 0;  // bucket 0's date: the last date taken out, or the next
  std::size_t front_ = 0;        // bucket 0's next event
  std::size_t later_ = 0;        // events in the buckets
  bool min_valid_ = false;       // later_top()'s earliest of the first non-empty bucket is known
  std::size_t min_bucket_ = 0, min_index_ = 0;
  std::vector<Event> due_now_;  // scheduled at the date then handled, in sequence
  std::size_t head_ = 0;
};

}  // namespace moesim::engine
