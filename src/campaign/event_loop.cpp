// The campaign's event loop: one sample is a whole run's wall clock, phase after phase, with
// Poisson interruptions, checkpoints (synchronous, or draining to storage behind the training),
// recoveries that are interruptible themselves, and a pool of warm spares; and its closed form.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <random>

#include "moesim/campaign/campaign.hpp"
#include "moesim/config/error.hpp"

namespace moesim::campaign {

namespace {

// An interruption is this many expected attempts away from never finishing a segment: beyond
// it the campaign does not end in any useful time, and the loop would not either.
constexpr double kMaxRateTimesSegment = 20;
constexpr long long kMaxEventsPerSample = 50'000'000;
constexpr double kNever = std::numeric_limits<double>::infinity();

// Uniform in [0, 1) from 53 bits: the same draws on every platform for one seed (the standard
// distributions' algorithms are the library's own).
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::floor(q * static_cast<double>(v.size() - 1)));
  return v[i];
}

Spread spread(const std::vector<double>& v) {
  Spread s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  s.p5 = percentile(v, 0.05);
  s.p95 = percentile(v, 0.95);
  return s;
}

void check(const CampaignInputs& in) {
  const bool spares = in.spares.nodes >= 0;
  if (!(in.train_s > 0) || !(in.checkpoint_interval_s > 0) || in.checkpoint_s < 0 || in.recovery_s < 0 ||
      in.failures_per_s < 0 || in.samples < 1 || in.checkpoint_blocking_s < 0 || in.drain_slowdown < 0 ||
      in.spares.repair_s < 0 || (spares && in.kinds.empty()))
    throw std::invalid_argument("campaign inputs out of range");
  double shares = 0;
  for (const InterruptionKind& k : in.kinds) {
    if (!(k.share > 0) || k.recovery_s < 0 || k.warm_recovery_s < 0)
      throw std::invalid_argument("campaign interruption kind out of range");
    shares += k.share;
  }
  if (!in.kinds.empty() && std::abs(shares - 1) > 1e-9) throw std::invalid_argument("interruption shares do not sum to 1");
  // A segment: its training and its save (async: the copy, and the drain when it outlasts the training).
  const double work = std::min(in.checkpoint_interval_s, in.train_s);
  const double segment = in.async_save ? std::max(work * (1 + in.drain_slowdown), in.checkpoint_s) +
                                             in.checkpoint_blocking_s
                                       : work + in.checkpoint_s;
  if (in.failures_per_s * segment > kMaxRateTimesSegment)
    throw InfeasibleError(fmt::format(
        "the job is interrupted every {:.3g} h on average, against {:.3g} h of training and saving between two "
        "checkpoints: it would almost never reach the next checkpoint; save more often (--checkpoint-interval-min) "
        "or use fewer GPUs",
        1 / in.failures_per_s / 3600, segment / 3600));
}

// One sample: the run from its first step to its last, on one random stream.
class SampleRun {
 public:
  SampleRun(const CampaignInputs& in, std::uint64_t sample, bool timeline, CampaignSamples& out)
      : in_(in), rng_(in.seed * 0x9E3779B97F4A7C15ULL + sample), timeline_(timeline), out_(out),
        remaining_(in.train_s), durable_remaining_(in.train_s), free_spares_(std::max(in.spares.nodes, 0)) {
    next_failure_ = draw_gap();
  }

  void run() {
    while (remaining_ > 1e-9 * in_.train_s) {
      segment_left_ = std::min(in_.checkpoint_interval_s, remaining_);
      if (segment_left_ >= remaining_ * (1 - 1e-12)) segment_left_ = remaining_;  // the last: no save after it
      if (!train()) continue;
      if (remaining_ <= 1e-9 * in_.train_s) break;
      save();
    }
    settle(kNever, true);  // the run is over: what it trained counts, saved or not
  }

  double wall_s = 0, lost_s = 0, saving_s = 0, recovering_s = 0;
  long long failures = 0, recovery_failures = 0, warm_restarts = 0, spares_exhausted = 0;

 private:
  // A foreground phase since the last durable save: it counts once the save after it is durable,
  // and is lost work if an interruption comes first.
  struct Pending {
    PhaseSpan span;
    double work_s = 0;  // training it did
  };

  double draw_gap() {
    return in_.failures_per_s > 0 ? -std::log1p(-uniform(rng_)) / in_.failures_per_s : kNever;
  }

  void count_event() {
    if (++events_ > kMaxEventsPerSample) throw InfeasibleError("the campaign did not finish within 50 million events");
  }

  void record(double start_s, double seconds, Phase phase) {
    if (!timeline_) return;
    if (out_.timeline.size() >= kMaxTimelineEvents) {
      out_.timeline_truncated = true;
      return;
    }
    out_.timeline.push_back({start_s, seconds, phase});
  }

  void add(Phase phase, double until_s, double work_s) {
    pending_.push_back({{wall_s, until_s - wall_s, phase}, work_s});
    wall_s = until_s;
  }

  // The pending phases that began before `before_s` are settled: kept (a slowed step's extra time
  // and a save's wait count as saving) or lost.
  void settle(double before_s, bool kept) {
    while (!pending_.empty() && pending_.front().span.start_s < before_s) {
      const Pending& p = pending_.front();
      if (kept) saving_s += p.span.duration_s - p.work_s;
      else lost_s += p.span.duration_s;
      record(p.span.start_s, p.span.duration_s, kept ? p.span.phase : Phase::lost_work);
      pending_.pop_front();
    }
  }

  // Trains the current segment; false when an interruption came first (and was recovered from).
  bool train() {
    while (segment_left_ > 0) {
      count_event();
      const double rate = drain_end_ < kNever ? 1 / (1 + in_.drain_slowdown) : 1;
      const double done_at = wall_s + segment_left_ / rate;
      if (next_failure_ < done_at && next_failure_ <= drain_end_) {
        const double work = (next_failure_ - wall_s) * rate;
        add(Phase::training, next_failure_, work);
        interrupt();
        return false;
      }
      if (drain_end_ < done_at) {  // a save finishes draining: the step speeds up again
        const double work = (drain_end_ - wall_s) * rate;
        add(Phase::training, drain_end_, work);
        segment_left_ -= work;
        remaining_ -= work;
        drained();
        continue;
      }
      add(Phase::training, done_at, segment_left_);
      remaining_ -= segment_left_;
      segment_left_ = 0;
    }
    return true;
  }

  // A save after a segment: synchronous, the whole write; asynchronous, the wait for the previous
  // save's drain and the copy to host memory, the write then draining behind the next segment.
  void save() {
    if (in_.async_save && drain_end_ < kNever) {
      if (next_failure_ < drain_end_) return wait_then_interrupt();
      add(Phase::checkpoint, drain_end_, 0);
      drained();
    }
    const double copy_s = in_.async_save ? in_.checkpoint_blocking_s : in_.checkpoint_s;
    if (next_failure_ < wall_s + copy_s) return wait_then_interrupt();
    add(Phase::checkpoint, wall_s + copy_s, 0);
    if (!in_.async_save || in_.checkpoint_s == 0) return durable(remaining_, wall_s);
    drain_start_ = wall_s;
    drain_end_ = wall_s + in_.checkpoint_s;
    drain_remaining_ = remaining_;
  }

  void wait_then_interrupt() {
    add(Phase::checkpoint, next_failure_, 0);
    interrupt();
  }

  void drained() {
    record(drain_start_, drain_end_ - drain_start_, Phase::checkpoint_drain);
    durable(drain_remaining_, drain_start_);
    drain_end_ = kNever;
  }

  // A save is durable: the state it holds, taken at `taken_at_s`, is what a recovery reloads.
  void durable(double remaining_then, double taken_at_s) {
    durable_remaining_ = remaining_then;
    settle(taken_at_s, true);
  }

  // An interruption at wall_s: everything since the last durable save is lost (a save still
  // draining with it), then the recovery, which the next interruptions restart.
  void interrupt() {
    if (drain_end_ < kNever) record(drain_start_, wall_s - drain_start_, Phase::checkpoint_drain);
    drain_end_ = kNever;
    settle(kNever, false);
    remaining_ = durable_remaining_;
    for (;;) {
      count_event();
      ++failures;
      if (timeline_) out_.interruption_times_s.push_back(wall_s);
      const double recovery_s = recovery_for(draw_kind());
      next_failure_ = wall_s + draw_gap();
      if (next_failure_ >= wall_s + recovery_s) {
        record(wall_s, recovery_s, Phase::recovery);
        recovering_s += recovery_s;
        wall_s += recovery_s;
        return;  // the next interruption is still next_failure_ (memoryless)
      }
      record(wall_s, next_failure_ - wall_s, Phase::interrupted_recovery);
      recovering_s += next_failure_ - wall_s;
      wall_s = next_failure_;
      ++recovery_failures;
    }
  }

  const InterruptionKind* draw_kind() {
    if (in_.kinds.empty()) return nullptr;
    if (in_.kinds.size() == 1) return &in_.kinds.front();
    double u = uniform(rng_);
    for (const InterruptionKind& k : in_.kinds) {
      if (u < k.share) return &k;
      u -= k.share;
    }
    return &in_.kinds.back();  // rounding
  }

  // How long a recovery from `kind` takes now: warm when the nodes are intact or a spare is free
  // (it leaves for the job, the failed node for repair), requeued otherwise.
  double recovery_for(const InterruptionKind* kind) {
    if (!kind) return in_.recovery_s;
    if (in_.spares.nodes < 0) return kind->recovery_s;
    while (!repaired_at_.empty() && repaired_at_.top() <= wall_s) {
      repaired_at_.pop();
      ++free_spares_;
    }
    if (kind->loses_node) {
      if (free_spares_ == 0) {
        ++spares_exhausted;
        return kind->recovery_s;
      }
      --free_spares_;
      repaired_at_.push(wall_s + in_.spares.repair_s);
    }
    ++warm_restarts;
    return kind->warm_recovery_s;
  }

  const CampaignInputs& in_;
  std::mt19937_64 rng_;
  bool timeline_;
  CampaignSamples& out_;
  long long events_ = 0;
  double remaining_, durable_remaining_, segment_left_ = 0, next_failure_ = kNever;
  double drain_start_ = 0, drain_end_ = kNever, drain_remaining_ = 0;  // an async save in flight
  std::deque<Pending> pending_;
  int free_spares_;
  std::priority_queue<double, std::vector<double>, std::greater<>> repaired_at_;
};

}  // namespace

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  if (!(mtbf_s > 0) || std::isinf(mtbf_s)) return std::numeric_limits<double>::infinity();
  if (checkpoint_s <= 0) return 0;
  if (checkpoint_s >= 2 * mtbf_s) return mtbf_s;
  const double r = checkpoint_s / (2 * mtbf_s);
  return std::sqrt(2 * checkpoint_s * mtbf_s) * (1 + std::sqrt(r) / 3 + r / 9) - checkpoint_s;
}

double expected_wall_s(const CampaignInputs& in) {
  check(in);
  if (in.async_save) throw std::invalid_argument("expected_wall_s: synchronous saves only");
  const double lambda = in.failures_per_s;
  // A recovery is interrupted too (the Poisson process does not pause), each interruption
  // restarting it with its own kind's time R: E[1 - e^{-lambda R}] / (lambda E[e^{-lambda R}]),
  // (e^{lambda R} - 1) / lambda for one kind. With a pool that never runs dry every kind restarts
  // warm; with an empty one (0 spares) only those that keep their nodes.
  double interrupted = 0, survives = 0, mean = 0;
  auto add_kind = [&](double share, double r) {
    interrupted += share * -std::expm1(-lambda * r);
    survives += share * std::exp(-lambda * r);
    mean += share * r;
  };
  if (in.kinds.empty()) add_kind(1, in.recovery_s);
  for (const InterruptionKind& k : in.kinds) {
    const bool warm = in.spares.nodes > 0 || (in.spares.nodes == 0 && !k.loses_node);
    add_kind(k.share, warm ? k.warm_recovery_s : k.recovery_s);
  }
  const double recovery = lambda > 0 ? interrupted / survives / lambda : mean;
  // A segment of a: (1/lambda + recovery) (e^{lambda a} - 1).
  auto segment = [&](double a) { return lambda > 0 ? (1 / lambda + recovery) * std::expm1(lambda * a) : a; };
  const double full = std::floor(in.train_s / in.checkpoint_interval_s);
  double rest = in.train_s - full * in.checkpoint_interval_s;
  double n_full = full;
  if (rest <= 1e-9 * in.train_s) {  // the last full segment is the last: no save after it
    n_full -= 1;
    rest = in.checkpoint_interval_s;
  }
  return n_full * segment(in.checkpoint_interval_s + in.checkpoint_s) + segment(rest);
}

CampaignSamples simulate(const CampaignInputs& in) {
  check(in);
  std::vector<double> walls, interruptions;
  CampaignSamples out;
  for (int sample = 0; sample < in.samples; ++sample) {
    SampleRun run(in, static_cast<std::uint64_t>(sample), sample == 0 && in.record_timeline, out);
    run.run();
    walls.push_back(run.wall_s);
    interruptions.push_back(static_cast<double>(run.failures));
    out.lost_work_s += run.lost_s;
    out.checkpoint_total_s += run.saving_s;
    out.recovery_total_s += run.recovering_s;
    out.recovery_interruptions += static_cast<double>(run.recovery_failures);
    out.warm_restarts += static_cast<double>(run.warm_restarts);
    out.spares_exhausted += static_cast<double>(run.spares_exhausted);
  }
  const double n = in.samples;
  for (double* mean : {&out.lost_work_s, &out.checkpoint_total_s, &out.recovery_total_s, &out.recovery_interruptions,
                       &out.warm_restarts, &out.spares_exhausted})
    *mean /= n;
  out.wall_s = spread(walls);
  out.interruptions = spread(interruptions);
  out.goodput = in.train_s / out.wall_s.mean;
  return out;
}

}  // namespace moesim::campaign
