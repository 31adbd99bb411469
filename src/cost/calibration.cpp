// Reading configs/calibration/*.json into the kernel model's curves.
#include <fstream>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"

namespace moesim::cost {

namespace {

double number_at(const nlohmann::json& root, const std::string& file, const std::string& dotted,
                 double min, double max) {
  const nlohmann::json* node = &root;
  std::string path = "$";
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t end = dotted.find('.', start);
    std::string key = dotted.substr(start, end == std::string::npos ? std::string::npos : end - start);
    path += "." + key;
    if (!node->is_object() || !node->contains(key))
      throw ConfigError(file, path, "a required key (kernel calibration)");
    node = &(*node)[key];
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (!node->is_number()) throw ConfigError(file, path, "a number");
  const double v = node->get<double>();
  if (!(v >= min && v <= max))
    throw ConfigError(file, path, "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

}  // namespace

KernelCalibration load_calibration(const std::filesystem::path& file) {
  const nlohmann::json j = config::read_json_file(file);
  const std::string f = file.string();
  KernelCalibration c;
  auto curve = [&](const std::string& prefix) {
    return GemmCurve{number_at(j, f, prefix + ".max_efficiency", 0.01, 1.0),
                     number_at(j, f, prefix + ".fixed_overhead_us", 0.0, 1e6) * 1e-6};
  };
  c.gemm_bf16 = curve("gemm.bf16");
  c.gemm_fp8 = curve("gemm.fp8");
  c.grouped_gemm = curve("grouped_gemm");
  c.grouped_gemm_fp8 = curve("grouped_gemm_fp8");
  c.attention_forward_efficiency = number_at(j, f, "attention.forward_efficiency", 0.01, 1.0);
  c.attention_backward_efficiency = number_at(j, f, "attention.backward_efficiency", 0.01, 1.0);
  c.elementwise_bw_efficiency = number_at(j, f, "memory.elementwise_efficiency", 0.01, 1.0);
  c.copy_bw_efficiency = number_at(j, f, "memory.copy_efficiency", 0.01, 1.0);
  c.launch_eager_s = number_at(j, f, "launch.eager_us", 0.0, 1e4) * 1e-6;
  c.launch_graph_s = number_at(j, f, "launch.graph_replay_us", 0.0, 1e4) * 1e-6;
  return c;
}

}  // namespace moesim::cost
