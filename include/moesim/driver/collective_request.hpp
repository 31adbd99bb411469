#pragma once
// What `moesim collective` is asked for, checked and planned without a command line: the option
// values as CLI11 parsed them, checked in the order the command checks them, the group placed on
// the system and its collective (or EP exchange) planned in closed form. The command adds the
// simulation and the output (src/cli/cmd_collective.cpp); the fuzzer (tests/fuzz) calls this
// directly, without CLI11 and without starting SimGrid.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/specs.hpp"
#include "moesim/platform/ep_dispatch.hpp"
#include "moesim/platform/nccl.hpp"
#include "moesim/platform/topology.hpp"

namespace moesim::driver {

// The command's options, with its defaults.
struct CollectiveRequest {
  std::string system = "gb300-nvl72";
  std::string stack = "megatron-bridge-26.06";
  std::string op = "ep-dispatch";
  int ranks = 32;
  int gpus_per_domain = 0;   // 0: the whole domain
  std::string sizes = "128M";  // --bytes: comma-separated, K/M/G = powers of 1024
  int tokens = 4096;
  int hidden = 7168;
  int experts = 256;
  int topk = 8;
  int groups = 1;
  int topk_groups = 0;       // 0: all groups
  std::string algo;          // NCCL_ALGO; empty: NCCL's choice
  bool nvls = true;          // NCCL_NVLS_ENABLE
  std::string nccl_version;  // empty: the version the configs' sources read
  std::string dispatcher = "deepep";
  std::string kernels;       // a file of configs/dispatchers/; empty: the stack's for the dispatcher
  int sms = 24;
  bool fp8 = true;
  // Keys of the system replaced before planning: a calibration overlay's (--calibration), or the
  // values `moesim calibrate` tries while it fits. Empty: the bundled system.
  nlohmann::json system_overrides = nlohmann::json::object();
  // Keys of the stack replaced likewise: its dispatchers as an overlay calibrates them
  // ({"deepep": {"base": "deepep", "dispatch": {...}}}), or as the fit tries them.
  nlohmann::json stack_overrides = nlohmann::json::object();

  bool ep_op() const { return op == "ep-dispatch" || op == "ep-combine"; }
};

// Integer options: at most 2^24, the scenario schema's bound on counts and sizes (CLI11's
// PositiveNumber would print a 309-digit upper bound).
inline constexpr int kMaxCollectiveCount = 1 << 24;
// A per-rank buffer beyond 1 TiB is larger than any GPU's memory; near 2^63 bytes the byte
// counts lose their integer meaning and the bandwidths became absurd (issue 42).
inline constexpr double kMaxBufferBytes = 1024.0 * 1024 * 1024 * 1024;

// An option value the command refuses: a command-line usage error (exit 2) naming the option
// ("--ranks/--ep"); what() is the expectation and the value given.
class CollectiveOptionError : public std::invalid_argument {
 public:
  CollectiveOptionError(std::string option, const std::string& expected)
      : std::invalid_argument(expected), option_(std::move(option)) {}
  const std::string& option() const { return option_; }

 private:
  std::string option_;
};

// The choices of --op, --dispatcher and --algo.
const std::vector<std::string>& collective_op_names();
const std::vector<std::string>& ep_dispatcher_names();
std::vector<std::string> forceable_algorithm_names();

// The ranges and choices the command line checks before the command runs (CLI11's Range and
// IsMember): checked again here, so that a caller without CLI11 gets the same refusals.
void check_option_values(const CollectiveRequest& r);

// --bytes: nccl-tests sizes, each a number with an optional K, M or G suffix (powers of 1024),
// from 0 to kMaxBufferBytes.
std::vector<double> parse_buffer_sizes(const std::string& list);
// --nccl-version: "2.18" or "2.18.5" as NcclParams::version (major x 100 + minor).
int parse_nccl_version(const std::string& text);

// The request planned on its system, before any simulation.
struct PlannedCollective {
  SystemSpec system;
  platform::Topology topology;
  platform::Group group;                     // ranks 0 .. n-1
  platform::GroupPlacement placement;
  // EP dispatch or combine: the busiest member's plan of the exchange.
  platform::EpExchangeRequest exchange;
  platform::EpExchangePlan exchange_plan;
  // NCCL collectives: one plan per --bytes size (the bytes it moves: an all-to-all's size / n
  // per peer, as nccl-tests count it).
  platform::CollectiveKind kind = platform::CollectiveKind::all_reduce;
  std::vector<double> sizes, bytes;
  std::vector<platform::CollectivePlan> plans;
};

// ConfigError for a system, stack or kernel file that does not load; CollectiveOptionError for
// an option the system or the other options rule out (an EP group that does not divide the
// experts, --algo on an EP exchange or an algorithm that cannot run the collective, ...).
PlannedCollective plan_collective_request(const CollectiveRequest& r, const std::filesystem::path& configs_dir);

}  // namespace moesim::driver
