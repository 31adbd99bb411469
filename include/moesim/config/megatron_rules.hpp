#pragma once
// Megatron-Core's own checks on the settings a scenario chooses (recipe and layout), so that
// moesim refuses what Megatron refuses instead of simulating a run that cannot start. Each
// rule quotes Megatron's message and names the file it is raised in (NVIDIA/Megatron-LM);
// docs/megatron-rules.md lists them. The scenario reader enforces them (a ConfigError pointing
// at `where`), and docs/scenarios.md shows them among the scenario's rules.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "moesim/config/specs.hpp"

namespace moesim::config {

struct MegatronRule {
  std::string where;        // scenario key the error points at, e.g. "layout.vpp"
  std::string requirement;  // what moesim requires, in the scenario's keys
  std::string quote;        // Megatron's assertion message, verbatim
  std::string source;       // where Megatron raises it, e.g. "megatron/core/transformer/transformer_config.py"
};

// Every rule, in the order they are checked.
const std::vector<MegatronRule>& megatron_rules();

// The rules `s` breaks: each one's index in megatron_rules() with the values at hand.
std::vector<std::pair<std::size_t, std::string>> broken_megatron_rules(const Scenario& s);

// The message of a broken rule: moesim's requirement, then Megatron's words and file.
std::string megatron_rule_text(const MegatronRule& rule);

}  // namespace moesim::config
