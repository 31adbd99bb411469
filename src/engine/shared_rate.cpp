#include "moesim/engine/shared_rate.hpp"

#include <algorithm>
#include <array>

namespace moesim::engine {

namespace {
// A job whose remaining work would take under a picosecond is done: the rounding of
// remaining -= rate x elapsed must not leave a phantom event behind.
constexpr double kDoneWithin_s = 1e-12;
}  // namespace

int SharedRate::add(double now_s, double amount, double bound, std::uint64_t owner) {
  advance(now_s);
  int handle;
  if (!free_.empty()) {
    handle = free_.back();
    free_.pop_back();
  } else {
    handle = static_cast<int>(jobs_.size());
    jobs_.emplace_back();
  }
  jobs_[static_cast<std::size_t>(handle)] = Job{amount, std::min(bound, capacity_), 0, owner, true};
  ++active_;
  reshare();
  return handle;
}

void SharedRate::remove(double now_s, int handle) {
  advance(now_s);
  Job& job = jobs_[static_cast<std::size_t>(handle)];
  if (!job.live) return;
  job.live = false;
  --active_;
  free_.push_back(handle);
  reshare();
}

void SharedRate::take_finished(double now_s, std::vector<std::uint64_t>& done) {
  advance(now_s);
  bool any = false;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    Job& job = jobs_[i];
    if (!job.live || job.rate <= 0 || job.remaining > job.rate * kDoneWithin_s) continue;
    job.live = false;
    --active_;
    free_.push_back(static_cast<int>(i));
    done.push_back(job.owner);
    any = true;
  }
  if (any) reshare();
}

void SharedRate::advance(double now_s) {
  const double elapsed = now_s - updated_s_;
  updated_s_ = now_s;
  if (elapsed <= 0) return;
  for (Job& job : jobs_)
    if (job.live && job.remaining != kUnbounded) job.remaining = std::max(0.0, job.remaining - job.rate * elapsed);
}

// Water-filling: the jobs in increasing bound each take min(bound, an equal share of what is
// left). A GPU holds a handful of jobs, so a small sort is all it costs.
void SharedRate::reshare() {
  ++version_;
  std::array<int, 16> small{};
  std::vector<int> large;
  int* order = small.data();
  if (active_ > static_cast<int>(small.size())) {
    large.resize(static_cast<std::size_t>(active_));
    order = large.data();
  }
  int n = 0;
  for (std::size_t i = 0; i < jobs_.size(); ++i)
    if (jobs_[i].live) order[n++] = static_cast<int>(i);
  std::sort(order, order + n, [&](int a, int b) {
    const double ba = jobs_[static_cast<std::size_t>(a)].bound, bb = jobs_[static_cast<std::size_t>(b)].bound;
    return ba != bb ? ba < bb : a < b;
  });
  double left = capacity_;
  next_finish_s_ = kUnbounded;
  for (int k = 0; k < n; ++k) {
    Job& job = jobs_[static_cast<std::size_t>(order[k])];
    job.rate = std::min(job.bound, left / (n - k));
    left -= job.rate;
    if (job.remaining != kUnbounded && job.rate > 0)
      next_finish_s_ = std::min(next_finish_s_, updated_s_ + job.remaining / job.rate);
  }
}

}  // namespace moesim::engine
