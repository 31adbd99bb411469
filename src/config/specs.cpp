#include "moesim/config/specs.hpp"

#include <algorithm>
#include <cstdio>

namespace moesim {

std::optional<std::pair<int, int>> parse_major_minor(const std::string& version) {
  int major = 0, minor = 0;
  char tail = 0;
  const int n = std::sscanf(version.c_str(), "%d.%d%c", &major, &minor, &tail);
  if (n < 2 || (n == 3 && tail != '.') || major < 0 || minor < 0) return std::nullopt;
  return std::pair{major, minor};
}

double GpuSpec::peak_flop_per_s(Precision p) const {
  switch (tensor_family(p)) {
    case Precision::bf16: return bf16_flop_per_s;
    case Precision::nvfp4: return fp4_flop_per_s;
    default: return fp8_flop_per_s;  // every FP8 flavour runs on the FP8 tensor cores
  }
}

double GpuSpec::tensor_flop_per_clock_per_sm(Precision p) const {
  switch (tensor_family(p)) {
    case Precision::bf16: return tensor_flop_per_clock_per_sm_bf16;
    case Precision::nvfp4: return tensor_flop_per_clock_per_sm_fp4;
    default: return tensor_flop_per_clock_per_sm_fp8;
  }
}

double GpuSpec::sustained_clock_hz(Precision p) const {
  switch (tensor_family(p)) {
    case Precision::bf16: return sustained_clock_hz_bf16;
    case Precision::nvfp4: return sustained_clock_hz_fp4;
    default: return sustained_clock_hz_fp8;
  }
}

double GpuSpec::sustained_flop_per_s(Precision p) const {
  return sm_count * tensor_flop_per_clock_per_sm(p) * sustained_clock_hz(p);
}

bool RecipeSpec::offloads(const std::string& module) const {
  return std::find(offload.begin(), offload.end(), module) != offload.end();
}

bool RecipeSpec::recomputes(const std::string& module) const {
  for (const auto& r : recompute)
    if (r == module || r == "full") return true;
  return false;
}

std::vector<std::pair<std::string, bool>> RecipeSpec::switches() const {
  return {{"fp8_dispatch", fp8_dispatch},
          {"ep_overlap", ep_overlap},
          {"delay_wgrad", delay_wgrad},
          {"fused_permute", fused_permute},
          {"cross_entropy_fusion", cross_entropy_fusion},
          {"fused_swizzle", fused_swizzle},
          {"router_fusion", router_fusion},
          {"fused_quantization", fused_quantization},
          {"activation_fp8_input_store", activation_fp8_input_store},
          {"fp8_attention", fp8_attention},
          {"fp8_param_gather", fp8_param_gather},
          {"programmatic_dependent_launch", programmatic_dependent_launch},
          {"overlap_grad_reduce", overlap_grad_reduce},
          {"overlap_param_gather", overlap_param_gather},
          {"force_balanced_routing", force_balanced_routing}};
}

const std::vector<std::string>& pipeline_schedule_names() {
  static const std::vector<std::string> names = {"1f1b", "zb-h1", "zb-v", "dualpipe", "dualpipev"};
  return names;
}

}  // namespace moesim
