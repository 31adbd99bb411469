// moesim ops SCENARIO: the kernels of one layer with their shapes and modelled times, so a user
// can see what the cost model thinks each operator costs on the scenario's GPU, which bound sets
// it (tensor cores, exponentials, shared memory, HBM, launch) and at which clock, and how many
// launches the layer takes and how much host time they cost under the scenario's release.
#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/cost/section_cost.hpp"
#include "moesim/model/ops.hpp"
#include "moesim/model/params.hpp"

namespace moesim::cli {

namespace {

std::string shape(const model::Op& op) {
  switch (op.kind) {
    case model::OpKind::gemm: return fmt::format("{:.0f}x{:.0f}x{:.0f}", op.m, op.k, op.n);
    case model::OpKind::grouped_gemm: return fmt::format("{}x({:.0f}x{:.0f}x{:.0f})", op.groups, op.m, op.k, op.n);
    case model::OpKind::attention:
      return fmt::format("{} heads, S={:.0f}, d={}/{}", op.attention_heads, op.attention_seq_len,
                         op.attention_qk_dim, op.attention_v_dim);
    case model::OpKind::memory: return fmt::format("{:.1f} MB", op.bytes / 1e6);
  }
  return "";
}

// "tensor @ 1555 MHz", or "memory": what sets the kernel's time, and the clock tensor-core
// kernels run at.
std::string bound(const cost::OpCost& c) {
  return c.clock_hz > 0 ? fmt::format("{} @ {:.0f}", cost::to_string(c.bound), c.clock_hz / 1e6)
                        : std::string(cost::to_string(c.bound));
}

std::string section_table(const std::string& title, const std::vector<const model::Section*>& sections,
                          const Scenario& s, const cost::KernelCalibration& cal) {
  // The name column fits the longest name (a GEMM's scale swizzle is 33 characters), so no name
  // runs into its shape.
  std::size_t name_width = 24;
  for (const model::Section* sec : sections)
    for (const model::Op& op : sec->ops) name_width = std::max(name_width, op.name.size() + 2);
  std::string out = fmt::format("{}\n  {:<{}}{:<30}{:>10}{:>10}{:>9}  {:<22}{}\n", title, "op", name_width, "shape",
                                "fwd (us)", "bwd (us)", "TFLOP/s", "fwd bound @ MHz", "bwd bound @ MHz");
  double fwd_total = 0, bwd_total = 0;
  for (const model::Section* sec : sections)
    for (const model::Op& op : sec->ops) {
      const cost::OpCost f = cost::op_cost(op, model::Pass::forward, s.training.precision, s.system.gpu, cal);
      const cost::OpCost b = cost::op_cost(op, model::Pass::backward, s.training.precision, s.system.gpu, cal);
      fwd_total += f.gpu_seconds;
      bwd_total += b.gpu_seconds;
      out += fmt::format("  {:<{}}{:<30}{:>10.1f}{:>10.1f}{:>9}  {:<22}{}\n", op.name, name_width, shape(op),
                         f.gpu_seconds * 1e6, b.gpu_seconds * 1e6,
                         f.flop > 0 ? fmt::format("{:.0f}", f.flop / f.gpu_seconds / 1e12) : "-", bound(f),
                         b.kernels > 0 ? bound(b) : "-");
    }
  const std::size_t label_width = name_width + 30;  // a summary line's label spans name and shape
  out += fmt::format("  {:<{}}{:>10.1f}{:>10.1f}\n", "total (kernels only, no launch gaps)", label_width, fwd_total * 1e6,
                     bwd_total * 1e6);
  // The launches as a step prices them (cost::section_cost): the release's per-expert launches,
  // graph-captured sections at the replay cost, Transformer Engine's per-call host time, the
  // backward's recomputed forwards; the host time on the system's CPU.
  cost::ComputeCost fwd_issue, bwd_issue;
  for (const model::Section* sec : sections) {
    fwd_issue += cost::section_cost(*sec, model::Pass::forward, s, cal);
    bwd_issue += cost::section_cost(*sec, model::Pass::backward, s, cal);
  }
  out += fmt::format("  {:<{}}{:>10}{:>10}\n", "kernel launches (recomputed forwards in bwd)", label_width,
                     fwd_issue.kernels, bwd_issue.kernels);
  out += fmt::format("  {:<{}}{:>10.1f}{:>10.1f}\n\n", "host CPU to issue them (us)", label_width,
                     fwd_issue.host_seconds * 1e6, bwd_issue.host_seconds * 1e6);
  return out;
}

// The GPU's rates the kernels run at, against the datasheet peaks (at the boost clock).
std::string gpu_summary(const GpuSpec& g) {
  std::string out = fmt::format("{}: {} SMs, {} architecture; sustained clock under the {:.0f} W limit:\n", g.name,
                                g.sm_count, g.architecture, g.tdp_w);
  const std::pair<const char*, Precision> formats[] = {
      {"BF16", Precision::bf16}, {"FP8", Precision::fp8}, {"NVFP4", Precision::nvfp4}};
  for (const auto& [name, p] : formats) {
    if (g.peak_flop_per_s(p) <= 0) continue;
    const double boost_mhz = g.peak_flop_per_s(p) / (g.sm_count * g.tensor_flop_per_clock_per_sm(p)) / 1e6;
    out += fmt::format("  {:<6}{:>6.0f} MHz: {:>6.0f} TFLOP/s (datasheet {:.0f} at {:.0f} MHz)\n", name,
                       g.sustained_clock_hz(p) / 1e6, g.sustained_flop_per_s(p) / 1e12, g.peak_flop_per_s(p) / 1e12,
                       boost_mhz);
  }
  return out + "\n";
}
}  // namespace

void add_ops_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ops", "List one layer's kernels with shapes and modelled times");
  auto scenario = std::make_shared<std::string>();
  auto configs = std::make_shared<std::string>();
  cmd->add_option("scenario", *scenario, "Scenario JSON file")->required();
  cmd->add_option("--configs", *configs, "configs/ directory (default: found from the scenario)");
  cmd->callback([=] {
    config::LoadOptions lo;
    lo.configs_dir = *configs;
    const Scenario s = config::load_scenario(*scenario, lo);
    const auto dir = configs->empty() ? config::find_configs_dir(s.file) : std::filesystem::path(*configs);
    const cost::KernelCalibration cal = cost::load_calibration(cost::default_calibration_file(dir));
    const model::Shard shard = model::shard_for(s);
    const model::LayerProgram moe = model::layer_program(s.model, shard, true);
    const model::LayerProgram dense = model::layer_program(s.model, shard, false);
    const model::Section out_sec = model::output_section(s.model, shard);
    std::string text = fmt::format("{} on {} ({}), micro-batch of {} tokens\n\n", s.model.name,
                                   s.system.gpu.name, to_string(s.training.precision), shard.tokens());
    text += gpu_summary(s.system.gpu);
    if (s.model.moe.experts > 0)
      text += section_table("MoE layer", {&moe.attention, &moe.router, &moe.experts, &moe.unpermute, &moe.shared_experts}, s, cal);
    bool any_dense_layer = false;  // an all-MoE model (Mixtral, Qwen3-MoE) has none to show
    for (int i = 0; i < s.model.layers && !any_dense_layer; ++i) any_dense_layer = !model::is_moe_layer(s.model, i);
    if (any_dense_layer) text += section_table("dense layer", {&dense.attention, &dense.dense_ffn}, s, cal);
    text += section_table("output", {&out_sec}, s, cal);
    emit(text, "");
  });
}

}  // namespace moesim::cli
