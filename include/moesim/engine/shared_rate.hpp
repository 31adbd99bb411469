#pragma once
// A resource that one GPU owns and its activities share max-min fairly (its SMs, its NVLink
// egress port): each job takes an equal share of the capacity, at most its bound, and what a
// bounded job leaves goes to the others (water-filling). This is what SimGrid's CPU model gives a
// single-core host, computed in O(jobs) on a few jobs instead of through SimGrid's solver: no
// other GPU's activity can change these shares, so nothing outside the GPU needs to know.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace moesim::engine {

// 64-byte aligned, with its fields and its first job in its first cache line: a GPU's compute
// task alone on its SMs costs one line, a collective's SMs beside it two. Past a thousand GPUs a
// GPU's state is out of the caches when its next event comes, and each line is a miss.
class alignas(64) SharedRate {
 public:
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  explicit SharedRate(double capacity = 1.0) : capacity_(capacity) {}

  // Adds a job of `amount` (capacity x seconds; infinite: until removed) at most `bound` per
  // second, at time `now_s`; `owner` comes back from take_finished(). Returns its handle.
  // Throws std::length_error past 32,767 jobs at once.
  int add(double now_s, double amount, double bound, std::uint32_t owner);
  void remove(double now_s, int handle);  // ends a job before it finishes (an infinite one)

  // When the next job finishes at the current shares (infinity: none will).
  double next_finish_s() const { return next_finish_s_; }
  // Advances to `now_s` and moves the owners of the jobs done by then into `done`.
  void take_finished(double now_s, std::vector<std::uint32_t>& done);

  double rate_of(int handle) const { return job(handle).rate; }
  int active() const;
  // Bumped whenever the shares change: an event scheduled at next_finish_s() under an older
  // version is stale. Modulo 2^32: its shares would have to change 2^32 times while such an
  // event waits for it to pass as current.
  std::uint32_t version() const { return version_; }

 private:
  struct Job {
    double remaining = 0;
    double bound = 0;
    double rate = 0;
    std::uint32_t owner = 0;
    std::int16_t next_free = -1;  // a free slot: the slot freed before it
    bool live = false;
  };
  // A GPU's resource holds a few jobs at a time: the first slots live inside it, beside its
  // other fields, so that its owner's state costs no separate miss for them; the rest, rarely,
  // in a vector.
  static constexpr int kInlineJobs = 4;
  Job& job(int slot) { return slot < kInlineJobs ? inline_[static_cast<std::size_t>(slot)] : more_[static_cast<std::size_t>(slot - kInlineJobs)]; }
  const Job& job(int slot) const { return slot < kInlineJobs ? inline_[static_cast<std::size_t>(slot)] : more_[static_cast<std::size_t>(slot - kInlineJobs)]; }
  void advance(double now_s);
  void release(int slot);  // frees a live job's slot
  void reshare();

  double capacity_;
  double updated_s_ = 0;
  double next_finish_s_ = kUnbounded;
  std::uint32_t version_ = 0;
  std::int16_t slots_ = 0;       // slots ever used: inline ones first, then more_'s
  std::int16_t free_head_ = -1;  // the last slot freed (a slot is reused last freed, first reused)
  std::array<Job, kInlineJobs> inline_{};
  std::vector<Job> more_;
};

}  // namespace moesim::engine
