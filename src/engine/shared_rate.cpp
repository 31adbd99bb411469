#include "moesim/engine/shared_rate.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace moesim::engine {

namespace {
// A job whose remaining work would take under a picosecond is done: the rounding of
// remaining -= rate x elapsed must not leave a phantom event behind.
constexpr double kDoneWithin_s = 1e-12;
}  // namespace

int SharedRate::add(double now_s, double amount, double bound, std::uint32_t owner) {
  static_assert(offsetof(SharedRate, inline_) + sizeof(Job) <= 64, "the fields and the first job in one cache line");
  advance(now_s);
  int handle;
  if (free_head_ >= 0) {
    handle = free_head_;
    free_head_ = job(handle).next_free;
  } else {
    if (slots_ == std::numeric_limits<std::int16_t>::max())
      throw std::length_error("SharedRate: more than 32,767 jobs at once on one resource");
    handle = slots_++;
    if (handle >= kInlineJobs) more_.emplace_back();
  }
  job(handle) = Job{.remaining = amount, .bound = std::min(bound, capacity_), .rate = 0, .owner = owner, .next_free = -1,
                    .live = true};
  reshare();
  return handle;
}

int SharedRate::active() const {
  int n = 0;
  for (int i = 0; i < slots_; ++i) n += job(i).live ? 1 : 0;
  return n;
}

void SharedRate::remove(double now_s, int handle) {
  advance(now_s);
  Job& j = job(handle);
  if (!j.live) return;
  release(handle);
  reshare();
}

void SharedRate::take_finished(double now_s, std::vector<std::uint32_t>& done) {
  advance(now_s);
  bool any = false;
  for (int i = 0; i < slots_; ++i) {
    const Job& j = job(i);
    if (!j.live || j.rate <= 0 || j.remaining > j.rate * kDoneWithin_s) continue;
    done.push_back(j.owner);
    release(i);
    any = true;
  }
  if (any) reshare();
}

void SharedRate::advance(double now_s) {
  const double elapsed = now_s - updated_s_;
  updated_s_ = now_s;
  if (elapsed <= 0) return;
  for (int i = 0; i < slots_; ++i) {
    Job& j = job(i);
    if (j.live && j.remaining != kUnbounded) j.remaining = std::max(0.0, j.remaining - j.rate * elapsed);
  }
}

void SharedRate::release(int slot) {
  Job& j = job(slot);
  j.live = false;
  j.next_free = free_head_;
  free_head_ = static_cast<std::int16_t>(slot);
}

// Water-filling: the jobs in increasing bound each take min(bound, an equal share of what is
// left). A GPU holds a handful of jobs, so a small sort is all it costs.
void SharedRate::reshare() {
  ++version_;
  std::array<int, 16> small{};
  std::vector<int> large;
  int* order = small.data();
  if (slots_ > static_cast<int>(small.size())) {
    large.resize(static_cast<std::size_t>(slots_));
    order = large.data();
  }
  int n = 0;
  for (int i = 0; i < slots_; ++i)
    if (job(i).live) order[n++] = i;
  std::sort(order, order + n, [&](int a, int b) {
    const double ba = job(a).bound, bb = job(b).bound;
    return ba != bb ? ba < bb : a < b;
  });
  double left = capacity_;
  next_finish_s_ = kUnbounded;
  for (int k = 0; k < n; ++k) {
    Job& j = job(order[k]);
    j.rate = std::min(j.bound, left / (n - k));
    left -= j.rate;
    if (j.remaining != kUnbounded && j.rate > 0) next_finish_s_ = std::min(next_finish_s_, updated_s_ + j.remaining / j.rate);
  }
}

}  // namespace moesim::engine
