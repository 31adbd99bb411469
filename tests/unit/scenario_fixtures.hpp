#pragma once
// Scenarios for model, plan, workload and engine tests: the bundled ones, and small ones built
// from the bundled configs with a few fields changed.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/platform/topology.hpp"

namespace moesim::test {

inline std::filesystem::path repo() { return MOESIM_SOURCE_DIR; }
inline std::filesystem::path configs_dir() { return repo() / "configs"; }

// A file's whole text; an unreadable file fails the test that reads it.
inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline Scenario bundled(const std::string& relative) {
  return config::load_scenario(repo() / relative);
}

inline Scenario record_gb300() { return bundled("scenarios/gb300-256-record.json"); }

// The kernel calibration a run of `s` reads from the bundled configs.
inline cost::KernelCalibration calibration(const Scenario& s) {
  driver::RunOptions o;
  o.configs_dir = configs_dir().string();
  return cost::load_calibration(driver::calibration_path(s, o));
}

// The bundled kernel calibration, loaded once.
inline const cost::KernelCalibration& default_calibration() {
  static const cost::KernelCalibration cal = cost::load_calibration(cost::default_calibration_file(configs_dir()));
  return cal;
}

// A bundled system's topology for `gpus` GPUs (per_domain 0: the system's own NVLink domain).
inline platform::Topology system_topology(const std::string& name, int gpus, int per_domain = 0,
                                          Precision precision = Precision::bf16) {
  return platform::make_topology(config::load_system(name, configs_dir()), gpus, per_domain, precision);
}

// The probability that a token's top-k of E experts hits at least one of L given experts
// (uniform routing, no group limit): the hypergeometric closed form.
inline double hit_probability(int E, int L, int k) {
  double miss = 1.0;
  for (int i = 0; i < k; ++i) miss *= static_cast<double>(E - L - i) / (E - i);
  return 1.0 - miss;
}

// A dense model of `layers` identical layers with a tiny vocabulary, so that every pipeline
// stage does the same work: the textbook setting of pipeline-bubble formulas.
inline Scenario uniform_dense(int pp, int microbatches, int vpp = 1, int layers_per_stage = 2) {
  Scenario s = record_gb300();
  s.name = "uniform dense";
  s.model = config::load_model("llama-3.1-405b", configs_dir());
  s.model.layers = pp * vpp * layers_per_stage;
  s.model.vocab = 8;  // embedding and logits negligible
  s.gpus = pp;
  s.training.global_batch = microbatches;
  s.training.micro_batch = 1;
  s.training.mtp_layers = 0;
  s.training.precision = Precision::bf16;
  s.layout = LayoutSpec{};
  s.layout.pp = pp;
  s.layout.vpp = vpp;
  std::string layout;
  for (int st = 0; st < pp * vpp; ++st) {
    if (st > 0) layout += '|';
    if (st == 0) layout += 'E';
    layout += std::string(layers_per_stage, 't');
  }
  s.layout.pipeline_layout = layout + "L";
  s.stack = config::load_stack("megatron-core-baseline", configs_dir());
  s.recipe = s.stack.recipe;
  s.variability = VariabilitySpec{};  // identical GPUs: the textbook formulas assume them
  s.published.reset();
  return s;
}

// DeepSeek-V3 cut to a few layers on 64 GB300 GPUs: EP inside one rack, DP across two. With the
// system's default variability (identical_gpus() takes it away).
inline Scenario small_moe(int layers = 4) {
  Scenario s = record_gb300();
  s.name = "small MoE";
  s.model.layers = layers;
  s.model.moe.first_dense_layers = 1;
  s.gpus = 64;
  s.training.global_batch = 64;  // dp 32 -> 2 micro-batches
  s.training.mtp_layers = 0;
  s.layout.pp = 2;
  s.layout.vpp = 1;
  s.layout.ep = 32;
  s.layout.gpus_per_domain = 32;
  s.layout.pipeline_layout = "";
  s.published.reset();
  return s;
}

// The same scenario with identical GPUs and balanced routing: every rank of a role the same.
inline Scenario identical_gpus(Scenario s) {
  s.variability = VariabilitySpec{};
  s.recipe.force_balanced_routing = true;
  return s;
}

}  // namespace moesim::test
