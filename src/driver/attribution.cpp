#include "moesim/driver/attribution.hpp"

#include <fmt/format.h>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"

namespace moesim::driver {

namespace {

// Settings that only make sense together are applied as one step.
const std::vector<std::vector<std::string>>& setting_groups() {
  static const std::vector<std::vector<std::string>> groups = {
      {"fused_permute"}, {"cross_entropy_fusion"}, {"router_fusion"},
      {"dispatcher", "dispatcher_sms", "deepep", "hybridep"},
      {"fp8_dispatch"}, {"recompute"}, {"cuda_graphs"},
      {"host_overhead_per_kernel_us"}, {"eager_launch_gap_us"}, {"graph_launch_per_kernel_us"},
      {"programmatic_dependent_launch", "fused_swizzle"}, {"fused_quantization"}, {"fp8_attention"},
      {"fp8_param_gather"}, {"adam_moment_dtype"}, {"main_grad_dtype"}, {"ep_overlap"}, {"delay_wgrad"},
      {"overlap_grad_reduce"}, {"overlap_param_gather"}};
  return groups;
}

// The scenario's stack as one flat JSON object (stack files have no nested settings).
nlohmann::json resolved_stack(const nlohmann::json& ref, const std::filesystem::path& configs) {
  if (ref.is_string()) return config::read_json_file(configs / "stacks" / (ref.get<std::string>() + ".json"));
  nlohmann::json base = config::read_json_file(configs / "stacks" / (ref.at("base").get<std::string>() + ".json"));
  for (const auto& [k, v] : ref.items())
    if (k != "base") base[k] = v;
  return base;
}

std::string describe(const std::string& key, const nlohmann::json& value) {
  return fmt::format("{} = {}", key, value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

std::vector<AttributionStep> attribute(const std::filesystem::path& scenario_file,
                                       const std::string& from_stack, const RunOptions& options) {
  const nlohmann::json scenario = config::read_json_file(scenario_file);
  const std::filesystem::path configs =
      options.configs_dir.empty() ? config::find_configs_dir(scenario_file) : std::filesystem::path(options.configs_dir);
  if (!scenario.contains("stack"))
    throw ConfigError(scenario_file.string(), "$.stack", "a stack to attribute (required key missing)");
  const nlohmann::json target = resolved_stack(scenario.at("stack"), configs);
  const nlohmann::json start = resolved_stack(nlohmann::json(from_stack), configs);

  std::vector<AttributionStep> steps;
  nlohmann::json overrides = {{"base", from_stack}};
  auto simulate = [&](const std::string& change) {
    nlohmann::json s = scenario;
    s["stack"] = overrides;
    s.erase("published");
    const Scenario sc = config::load_scenario_json(s, scenario_file.string() + " (attribution)",
                                                   config::LoadOptions{configs, options.calibration_overlays});
    const RunResult r = run_scenario(sc, options);
    steps.push_back({change, r.metrics.tflops_per_gpu, r.metrics.step_time_s});
  };
  simulate("start: " + start.value("name", from_stack));
  for (const auto& group : setting_groups()) {
    std::string change;
    for (const auto& key : group) {
      if (!target.contains(key) || (start.contains(key) && start.at(key) == target.at(key))) continue;
      if (overrides.contains(key) && overrides.at(key) == target.at(key)) continue;
      overrides[key] = target.at(key);
      change += (change.empty() ? "" : ", ") + describe(key, target.at(key));
    }
    if (!change.empty()) simulate(change);
  }
  return steps;
}

std::string attribution_table(const std::vector<AttributionStep>& steps) {
  std::string out = fmt::format("{:>4}  {:<72}{:>13}{:>9}\n", "step", "change", "TFLOP/s/GPU", "gain");
  for (size_t i = 0; i < steps.size(); ++i) {
    const double gain = i == 0 ? 0 : steps[i].tflops_per_gpu / steps[i - 1].tflops_per_gpu - 1;
    out += fmt::format("{:>4}  {:<72}{:>13.1f}{:>8}\n", i, steps[i].change, steps[i].tflops_per_gpu,
                       i == 0 ? "" : fmt::format("{:+.1f}%", 100 * gain));
  }
  return out;
}

}  // namespace moesim::driver
