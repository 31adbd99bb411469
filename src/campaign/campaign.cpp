// The campaign's event loop and its inputs from a simulated step.
#include "moesim/campaign/campaign.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "moesim/config/error.hpp"
#include "moesim/report/energy.hpp"

namespace moesim::campaign {

namespace {

// An interruption is this many expected attempts away from never finishing a segment: beyond
// it the campaign does not end in any useful time, and the loop would not either.
constexpr double kMaxRateTimesSegment = 20;
constexpr long long kMaxEventsPerSample = 50'000'000;

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
  if (!(in.train_s > 0) || !(in.checkpoint_interval_s > 0) || in.checkpoint_s < 0 || in.recovery_s < 0 ||
      in.failures_per_s < 0 || in.samples < 1)
    throw std::invalid_argument("campaign inputs out of range");
  const double segment = std::min(in.checkpoint_interval_s, in.train_s) + in.checkpoint_s;
  if (in.failures_per_s * segment > kMaxRateTimesSegment)
    throw InfeasibleError(fmt::format(
        "the job is interrupted every {:.3g} h on average, against {:.3g} h of training and saving between two "
        "checkpoints: it would almost never reach the next checkpoint; save more often (--checkpoint-interval-min) "
        "or use fewer GPUs",
        1 / in.failures_per_s / 3600, segment / 3600));
}

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
  const double lambda = in.failures_per_s;
  // A recovery is interrupted too (the Poisson process does not pause): it takes
  // (e^{lambda R} - 1) / lambda on average, and a segment of a (1/lambda) e^{lambda R} (e^{lambda a} - 1).
  const double recovery = lambda > 0 ? std::expm1(lambda * in.recovery_s) / lambda : in.recovery_s;
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
    std::mt19937_64 rng(in.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(sample));
    double wall = 0, remaining = in.train_s, lost = 0, saving = 0, recovering = 0;
    long long failures = 0, recovery_failures = 0, events = 0;
    // The first sample's timeline, for --trace: each phase from the wall clock where it starts.
    const auto record = [&, timeline = sample == 0 && in.record_timeline](double start, double seconds, Phase phase) {
      if (!timeline) return;
      if (out.timeline.size() >= kMaxTimelineEvents) {
        out.timeline_truncated = true;
        return;
      }
      out.timeline.push_back({start, seconds, phase});
    };
    while (remaining > 1e-9 * in.train_s) {
      if (++events > kMaxEventsPerSample) throw InfeasibleError("the campaign did not finish within 50 million events");
      const bool last = remaining <= in.checkpoint_interval_s * (1 + 1e-12);
      const double work = last ? remaining : in.checkpoint_interval_s;
      const double segment = work + (last ? 0 : in.checkpoint_s);
      // Poisson interruptions: the time to the next one is exponential and memoryless, so a
      // fresh draw per attempt is exact.
      const double next = in.failures_per_s > 0 ? -std::log1p(-uniform(rng)) / in.failures_per_s
                                                : std::numeric_limits<double>::infinity();
      if (next >= segment) {
        record(wall, work, Phase::training);
        if (!last) {
          saving += in.checkpoint_s;
          record(wall + work, in.checkpoint_s, Phase::checkpoint);
        }
        wall += segment;
        remaining -= work;
      } else {
        record(wall, next, Phase::lost_work);
        wall += next;  // the segment's work and saving so far are lost
        lost += next;
        ++failures;
        // The recovery, restarted by every interruption that falls inside it.
        for (;;) {
          if (++events > kMaxEventsPerSample) throw InfeasibleError("the campaign did not finish within 50 million events");
          const double during = -std::log1p(-uniform(rng)) / in.failures_per_s;
          if (during >= in.recovery_s) {
            record(wall, in.recovery_s, Phase::recovery);
            wall += in.recovery_s;
            recovering += in.recovery_s;
            break;
          }
          record(wall, during, Phase::interrupted_recovery);
          wall += during;
          recovering += during;
          ++failures;
          ++recovery_failures;
        }
      }
    }
    walls.push_back(wall);
    interruptions.push_back(static_cast<double>(failures));
    out.lost_work_s += lost;
    out.checkpoint_total_s += saving;
    out.recovery_total_s += recovering;
    out.recovery_interruptions += static_cast<double>(recovery_failures);
  }
  const double n = in.samples;
  out.lost_work_s /= n;
  out.checkpoint_total_s /= n;
  out.recovery_total_s /= n;
  out.recovery_interruptions /= n;
  out.wall_s = spread(walls);
  out.interruptions = spread(interruptions);
  out.goodput = in.train_s / out.wall_s.mean;
  return out;
}

CampaignResult plan_campaign(const driver::RunResult& run, const ReliabilitySpec& reliability,
                             const CampaignOptions& o) {
  const Scenario& s = run.scenario;
  CampaignResult r;
  r.scenario = s.name;
  r.reliability = reliability.name;
  r.gpus = s.gpus;
  r.tokens = o.tokens;
  const double tokens_per_step = static_cast<double>(s.training.global_batch) * s.training.seq_len;
  r.steps = std::ceil(o.tokens / tokens_per_step);
  r.step_s = run.metrics.step_time_s;
  r.tokens_per_s_per_gpu = run.metrics.tokens_per_s_per_gpu;
  // What a save writes once for the whole job: the distributed optimizer's shards (FP32 master
  // weights and Adam's moments), each held by one GPU of its pipeline rank's replicas; the BF16
  // weights and the gradients are derived or transient.
  for (const plan::MemoryBreakdown& m : run.memory)
    r.checkpoint_bytes += m.optimizer_bytes * (static_cast<double>(s.gpus) / run.layout.pp);
  r.inputs.train_s = r.steps * r.step_s;
  r.inputs.step_s = r.step_s;
  r.inputs.failures_per_s = reliability.per_gpu_hour() * s.gpus / 3600;
  r.mtbf_s = r.inputs.failures_per_s > 0 ? 1 / r.inputs.failures_per_s : std::numeric_limits<double>::infinity();
  r.inputs.checkpoint_s = r.checkpoint_bytes / reliability.storage_write_bytes_per_s;
  const double load_s = r.checkpoint_bytes / reliability.storage_read_bytes_per_s;
  r.inputs.recovery_s = reliability.detection_s + reliability.restart_s + load_s;
  const double daly = daly_interval_s(r.inputs.checkpoint_s, r.mtbf_s);
  r.inputs.checkpoint_interval_s = o.checkpoint_interval_s > 0 ? o.checkpoint_interval_s
                                   : std::isfinite(daly) && daly > 0 ? daly
                                                                     : r.inputs.train_s;
  r.inputs.samples = o.samples;
  r.inputs.seed = o.seed;
  r.inputs.record_timeline = o.record_timeline;
  r.samples = simulate(r.inputs);
  r.gpu_hours = r.samples.wall_s.mean * s.gpus / 3600;
  // The steps that ran, the redone ones included; saving and recovery are not charged (the
  // energy model has no power for a GPU that waits on storage or a restart).
  r.energy_j = report::step_energy(run).total_j() * (r.inputs.train_s + r.samples.lost_work_s) / r.step_s;
  r.price_per_gpu_hour = o.price_per_gpu_hour;
  r.cost = r.gpu_hours * o.price_per_gpu_hour;
  return r;
}

}  // namespace moesim::campaign
