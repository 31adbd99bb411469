// A campaign's inputs from a simulated step and a cluster's reliability: the token budget's
// training time, the checkpoint, the interruptions by kind, the recoveries, spares and async saves.
#include "moesim/campaign/campaign.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "moesim/config/error.hpp"
#include "moesim/report/energy.hpp"

namespace moesim::campaign {

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
  auto needs = [&](bool present, const char* key, const char* option) {
    if (!present)
      throw ConfigError(reliability.file, fmt::format("$.{}", key), fmt::format("a number (required by {})", option));
  };
  if (o.spare_nodes >= 0) {
    needs(reliability.warm_restart_s > 0, "warm_restart_s", "--spares");
    needs(reliability.node_repair_s > 0, "node_repair_s", "--spares");
  }
  // Interruptions by cause: each its detection, and whether it takes a node from the job.
  const double rate = reliability.per_gpu_hour();
  for (const FailureCause& c : reliability.causes) {
    if (!(c.per_gpu_hour > 0)) continue;
    InterruptionKind k;
    k.name = c.name;
    k.share = c.per_gpu_hour / rate;
    const auto own = reliability.detection_s_by_cause.find(c.name);
    const double detection_s = own != reliability.detection_s_by_cause.end() ? own->second : reliability.detection_s;
    k.recovery_s = detection_s + reliability.restart_s + load_s;
    k.warm_recovery_s = detection_s + reliability.warm_restart_s + load_s;
    k.loses_node = std::find(reliability.causes_keeping_nodes.begin(), reliability.causes_keeping_nodes.end(),
                             c.name) == reliability.causes_keeping_nodes.end();
    r.inputs.kinds.push_back(k);
  }
  r.gpus_per_node = s.system.node_gpus();
  r.inputs.spares = {o.spare_nodes, reliability.node_repair_s};
  // What the step waits for per save: the whole write, or (async) each GPU's copy of its shard to
  // host memory, the write draining behind the training; Young/Daly's interval for that cost.
  double save_cost_s = r.inputs.checkpoint_s;
  if (o.async_save) {
    needs(reliability.async_drain_slowdown >= 0, "async_drain_slowdown", "--checkpoint async");
    if (!(s.system.host_link_bytes_per_s > 0))
      throw InfeasibleError(fmt::format("asynchronous saves copy each GPU's shard to host memory, and {} does not "
                                        "describe that link (host_link_gbytes_per_s)",
                                        s.system.name));
    double shard_bytes = 0;
    for (const plan::MemoryBreakdown& m : run.memory) shard_bytes = std::max(shard_bytes, m.optimizer_bytes);
    r.inputs.async_save = true;
    r.inputs.checkpoint_blocking_s = shard_bytes / s.system.host_link_bytes_per_s;
    r.inputs.drain_slowdown = reliability.async_drain_slowdown;
    const double slowdown = r.inputs.drain_slowdown;
    save_cost_s = r.inputs.checkpoint_blocking_s + r.inputs.checkpoint_s * slowdown / (1 + slowdown);
  }
  const double daly = daly_interval_s(save_cost_s, r.mtbf_s);
  const double wanted_s = o.checkpoint_interval_s > 0 ? o.checkpoint_interval_s
                          : std::isfinite(daly) && daly > 0 ? daly
                                                            : r.inputs.train_s;
  // Saves fall between steps: a whole number of them, at least one; by default (async) no sooner
  // than the previous save has drained, since the next would wait for it.
  double interval_steps = std::max(1.0, std::round(wanted_s / r.step_s));
  if (o.async_save && o.checkpoint_interval_s <= 0)
    interval_steps = std::max(interval_steps, std::ceil(r.inputs.checkpoint_s / r.step_s));
  r.inputs.checkpoint_interval_s = std::min(interval_steps * r.step_s, r.inputs.train_s);
  r.inputs.samples = o.samples;
  r.inputs.seed = o.seed;
  r.inputs.record_timeline = o.record_timeline;
  r.samples = simulate(r.inputs);
  r.spare_gpu_hours = o.spare_nodes > 0 ? r.samples.wall_s.mean * o.spare_nodes * r.gpus_per_node / 3600 : 0;
  r.gpu_hours = r.samples.wall_s.mean * s.gpus / 3600 + r.spare_gpu_hours;
  // The steps that ran, the redone ones included; saving and recovery are not charged (the
  // energy model has no power for a GPU that waits on storage or a restart).
  r.energy_j = report::step_energy(run).total_j() * (r.inputs.train_s + r.samples.lost_work_s) / r.step_s;
  r.price_per_gpu_hour = o.price_per_gpu_hour;
  r.cost = r.gpu_hours * o.price_per_gpu_hour;
  return r;
}

}  // namespace moesim::campaign
