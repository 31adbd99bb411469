// moesim campaign's output: the run's inputs (step, failure rate, checkpoint, recovery), then
// time to train, GPU-hours, goodput, interruptions, energy and cost with their spread.
#include <fmt/format.h>

#include <algorithm>

#include "moesim/campaign/campaign.hpp"

namespace moesim::campaign {

namespace {

constexpr double kDay = 86400, kHour = 3600;

std::string spread_days(const Spread& s) {
  return fmt::format("{:.2f} days   (5 % {:.2f}, 95 % {:.2f})", s.mean / kDay, s.p5 / kDay, s.p95 / kDay);
}

}  // namespace

std::string campaign_table(const CampaignResult& r) {
  const CampaignInputs& in = r.inputs;
  const CampaignSamples& c = r.samples;
  std::string out = fmt::format("{}\n  campaign of {:.4g} tokens on {} GPUs, failures as {}\n\n", r.scenario, r.tokens,
                                r.gpus, r.reliability);
  out += fmt::format("  step                     {:.3f} s, {:.0f} steps ({:.1f} tokens/s per GPU)\n", r.step_s, r.steps,
                     r.tokens_per_s_per_gpu);
  out += fmt::format("  training, no failure     {:.2f} days\n", in.train_s / kDay);
  out += fmt::format("  interruptions            one every {:.1f} h for the job\n", r.mtbf_s / kHour);
  if (in.async_save)
    out += fmt::format("  checkpoint (async)       {:.2f} TB, {:.2f} s to copy to host, {:.1f} s draining (steps {:.1f} % "
                       "slower), every {:.1f} min of training\n",
                       r.checkpoint_bytes / 1e12, in.checkpoint_blocking_s, in.checkpoint_s, 100 * in.drain_slowdown,
                       in.checkpoint_interval_s / 60);
  else
    out += fmt::format("  checkpoint               {:.2f} TB, {:.1f} s to save, every {:.1f} min of training\n",
                       r.checkpoint_bytes / 1e12, in.checkpoint_s, in.checkpoint_interval_s / 60);
  out += fmt::format("  recovery                 {:.1f} min (detection, restart, checkpoint load){}\n",
                     in.recovery_s / 60, in.kinds.size() > 1 ? ", by cause" : "");
  if (in.spares.nodes >= 0)
    out += fmt::format("  spares                   {} nodes of {} GPUs, a failed node back after {:.1f} h of repair\n",
                       in.spares.nodes, r.gpus_per_node, in.spares.repair_s / kHour);
  out += "\n";
  out += fmt::format("  time to train            {}\n", spread_days(c.wall_s));
  out += fmt::format("  GPU-hours                {:.4g}\n", r.gpu_hours);
  out += fmt::format("  goodput                  {:.1f} %   (training over wall-clock time)\n", 100 * c.goodput);
  out += fmt::format("  interruptions            {:.1f}   (5 % {:.0f}, 95 % {:.0f}; {:.2f} of them during a recovery)\n",
                     c.interruptions.mean, c.interruptions.p5, c.interruptions.p95, c.recovery_interruptions);
  out += fmt::format("  lost to interruptions    {:.2f} days of work redone, {:.2f} days recovering\n",
                     c.lost_work_s / kDay, c.recovery_total_s / kDay);
  if (in.spares.nodes >= 0)
    out += fmt::format("  restarts without requeue {:.1f}   ({:.2f} node failures found no spare free; the spares "
                       "held {:.4g} GPU-hours)\n",
                       c.warm_restarts, c.spares_exhausted, r.spare_gpu_hours);
  out += fmt::format("  saving checkpoints       {:.2f} days{}\n", c.checkpoint_total_s / kDay,
                     in.async_save ? "   (copies, waits for a drain, steps slowed while draining)" : "");
  out += fmt::format("  energy                   {:.4g} MWh   (the steps run, redone ones included)\n", r.energy_j / 3.6e9);
  if (r.price_per_gpu_hour > 0)
    out += fmt::format("  cost                     {:.4g} at {:.4g} per GPU-hour\n", r.cost, r.price_per_gpu_hour);
  out += fmt::format("  ({} samples, seed {})\n", in.samples, in.seed);
  return out;
}

std::string campaign_scaling_table(const std::vector<CampaignResult>& rows) {
  if (rows.empty()) return "";
  const CampaignResult& first = rows.front();
  std::string out = fmt::format("{}\n  campaign of {:.4g} tokens, failures as {}\n\n", first.scenario, first.tokens,
                                first.reliability);
  out += fmt::format("  {:>6} {:>9} {:>24} {:>11} {:>8} {:>13} {:>10}{}\n", "GPUs", "step (s)", "days (5 % - 95 %)",
                     "GPU-hours", "goodput", "interruptions", "MWh", first.price_per_gpu_hour > 0 ? "       cost" : "");
  for (const CampaignResult& r : rows) {
    const Spread& w = r.samples.wall_s;
    out += fmt::format("  {:>6} {:>9.3f} {:>24} {:>11.4g} {:>7.1f}% {:>13.1f} {:>10.4g}{}\n", r.gpus, r.step_s,
                       fmt::format("{:.2f} ({:.2f} - {:.2f})", w.mean / kDay, w.p5 / kDay, w.p95 / kDay), r.gpu_hours,
                       100 * r.samples.goodput, r.samples.interruptions.mean, r.energy_j / 3.6e9,
                       r.price_per_gpu_hour > 0 ? fmt::format(" {:>10.4g}", r.cost) : "");
  }
  out += fmt::format("  (the layout at each GPU count with the global batch grown with it; {} samples, seed {})\n",
                     first.inputs.samples, first.inputs.seed);
  return out;
}

nlohmann::json campaign_json(const CampaignResult& r) {
  auto spread_json = [](const Spread& s) { return nlohmann::json{{"mean", s.mean}, {"p5", s.p5}, {"p95", s.p95}}; };
  const CampaignInputs& in = r.inputs;
  return {{"scenario", r.scenario},
          {"reliability", r.reliability},
          {"gpus", r.gpus},
          {"tokens", r.tokens},
          {"steps", r.steps},
          {"step_s", r.step_s},
          {"train_s", in.train_s},
          {"mtbf_s", r.mtbf_s},
          {"checkpoint_bytes", r.checkpoint_bytes},
          {"checkpoint_s", in.checkpoint_s},
          {"checkpoint_interval_s", in.checkpoint_interval_s},
          {"checkpoint_async", in.async_save},
          {"checkpoint_blocking_s", in.async_save ? in.checkpoint_blocking_s : in.checkpoint_s},
          {"drain_slowdown", in.drain_slowdown},
          {"recovery_s", in.recovery_s},
          {"spare_nodes", std::max(in.spares.nodes, 0)},
          {"gpus_per_node", r.gpus_per_node},
          {"wall_s", spread_json(r.samples.wall_s)},
          {"interruptions", spread_json(r.samples.interruptions)},
          {"goodput", r.samples.goodput},
          {"gpu_hours", r.gpu_hours},
          {"spare_gpu_hours", r.spare_gpu_hours},
          {"warm_restarts", r.samples.warm_restarts},
          {"spares_exhausted", r.samples.spares_exhausted},
          {"lost_work_s", r.samples.lost_work_s},
          {"recovery_total_s", r.samples.recovery_total_s},
          {"recovery_interruptions", r.samples.recovery_interruptions},
          {"checkpoint_total_s", r.samples.checkpoint_total_s},
          {"energy_j", r.energy_j},
          {"price_per_gpu_hour", r.price_per_gpu_hour},
          {"cost", r.cost},
          {"samples", in.samples},
          {"seed", in.seed}};
}

}  // namespace moesim::campaign
