// moesim ops SCENARIO: the kernels of one layer with their shapes and modelled times, so a user
// can see what the cost model thinks each operator costs on the scenario's GPU.
#include <fmt/format.h>

#include "commands.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/model/ops.hpp"

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

std::string section_table(const std::string& title, const std::vector<const model::Section*>& sections,
                          const Scenario& s, const cost::KernelCalibration& cal) {
  std::string out = fmt::format("{}\n  {:<24}{:<30}{:>11}{:>11}{:>9}\n", title, "op", "shape",
                                "fwd (us)", "bwd (us)", "TFLOP/s");
  double fwd_total = 0, bwd_total = 0;
  for (const model::Section* sec : sections)
    for (const model::Op& op : sec->ops) {
      const cost::OpCost f = cost::op_cost(op, model::Pass::forward, s.training.precision, s.system.gpu, cal);
      const cost::OpCost b = cost::op_cost(op, model::Pass::backward, s.training.precision, s.system.gpu, cal);
      fwd_total += f.gpu_seconds;
      bwd_total += b.gpu_seconds;
      out += fmt::format("  {:<24}{:<30}{:>11.1f}{:>11.1f}{:>9}\n", op.name, shape(op), f.gpu_seconds * 1e6,
                         b.gpu_seconds * 1e6,
                         f.flop > 0 ? fmt::format("{:.0f}", f.flop / f.gpu_seconds / 1e12) : "-");
    }
  out += fmt::format("  {:<54}{:>11.1f}{:>11.1f}\n\n", "total (kernels only, no launch gaps)", fwd_total * 1e6,
                     bwd_total * 1e6);
  return out;
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
    if (s.model.moe.experts > 0)
      text += section_table("MoE layer", {&moe.attention, &moe.router, &moe.experts, &moe.unpermute, &moe.shared_experts}, s, cal);
    text += section_table("dense layer", {&dense.attention, &dense.dense_ffn}, s, cal);
    text += section_table("output", {&out_sec}, s, cal);
    emit(text, "");
  });
}

}  // namespace moesim::cli
