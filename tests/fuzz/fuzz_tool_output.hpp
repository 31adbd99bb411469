#pragma once
// The tool-output target: {"tool_output": {"text": <a measured output as its tool prints it>,
// ...hints}} read as `moesim calibrate` reads a file (calibrate::parse_tool_output: nccl-tests,
// DeepEP's and HybridEP's tests, kernel timing tables), with the command's hints as keys (ranks,
// op, algo, experts, sms, tokens, hidden, topk; the long options without dashes). Only the reading:
// fitting prices every row through the collective and kernel models the other targets cover.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_checks.hpp"
#include "moesim/calibrate/tool_output.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::fuzz {

// The hints as CLI11 checks them (ranges, choices); a value it would refuse is the input's error.
inline calibrate::ToolHints tool_hints(const nlohmann::json& input) {
  calibrate::ToolHints h;
  for (auto it = input.begin(); it != input.end(); ++it) {
    const std::string key = it.key();
    const nlohmann::json& value = it.value();
    const std::string path = "$.tool_output." + key;
    const auto integer = [&](int& out, int min) {
      if (!value.is_number_integer() || value.get<long long>() < min ||
          value.get<long long>() > driver::kMaxCollectiveCount ||
          (value.is_number_unsigned() && value.get<unsigned long long>() > INT_MAX))
        throw ConfigError(label(), path, fmt::format("an integer from {} to {}; got {}", min,
                                                     driver::kMaxCollectiveCount, value.dump()));
      out = value.get<int>();
    };
    const auto choice = [&](std::string& out, const std::vector<std::string>& allowed) {
      if (!value.is_string() || std::find(allowed.begin(), allowed.end(), value.get<std::string>()) == allowed.end())
        throw ConfigError(label(), path, fmt::format("one of {}; got {}", fmt::join(allowed, ", "), value.dump()));
      out = value.get<std::string>();
    };
    if (key == "text") continue;
    if (key == "ranks") integer(h.nccl.ranks, 2);
    else if (key == "op") choice(h.nccl.op, {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send-recv"});
    else if (key == "algo") choice(h.nccl.algo, driver::forceable_algorithm_names());
    else if (key == "experts") integer(h.dispatcher.experts, 1);
    else if (key == "sms") integer(h.dispatcher.sms, 1);
    else if (key == "tokens") integer(h.dispatcher.tokens, 1);
    else if (key == "hidden") integer(h.dispatcher.hidden, 1);
    else if (key == "topk") integer(h.dispatcher.topk, 1);
    else throw ConfigError(label(), path, "text or an option of moesim calibrate (unknown key)");
  }
  return h;
}

inline void require_positive(double v, const std::string& what) {
  require(std::isfinite(v) && v > 0, fmt::format("{}: {}", what, v));
}

inline Outcome run_tool_output(const nlohmann::json& input) {
  if (!input.is_object() || !input.contains("text") || !input["text"].is_string())
    throw ConfigError(label(), "$.tool_output", "an object {\"text\": <a tool's output>, ...moesim calibrate's options}");
  const calibrate::ToolOutput out =
      calibrate::parse_tool_output(input["text"].get<std::string>(), label(), tool_hints(input));
  switch (out.tool) {
    case calibrate::Tool::nccl_tests:
      require(out.nccl.ranks >= 1 && !out.nccl.rows.empty(), "an nccl-tests table without ranks or rows");
      for (const calibrate::NcclTestsRow& r : out.nccl.rows) {
        require(std::isfinite(r.size_bytes) && r.size_bytes >= 0, "a size that is not a byte count");
        require_positive(r.time_us, "an nccl-tests time");
      }
      break;
    case calibrate::Tool::dispatcher_tests:
      require(out.dispatcher.ranks >= 1 && !out.dispatcher.runs.empty(), "a dispatcher output without ranks or runs");
      for (const calibrate::DispatcherRun& r : out.dispatcher.runs) {
        require(std::isfinite(r.time_us) && r.time_us >= 0, "a dispatcher time that is not a time");
        require_positive(r.nvl_gbytes_per_s, "a dispatcher bandwidth");
      }
      break;
    case calibrate::Tool::kernel_table:
      require(!out.kernels.rows.empty(), "a kernel table without rows");
      for (const calibrate::KernelRow& r : out.kernels.rows) require_positive(r.time_us, "a kernel time");
      break;
  }
  return Outcome::parsed;
}

}  // namespace moesim::fuzz
