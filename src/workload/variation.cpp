#include "moesim/workload/variation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "draws.hpp"
#include "moesim/workload/order_statistics.hpp"

namespace moesim::workload {

namespace {

// Kernels of one task jitter independently; taken as equally long, their sum's spread is the
// per-kernel spread over sqrt(kernels).
double task_jitter_cv(const VariabilitySpec& v, const Task& t) {
  return v.kernel_jitter_cv / std::sqrt(static_cast<double>(std::max<std::int32_t>(t.kernels, 1)));
}

int stage_gpus(const plan::Layout& l) { return l.world / l.pp; }

bool is_ep_all_to_all(const Task& t) {
  return t.kind == TaskKind::collective && t.group == GroupRole::ep &&
         t.collective == platform::CollectiveKind::all_to_all && t.layer >= 0;
}

}  // namespace

Variation::Variation(const Scenario& s, const plan::Layout& l, const StepProgram& program, VariationMode mode)
    : l_(l), mode_(mode), seed_(static_cast<std::uint64_t>(s.seed)), v_(s.variability), load_(workload::expert_load(s, l)) {
  active_ = v_.gpu_speed_cv > 0 || v_.kernel_jitter_cv > 0 || !load_.balanced || slow_gpu_time_factor() > 1;
  if (!active_) return;
  if (mode_ == VariationMode::full) {
    speed_.resize(static_cast<std::size_t>(l.world));
    ep_group_.resize(speed_.size());
    ep_member_.resize(speed_.size());
    for (int r = 0; r < l.world; ++r) {
      const double z = draws::standard_normal(seed_, draws::Stream::gpu_speed, static_cast<std::uint64_t>(r));
      speed_[static_cast<std::size_t>(r)] =
          std::max(0.05, 1 + v_.gpu_speed_cv * z) * (r == v_.slow_gpu_rank ? slow_gpu_time_factor() : 1.0);
      const plan::RankCoord c = l.coord(r);
      ep_group_[static_cast<std::size_t>(r)] = l.expert_rank(c.etp, 0, c.edp, c.pp);
      ep_member_[static_cast<std::size_t>(r)] = c.ep;
    }
    return;
  }
  prepare_folded(program);
}

// For every compute task: the size of the group waiting at the collective that ends its stretch
// of the pass (the next collective of the same micro-batch, chunk and phase), and the expected
// slowest-member factor over it. The persistent speed of a pipeline stage is its slowest GPU's
// (its pipelines wait for each other at the step's end): the expected slowest of the stage's
// world / pp GPUs, or in a sampled run the slowest of its own draws. (Giving the slowest GPU of
// the whole job to the stage that bounds the pipeline overestimates: the seeds' mean shows that
// the slow GPU, on a stage with slack half of the time, costs less.)
void Variation::prepare_folded(const StepProgram& program) {
  const int stages = static_cast<int>(program.stages.size());
  std::vector<double> slowest_z(static_cast<std::size_t>(stages), -1e300);
  if (mode_ == VariationMode::folded_sampled)
    for (int r = 0; r < l_.world; ++r) {
      double& z = slowest_z[static_cast<std::size_t>(l_.coord(r).pp)];
      z = std::max(z, draws::standard_normal(seed_, draws::Stream::gpu_speed, static_cast<std::uint64_t>(r)));
    }
  const Moments routed = load_.balanced ? Moments{} : capped_moments(load_.cv(), load_.capacity);
  const double routed_cv = routed.mean > 0 ? routed.sd / routed.mean : 0.0;
  routed_mean_ = routed.mean;
  folded_factor_.resize(program.stages.size());
  // Stages repeat the same stretches (same group and spread; in an expected run the same slowest
  // GPU too), so each distinct query is integrated once for the whole program.
  std::map<std::tuple<int, int, double, double, double>, double> memo;
  const auto slowest_factor = [&memo](const SlowestQuery& q) {
    const auto key = std::make_tuple(q.world, q.group, q.persistent_cv, q.fresh_cv, q.slowest_z.value_or(-1e300));
    auto found = memo.find(key);
    if (found == memo.end()) found = memo.emplace(key, expected_slowest_factor(q)).first;
    return found->second;
  };
  for (int p = 0; p < stages; ++p) {
    const auto& tasks = program.stages[static_cast<std::size_t>(p)].tasks;
    auto& factors = folded_factor_[static_cast<std::size_t>(p)];
    factors.assign(tasks.size(), 1.0);
    // A stretch: the compute of one pass between two of its collectives. The group waits for
    // the member whose whole stretch is slowest, so its spread is that of the stretch's sum:
    // jitter independent per task, routed tokens shared by a stretch's expert tasks.
    struct Stretch {
      int group = 1;
      double mean_weighted_s = 0, jitter_var = 0, load_sd_s = 0, fresh_weight = 0;
      std::vector<std::size_t> tasks;
    };
    std::map<std::tuple<int, int, int, std::size_t>, Stretch> stretches;  // (pass, next collective)
    // A task's own spread in seconds: its jitter and, for expert work, its routed tokens'.
    const auto fresh_sd_s = [&](const Task& t, double mean) {
      const double jitter = task_jitter_cv(v_, t);
      const double load = t.routed && !load_.balanced ? routed_cv : 0.0;
      return t.gpu_seconds * mean * std::sqrt(jitter * jitter + load * load);
    };
    std::map<std::tuple<int, int, int>, std::pair<int, std::size_t>> next_collective;  // pass -> (size, index)
    for (std::size_t i = tasks.size(); i-- > 0;) {
      const Task& t = tasks[i];
      const auto pass = std::make_tuple(static_cast<int>(t.phase), t.microbatch, static_cast<int>(t.chunk));
      if (t.kind == TaskKind::collective) {
        next_collective[pass] = {t.group == GroupRole::ep ? l_.ep : t.group == GroupRole::tp ? l_.tp : 1, i};
        continue;
      }
      if (t.kind != TaskKind::compute) continue;
      const auto it = next_collective.find(pass);
      const auto [group, end] = it == next_collective.end() ? std::make_pair(1, tasks.size()) : it->second;
      Stretch& st = stretches[std::tuple_cat(pass, std::make_tuple(end))];
      st.group = std::min(group, stage_gpus(l_));
      const bool is_routed = t.routed && !load_.balanced;
      const double mean = is_routed ? routed.mean : 1.0;
      const double jitter = task_jitter_cv(v_, t) * t.gpu_seconds * mean;
      st.mean_weighted_s += t.gpu_seconds * mean;
      st.fresh_weight += fresh_sd_s(t, mean);
      st.jitter_var += jitter * jitter;
      if (is_routed) st.load_sd_s += t.gpu_seconds * mean * routed_cv;
      st.tasks.push_back(i);
    }
    SlowestQuery q;
    q.world = stage_gpus(l_);
    q.persistent_cv = v_.gpu_speed_cv;
    if (mode_ == VariationMode::folded_sampled) q.slowest_z = slowest_z[static_cast<std::size_t>(p)];
    // The stage's slowest GPU alone; a named slow GPU on it is that GPU whenever it is slower than
    // the spread's expected slowest (the what-if's premise: a part far off its peers).
    double persistent = slowest_factor(q);
    if (v_.slow_gpu_rank >= 0 && l_.coord(v_.slow_gpu_rank).pp == p)
      persistent = std::max(persistent, slow_gpu_time_factor());
    for (const auto& [key, st] : stretches) {
      if (st.mean_weighted_s <= 0) continue;
      const double fresh = std::sqrt(st.jitter_var + st.load_sd_s * st.load_sd_s) / st.mean_weighted_s;
      q.group = st.group;
      q.fresh_cv = static_cast<double>(std::llround(fresh * 1e6)) * 1e-6;  // keys the memo
      const double slowest = slowest_factor(q);
      // The stretch's expected slowest member, split: the stage's slowest speed slows every task;
      // what the fresh spread adds falls on the tasks that carry it, as their own late kernels do.
      const double fresh_excess_s = std::max(0.0, (slowest - persistent) * st.mean_weighted_s);
      for (std::size_t i : st.tasks) {
        const Task& t = tasks[i];
        const double mean = t.routed && !load_.balanced ? routed.mean : 1.0;
        const double share = st.fresh_weight > 0 ? fresh_sd_s(t, mean) / st.fresh_weight : 0.0;
        factors[i] = mean * persistent + (t.gpu_seconds > 0 ? share * fresh_excess_s / t.gpu_seconds : 0.0);
      }
    }
  }
  if (!load_.balanced) folded_ep_bytes_factor_ = expected_capped_max(load_.ranks, load_.cv(), 1.0, load_.capacity);
}

double Variation::routed_load(int rank, int layer, int microbatch) const {
  if (load_.balanced) return 1;
  const auto r = static_cast<std::size_t>(rank);
  const auto group = static_cast<std::uint64_t>(ep_group_[r]), member = static_cast<std::uint64_t>(ep_member_[r]);
  const auto lay = static_cast<std::uint64_t>(layer);
  const double step = draws::standard_normal(seed_, draws::Stream::load_step, lay, group, member);
  const double mb = draws::standard_normal(seed_, draws::Stream::load_microbatch, lay,
                                           static_cast<std::uint64_t>(microbatch), group, member);
  const double load = std::max(0.0, 1 + load_.step_cv * step + load_.microbatch_cv * mb);
  return load_.capacity > 0 ? std::min(load, load_.capacity) : load;
}

double Variation::gpu_factor(int rank, int task, const Task& t) const {
  const double jitter = draws::standard_normal(seed_, draws::Stream::kernel_jitter, static_cast<std::uint64_t>(rank),
                                               static_cast<std::uint64_t>(task));
  double f = speed_[static_cast<std::size_t>(rank)] * std::max(0.05, 1 + task_jitter_cv(v_, t) * jitter);
  if (t.routed) f *= routed_load(rank, t.layer, t.microbatch);
  return f;
}

double Variation::compute_seconds(int rank, int pp_rank, int task, const Task& t) const {
  if (!active_) return t.seconds;
  const double factor = mode_ == VariationMode::full
                            ? gpu_factor(rank, task, t)
                            : folded_factor_[static_cast<std::size_t>(pp_rank)][static_cast<std::size_t>(task)];
  return std::max(0.0, t.seconds + t.gpu_seconds * (factor - 1));
}

double Variation::mean_compute_seconds(const Task& t) const {
  if (!active_) return t.seconds;
  const double mean = t.routed && !load_.balanced ? routed_mean_ : 1.0;
  return std::max(0.0, t.seconds + t.gpu_seconds * (mean - 1));
}

double Variation::ep_load_factor(int rank, const Task& t) const {
  if (load_.balanced || !is_ep_all_to_all(t)) return 1.0;
  if (mode_ != VariationMode::full) return folded_ep_bytes_factor_;
  return std::max(1.0, routed_load(rank, t.layer, t.microbatch));
}

}  // namespace moesim::workload
