// Run results as JSON, a terminal table and CSV.
#include <fmt/format.h>

#include "moesim/engine/result_json.hpp"
#include "moesim/report/energy.hpp"
#include "moesim/report/report.hpp"

namespace moesim::report {

namespace {

// Bytes each observed GPU moved per step, by tier and kind: the dispatcher's deduplication shows
// as fewer NIC bytes per token copy.
std::string traffic_table(const driver::RunResult& r) {
  const Scenario& s = r.scenario;
  std::string out = fmt::format("\n  network traffic per GPU per step (GB, each direction; EP dispatcher {})\n",
                                s.recipe.dispatcher);
  out += fmt::format("  {:<24}", "");
  for (const auto& st : r.sim.stages) out += fmt::format("{:>10}", fmt::format("pp{}", st.pp_rank));
  out += "\n";
  const std::pair<const char*, double engine::Traffic::*> rows[] = {
      {"EP over NVLink", &engine::Traffic::ep_nvlink_bytes},
      {"EP over the NIC", &engine::Traffic::ep_nic_bytes},
      {"TP, DP, PP over NVLink", &engine::Traffic::other_nvlink_bytes},
      {"TP, DP, PP over the NIC", &engine::Traffic::other_nic_bytes}};
  for (const auto& [label, field] : rows) {
    out += fmt::format("  {:<24}", label);
    for (const auto& st : r.sim.stages) out += fmt::format("{:>10.2f}", st.traffic.*field / 1e9);
    out += "\n";
  }
  if (!r.sim.stages.empty() && r.layout.ep > 1) {
    const engine::Traffic& t = r.sim.stages.front().traffic;
    const bool alltoall = s.recipe.dispatcher == "alltoall";
    out += fmt::format("  a token goes to {:.2f} {}", t.ep_copies_per_token,
                       alltoall ? "expert copies (NCCL all-to-all: one per expert, no deduplication)"
                                : "GPUs (one copy per destination GPU)");
    if (!alltoall && t.ep_domains_per_token > 1)
      out += fmt::format(" in {:.2f} NVLink domains (one RDMA copy per destination domain, then NVLink)",
                         t.ep_domains_per_token);
    out += "\n";
  }
  return out;
}

std::string layout_summary(const plan::Layout& l) {
  // Per-block sharding: FSDP, or HSDP as replicas x shard.
  const std::string sharding = !l.fsdp ? ""
                               : l.dp_replicate > 1 ? fmt::format(" HSDP {}x{}", l.dp_replicate, l.dense_shards())
                                                    : std::string(" FSDP");
  return fmt::format("TP{} CP{} PP{} VPP{} EP{} ETP{} DP{} EDP{}{}, {} micro-batches of {}, {} schedule", l.tp,
                     l.cp, l.pp, l.vpp, l.ep, l.etp, l.dp, l.edp, sharding, l.microbatches, l.micro_batch,
                     plan::to_string(l.schedule));
}

// The parts of a breakdown in table order, with their labels.
std::vector<std::pair<const char*, double>> parts(const engine::Breakdown& b) {
  return {{"compute", b.compute_s},
          {"  of which recompute", b.recompute_s},
          {"host launch overhead", b.host_overhead_s},
          {"exposed EP dispatch", b.exposed_ep_dispatch_s},
          {"exposed EP combine", b.exposed_ep_combine_s},
          {"exposed TP", b.exposed_tp_s},
          {"exposed PP", b.exposed_pp_s},
          {"exposed DP", b.exposed_dp_s},
          {"pipeline bubble", b.bubble_s},
          {"optimizer", b.optimizer_s}};
}

}  // namespace

nlohmann::json run_json(const driver::RunResult& r) {
  const Scenario& s = r.scenario;
  nlohmann::json j;
  j["scenario"] = s.name;
  j["system"] = s.system.name;
  if (!s.calibration.empty()) j["calibration"] = s.calibration;
  j["gpu"] = s.system.gpu.name;
  j["gpus"] = s.gpus;
  j["model"] = s.model.name;
  j["stack"] = s.stack.name;
  j["precision"] = std::string(to_string(s.training.precision));
  j["global_batch"] = s.training.global_batch;
  j["seq_len"] = s.training.seq_len;
  j["layout"] = {{"tp", r.layout.tp}, {"cp", r.layout.cp}, {"pp", r.layout.pp},
                 {"vpp", r.layout.vpp}, {"ep", r.layout.ep}, {"etp", r.layout.etp},
                 {"dp", r.layout.dp}, {"edp", r.layout.edp},
                 {"microbatches", r.layout.microbatches},
                 {"schedule", plan::to_string(r.layout.schedule)},
                 {"pipeline_layout", r.layout.pipeline_layout}};
  j["seed"] = s.seed;
  j["variability"] = {{"gpu_speed_cv", s.variability.gpu_speed_cv},
                      {"kernel_jitter_cv", s.variability.kernel_jitter_cv},
                      {"expert_load_sigma", s.variability.expert_load_sigma},
                      {"force_balanced_routing", s.recipe.force_balanced_routing},
                      {"capacity_factor", s.recipe.capacity_factor}};
  j["samples"] = 1;
  j["step_time_s"] = r.metrics.step_time_s;
  j["tflops_per_gpu"] = r.metrics.tflops_per_gpu;
  j["tflops_per_gpu_ci95"] = nullptr;  // with --samples: [low, high] of the mean's 95 % interval
  j["tokens_per_s_per_gpu"] = r.metrics.tokens_per_s_per_gpu;
  j["mfu"] = r.metrics.mfu;
  j["peak_tflops_per_gpu"] = r.metrics.peak_tflops;
  j["flops_convention"] = "megatron num_floating_point_operations";
  // What the framework's own logs would print (the stack's flops_formula).
  j["framework_flops_formula"] = s.stack.flops_formula;
  j["framework_tflops_per_gpu"] = r.metrics.framework_tflops_per_gpu;
  j["dropped_token_fraction"] = r.metrics.dropped_token_fraction;
  const StepEnergy e = step_energy(r);
  j["energy_j_per_step"] = e.total_j();
  j["tokens_per_kwh"] = e.tokens_per_kwh;
  j["energy"] = {{"energy_j_per_step", e.total_j()},
                 {"gpu_energy_j_per_step", e.gpu_j},
                 {"node_energy_j_per_step", e.node_j},
                 {"energy_j_per_step_per_gpu", e.j_per_gpu},
                 {"average_gpu_watts", e.average_gpu_w},
                 {"tokens_per_kwh", e.tokens_per_kwh},
                 {"gpu_tokens_per_kwh", e.gpu_tokens_per_kwh},
                 {"tflops_per_kw_per_gpu", e.tflops_per_kw},
                 {"cluster_tflops_per_kw", e.cluster_tflops_per_kw},
                 {"convention", "GPU at tdp_watts while computing, communication_watts while only communication "
                                "is exposed, idle_watts otherwise; nodes at node_watts_per_gpu (docs/method.md)"}};
  j["breakdown"] = nlohmann::json::array();
  for (const auto& st : r.sim.stages) {
    nlohmann::json b = st.breakdown;
    b["pp_rank"] = st.pp_rank;
    b["replicas"] = st.replicas;
    j["breakdown"].push_back(std::move(b));
  }
  j["traffic"] = nlohmann::json::array();
  for (const auto& st : r.sim.stages) {
    nlohmann::json t = st.traffic;
    t["pp_rank"] = st.pp_rank;
    j["traffic"].push_back(std::move(t));
  }
  j["memory"] = nlohmann::json::array();
  for (const auto& m : r.memory) j["memory"].push_back(memory_json(r.layout, m));
  j["fits_in_memory"] = r.fits_in_memory;
  j["simulation"] = {{"fidelity", r.sim.simulated_gpus == s.gpus ? "full" : "folded"},
                     {"simulated_gpus", r.sim.simulated_gpus},
                     {"activities", r.sim.activities}};
  if (s.published) {
    const Published& p = *s.published;
    nlohmann::json pub = {{"id", p.id}, {"source", p.source}};
    if (p.tflops_per_gpu > 0) {
      pub["tflops_per_gpu"] = p.tflops_per_gpu;
      pub["relative_error"] = r.metrics.tflops_per_gpu / p.tflops_per_gpu - 1;
    }
    j["published"] = pub;
  }
  j["warnings"] = r.warnings;
  return j;
}

std::string run_table(const driver::RunResult& r) {
  const Scenario& s = r.scenario;
  std::string out;
  out += fmt::format("{}\n", s.name);
  out += fmt::format("  {} x {} GPUs ({}), {}, {}, {}\n", s.system.name, s.gpus, s.system.gpu.name,
                     s.model.name, s.stack.name, to_string(s.training.precision));
  if (!s.calibration.empty()) out += fmt::format("  calibrated by {}\n", s.calibration);
  out += fmt::format("  layout: {}\n\n", layout_summary(r.layout));
  out += fmt::format("  model TFLOP/s per GPU  {:10.1f}   (Megatron convention)\n", r.metrics.tflops_per_gpu);
  if (s.stack.flops_formula != "megatron")
    out += fmt::format("  {:<22} {:10.1f}   (what its logs print: its own FLOP formula)\n",
                       s.stack.flops_formula + " TFLOP/s", r.metrics.framework_tflops_per_gpu);
  out += fmt::format("  tokens/s per GPU       {:10.1f}\n", r.metrics.tokens_per_s_per_gpu);
  out += fmt::format("  MFU                    {:9.1f} %   (of {:.0f} TFLOP/s dense {})\n",
                     100 * r.metrics.mfu, r.metrics.peak_tflops, to_string(s.training.precision));
  out += fmt::format("  step time              {:10.3f} s\n", r.metrics.step_time_s);
  if (r.metrics.dropped_token_fraction > 0)
    out += fmt::format("  dropped tokens         {:9.2f} %   of the routed copies, expected (capacity factor {:g})\n",
                       100 * r.metrics.dropped_token_fraction, s.recipe.capacity_factor);
  const StepEnergy e = step_energy(r);
  out += fmt::format("  energy per step        {:10.2f} MJ   ({:.1f} kJ per GPU; GPUs {:.0f} W on average)\n",
                     e.total_j() / 1e6, e.j_per_gpu / 1e3, e.average_gpu_w);
  out += fmt::format("  tokens per kWh         {:10.0f}     (GPUs alone: {:.0f})\n", e.tokens_per_kwh,
                     e.gpu_tokens_per_kwh);
  out += fmt::format("  TFLOP/s per kW         {:10.1f}     per GPU; {:.1f} for the cluster with its nodes\n",
                     e.tflops_per_kw, e.cluster_tflops_per_kw);
  if (s.published && s.published->tflops_per_gpu > 0)
    out += fmt::format("  published              {:10.1f}   ({}, {}; error {:+.1f} %)\n",
                       s.published->tflops_per_gpu, s.published->id, s.published->source,
                       100 * (r.metrics.tflops_per_gpu / s.published->tflops_per_gpu - 1));
  out += "\n  step-time breakdown per pipeline rank (seconds)\n";
  out += fmt::format("  {:<24}", "");
  for (const auto& st : r.sim.stages) out += fmt::format("{:>10}", fmt::format("pp{}", st.pp_rank));
  out += "\n";
  if (!r.sim.stages.empty()) {
    const size_t n = parts(r.sim.stages.front().breakdown).size();
    for (size_t i = 0; i < n; ++i) {
      out += fmt::format("  {:<24}", parts(r.sim.stages.front().breakdown)[i].first);
      for (const auto& st : r.sim.stages) out += fmt::format("{:>10.3f}", parts(st.breakdown)[i].second);
      out += "\n";
    }
  }
  out += traffic_table(r);
  out += memory_table(r.layout, r.memory);
  for (const auto& w : r.warnings) out += fmt::format("\n  warning: {}\n", w);
  return out;
}

std::string runs_csv(const std::vector<driver::RunResult>& results) {
  std::string out =
      "scenario,system,gpus,precision,tp,pp,vpp,ep,dp,microbatches,step_time_s,tflops_per_gpu,"
      "tokens_per_s_per_gpu,mfu,compute_s,host_overhead_s,exposed_ep_s,exposed_tp_s,exposed_pp_s,"
      "exposed_dp_s,bubble_s,optimizer_s,max_memory_bytes,fits_in_memory\n";
  for (const auto& r : results) {
    // The slowest pipeline rank's breakdown stands for the step.
    engine::Breakdown b;
    double finish = -1;
    for (const auto& st : r.sim.stages)
      if (st.finish_s > finish) {
        finish = st.finish_s;
        b = st.breakdown;
      }
    double max_mem = 0;
    for (const auto& m : r.memory) max_mem = std::max(max_mem, m.total_bytes());
    std::string name = r.scenario.name;
    for (char& c : name)
      if (c == ',' || c == '"') c = ' ';
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},"
                       "{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{}\n",
                       name, r.scenario.system.name, r.scenario.gpus, to_string(r.scenario.training.precision),
                       r.layout.tp, r.layout.pp, r.layout.vpp, r.layout.ep, r.layout.dp,
                       r.layout.microbatches, r.metrics.step_time_s, r.metrics.tflops_per_gpu,
                       r.metrics.tokens_per_s_per_gpu, r.metrics.mfu, b.compute_s, b.host_overhead_s,
                       b.exposed_ep_dispatch_s + b.exposed_ep_combine_s, b.exposed_tp_s,
                       b.exposed_pp_s, b.exposed_dp_s, b.bubble_s, b.optimizer_s, max_mem,
                       r.fits_in_memory ? "true" : "false");
  }
  return out;
}

nlohmann::json scaling_json(const std::vector<driver::RunResult>& points) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : points) {
    nlohmann::json row = run_json(p);
    row["scaling_efficiency"] = p.metrics.tflops_per_gpu / points.front().metrics.tflops_per_gpu;
    row["scaling_efficiency_ci95"] = nullptr;
    j.push_back(std::move(row));
  }
  return j;
}

std::string scaling_table(const std::vector<driver::RunResult>& points) {
  std::string out = fmt::format("weak scaling of {} (layout fixed, global batch grows with DP)\n",
                                points.front().scenario.name);
  out += fmt::format("  {:>6} {:>8} {:>12} {:>14} {:>10} {:>12}\n", "GPUs", "GBS", "step (s)",
                     "TFLOP/s/GPU", "MFU %", "efficiency");
  for (const auto& p : points)
    out += fmt::format("  {:>6} {:>8} {:>12.3f} {:>14.1f} {:>10.1f} {:>11.1f}%\n", p.scenario.gpus,
                       p.scenario.training.global_batch, p.metrics.step_time_s,
                       p.metrics.tflops_per_gpu, 100 * p.metrics.mfu,
                       100 * p.metrics.tflops_per_gpu / points.front().metrics.tflops_per_gpu);
  return out;
}

}  // namespace moesim::report
