#pragma once
// The collective target: an object of `moesim collective`'s options ({"op": "all-reduce",
// "ranks": 8, "bytes": "1M,16M", ...}; keys are the long options without dashes, with
// underscores) checked and planned by driver::plan_collective_request, as the command does before
// it simulates. The plan is priced in closed form only: SimGrid is not started.
#include <climits>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_checks.hpp"
#include "moesim/driver/collective_request.hpp"

namespace moesim::fuzz {

// What CLI11 does with a command line: a value of the wrong type or an unknown option is a usage
// error (exit 2) naming the option.
inline driver::CollectiveRequest collective_request(const nlohmann::json& options) {
  using driver::CollectiveOptionError;
  if (!options.is_object())
    throw ConfigError(label(), "$.collective", "an object of moesim collective's options; got " + options.dump());
  driver::CollectiveRequest r;
  for (auto it = options.begin(); it != options.end(); ++it) {
    const std::string key = it.key();  // not a structured binding: lambdas capture it (clang 14)
    const nlohmann::json& value = it.value();
    const std::string option = "--" + key;
    const auto text = [&](std::string& out) {
      // A number given for a text option is its text, as a shell would pass it ("--bytes 1e6").
      if (value.is_number()) out = value.dump();
      else if (value.is_string()) out = value.get<std::string>();
      else throw CollectiveOptionError(option, "a value; got " + value.dump());
    };
    const auto integer = [&](int& out) {
      if (!value.is_number_integer() || value.get<long long>() < INT_MIN || value.get<long long>() > INT_MAX ||
          (value.is_number_unsigned() && value.get<unsigned long long>() > INT_MAX))
        throw CollectiveOptionError(option, "an integer; got " + value.dump());
      out = value.get<int>();
    };
    const auto flag = [&](bool& out) {
      if (!value.is_boolean()) throw CollectiveOptionError(option, "a flag (true or false); got " + value.dump());
      out = value.get<bool>();
    };
    if (key == "system") text(r.system);
    else if (key == "stack") text(r.stack);
    else if (key == "op") text(r.op);
    else if (key == "ranks" || key == "ep") integer(r.ranks);
    else if (key == "gpus_per_domain") integer(r.gpus_per_domain);
    else if (key == "bytes") text(r.sizes);
    else if (key == "tokens") integer(r.tokens);
    else if (key == "hidden") integer(r.hidden);
    else if (key == "experts") integer(r.experts);
    else if (key == "topk") integer(r.topk);
    else if (key == "groups") integer(r.groups);
    else if (key == "topk_groups") integer(r.topk_groups);
    else if (key == "algo") text(r.algo);
    else if (key == "nvls") flag(r.nvls);
    else if (key == "nccl_version") text(r.nccl_version);
    else if (key == "dispatcher") text(r.dispatcher);
    else if (key == "kernels") text(r.kernels);
    else if (key == "sms") integer(r.sms);
    else if (key == "fp8") flag(r.fp8);
    else throw CollectiveOptionError(option, "an option of moesim collective");
  }
  return r;
}

inline void require_time(double seconds, const std::string& what) {
  require(std::isfinite(seconds) && seconds >= 0, fmt::format("{}: {} s", what, seconds));
}

inline void require_tier_load(const platform::TierLoad& l, const std::string& what) {
  for (double bytes : {l.nvlink_bytes, l.nic_bytes, l.spine_bytes})
    require(std::isfinite(bytes) && bytes >= 0, fmt::format("{}: a tier moves {} bytes", what, bytes));
  require(l.spine_bytes <= l.nic_bytes * (1 + 1e-12), what + ": more spine bytes than NIC bytes");
  require(l.nvlink_steps >= 0 && l.nic_steps >= 0, what + ": negative steps");
  require_time(l.latency_s, what + ": latency");
}

inline Outcome run_collective(const nlohmann::json& options) {
  const driver::CollectiveRequest r = collective_request(options);
  const driver::PlannedCollective p = driver::plan_collective_request(r, bundled_configs());
  require(static_cast<int>(p.group.ranks.size()) == r.ranks && p.placement.size == r.ranks,
          "the group is not the ranks asked for");
  if (r.ep_op()) {
    const platform::EpExchangePlan& e = p.exchange_plan;
    require_tier_load(e.load, "EP exchange");
    require_time(e.seconds, "EP exchange");
    require(std::isfinite(e.copies_per_token) && e.copies_per_token >= 0 && std::isfinite(e.domains_per_token),
            fmt::format("EP exchange: {} copies, {} domains per token", e.copies_per_token, e.domains_per_token));
    // What the command prints: bandwidths of bytes over a time.
    if (e.seconds > 0)
      require(std::isfinite(e.logical_nvlink_bytes / e.seconds) && std::isfinite(e.logical_rdma_bytes / e.seconds),
              "EP exchange: a bandwidth that is not finite");
    return Outcome::planned;
  }
  require(p.plans.size() == p.sizes.size() && p.bytes.size() == p.sizes.size(), "a plan per size");
  for (std::size_t i = 0; i < p.plans.size(); ++i) {
    const std::string what = fmt::format("{} of {} bytes", r.op, p.sizes[i]);
    require_tier_load(p.plans[i].load, what);
    require_time(p.plans[i].seconds, what);
    if (p.plans[i].seconds > 0)
      require(std::isfinite(platform::bus_bytes_per_s(p.kind, r.ranks, p.bytes[i], p.plans[i].seconds)),
              what + ": a bus bandwidth that is not finite");
  }
  return Outcome::planned;
}

}  // namespace moesim::fuzz
