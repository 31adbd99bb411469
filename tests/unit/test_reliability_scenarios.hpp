#pragma once
// Random valid scenarios within small bounds for the property tests: DeepSeek-V3 cut to a few
// layers (or a few-layer dense Llama) on GB300 NVL72 or HGX H100, small tp/pp/vpp/ep and one to
// four micro-batches, so that a folded step simulates in tens of milliseconds. The generator is
// a fixed-seed std::mt19937 (its output is the same on every standard library) and only keeps
// candidates that plan::make_layout accepts.
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "moesim/config/error.hpp"
#include "moesim/plan/layout.hpp"
#include "scenario_fixtures.hpp"

namespace moesim::test {

struct GeneratedScenario {
  Scenario scenario;
  int microbatches = 1;
  std::string label;
};

class ScenarioGenerator {
 public:
  explicit ScenarioGenerator(unsigned seed) : rng_(seed) {}

  template <class T>
  const T& pick(const std::vector<T>& options) {
    return options[rng_() % options.size()];
  }

  // The next candidate that makes a valid layout (gives up after many invalid ones).
  GeneratedScenario next() {
    for (int attempt = 0; attempt < 1000; ++attempt) {
      GeneratedScenario g = candidate();
      try {
        plan::make_layout(g.scenario);
        return g;
      } catch (const InfeasibleError&) {
      }
    }
    throw std::runtime_error("ScenarioGenerator: no valid layout in 1000 candidates");
  }

 private:
  GeneratedScenario candidate() {
    Scenario s = small_moe(4);
    const bool dense = rng_() % 4 == 0;
    const bool hgx = rng_() % 3 == 0;
    if (hgx) {
      s.system = config::load_system("hgx-h100", configs_dir());
      s.training.precision = Precision::bf16;
    }
    if (dense) {
      s.model = config::load_model("llama-3.1-405b", configs_dir());
      s.stack = config::load_stack("megatron-core-baseline", configs_dir());
      s.recipe = s.stack.recipe;
    }
    s.model.layers = pick(std::vector<int>{2, 3, 4, 6});
    if (!dense) s.model.moe.first_dense_layers = pick(std::vector<int>{0, 1});
    s.training.seq_len = pick(std::vector<int>{1024, 2048, 4096});
    s.training.micro_batch = pick(std::vector<int>{1, 1, 2});
    s.training.mtp_layers = 0;
    s.layout = LayoutSpec{};
    s.layout.tp = pick(std::vector<int>{1, 1, 2, 4});
    s.layout.pp = pick(std::vector<int>{1, 2, 2});
    s.layout.vpp = s.layout.pp > 1 && s.model.layers >= 4 ? pick(std::vector<int>{1, 1, 2}) : 1;
    s.gpus = pick(hgx ? std::vector<int>{8, 16, 32} : std::vector<int>{8, 16, 32, 64});
    const int per_stage = s.gpus / s.layout.pp;
    s.layout.ep = dense ? 1 : pick(std::vector<int>{1, 2, 4, 8, 16, 32});
    if (s.layout.ep > per_stage) s.layout.ep = per_stage;
    s.layout.gpus_per_domain = hgx ? 0 : pick(std::vector<int>{0, 8, 32});
    const int dp = s.gpus / (s.layout.tp * s.layout.pp);
    GeneratedScenario g;
    g.microbatches = s.layout.vpp > 1 ? s.layout.pp * pick(std::vector<int>{1, 2}) : pick(std::vector<int>{1, 2, 4});
    s.training.global_batch = std::max(1, dp) * s.training.micro_batch * g.microbatches;
    s.name = fmt::format("{} {} L{} (dense {}) gpus{} tp{} pp{} vpp{} ep{} mb{}x{} S{} per-domain {}",
                         hgx ? "H100" : "GB300", dense ? "dense" : "moe", s.model.layers,
                         dense ? s.model.layers : s.model.moe.first_dense_layers, s.gpus, s.layout.tp, s.layout.pp,
                         s.layout.vpp, s.layout.ep, s.training.micro_batch, g.microbatches, s.training.seq_len,
                         s.layout.gpus_per_domain);
    g.label = s.name;
    g.scenario = s;
    return g;
  }

  std::mt19937 rng_;
};

}  // namespace moesim::test
