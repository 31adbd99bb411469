#pragma once
// The one entry point that fuzzing and its regression replay share: a scenario as raw bytes goes
// through the same steps as `moesim plan` up to the layout (parse_json_text, load_scenario_json
// against the bundled configs/, plan::make_layout). Rejections must be ConfigError (exit 2) or
// InfeasibleError (exit 3), with a message that names the file and a JSON path; anything else
// escapes as an exception (a crash for libFuzzer, a failure for the replay test), and so do
// sanitizer reports and broken invariants of an accepted layout.
//
// Built twice: by tests/fuzz/fuzz_scenario.cpp (clang, -fsanitize=fuzzer) and by
// tests/unit/test_bad_inputs_fuzz.cpp (the normal g++ test binary, so the replay runs in CI).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/plan/layout.hpp"

namespace moesim::fuzz {

enum class Outcome { config_error, infeasible, layout };

// A broken promise of the configuration or plan stage (not a rejected input).
struct InvariantViolation : std::logic_error {
  using std::logic_error::logic_error;
};

inline const char* label() { return "fuzz-input.json"; }

inline std::filesystem::path bundled_configs() {
  return std::filesystem::path(MOESIM_SOURCE_DIR) / "configs";
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw InvariantViolation(what);
}

// What every accepted layout promises the later stages.
inline void check_layout(const Scenario& s, const plan::Layout& l) {
  require(l.world == s.gpus, "layout world differs from gpus");
  require(l.tp >= 1 && l.cp >= 1 && l.pp >= 1 && l.vpp >= 1 && l.dp >= 1 && l.ep >= 1 && l.etp >= 1 && l.edp >= 1,
          "a parallel degree below 1");
  require(static_cast<long long>(l.tp) * l.cp * l.pp * l.dp == l.world,
          fmt::format("tp*cp*pp*dp = {}*{}*{}*{} != world {}", l.tp, l.cp, l.pp, l.dp, l.world));
  require(static_cast<long long>(l.etp) * l.ep * l.edp * l.pp == l.world,
          fmt::format("etp*ep*edp*pp = {}*{}*{}*{} != world {}", l.etp, l.ep, l.edp, l.pp, l.world));
  require(l.microbatches >= 1, "no micro-batch");
  require(static_cast<long long>(l.microbatches) * l.micro_batch * l.dp == s.training.global_batch,
          "microbatches * micro_batch * dp != global_batch");
  require(static_cast<long long>(l.stages.size()) == static_cast<long long>(l.pp) * l.vpp,
          "virtual stages != pp * vpp");
  int layers = 0, mtp = 0, embedding = 0, output = 0;
  for (const auto& v : l.stages) {
    layers += v.layers;
    mtp += v.mtp_layers;
    embedding += v.embedding;
    output += v.output;
  }
  require(layers == s.model.layers && mtp == s.training.mtp_layers && embedding == 1 && output == 1,
          "virtual stages do not hold the model exactly once");
  for (int rank : {0, l.world - 1}) {
    require(static_cast<int>(l.tp_group(rank).size()) == l.tp, "tp group size");
    require(static_cast<int>(l.ep_group(rank).size()) == l.ep, "ep group size");
    require(static_cast<int>(l.pp_group(rank).size()) == l.pp, "pp group size");
  }
}

inline Outcome run_one(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json document = config::parse_json_text(text, label());
    config::LoadOptions options;
    options.configs_dir = bundled_configs();
    const Scenario s = config::load_scenario_json(document, label(), options);
    const plan::Layout l = plan::make_layout(s);
    check_layout(s, l);
    return Outcome::layout;
  } catch (const ConfigError& e) {
    // A usable message: a file (the input or a bundled config) and a JSON path.
    require(!e.file().empty() && !e.json_path().empty() && e.json_path()[0] == '$' && !e.expected().empty(),
            std::string("ConfigError without file, JSON path or expectation: ") + e.what());
    return Outcome::config_error;
  } catch (const InfeasibleError& e) {
    require(std::string(e.what()).size() > 0, "InfeasibleError without a message");
    return Outcome::infeasible;
  }
}

}  // namespace moesim::fuzz
