// libFuzzer harness over moesim's inputs: a scenario, a search file, a sweep file or the options
// of `moesim collective`, each through the checks and set-up the CLI does before it simulates
// (fuzz_entry.hpp). Build: cmake -DMOESIM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (see
// scripts/fuzz.sh). Any exception other than a rejection the CLI documents escapes and is
// reported as a crash. At exit it prints how many inputs of each target ended how.
//
// Byte mutations alone rarely keep a document well-formed long enough to reach the layout or the
// expansion, so a structure-aware mutator does three times in four: parse the input as JSON,
// change one value (a boundary integer, a huge or fractional number, a config or option name, a
// pipeline layout, a dotted scenario path, another type), drop or add a key or a list element,
// and write it back. The fourth time, and for input that does not parse, libFuzzer's own byte
// mutations exercise the JSON parser.
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fuzz_entry.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using nlohmann::json;

void collect(json& node, std::vector<json*>& out, int depth) {
  out.push_back(&node);
  if (depth > 24) return;
  if (node.is_object())
    for (auto& [key, value] : node.items()) collect(value, out, depth + 1);
  else if (node.is_array())
    for (auto& value : node) collect(value, out, depth + 1);
}

json interesting_number(std::minstd_rand& rng, const json& old) {
  static const std::array<long long, 22> ints = {0, -1, 1, 2, 3, 4, 7, 8, 16, 61, 64, 72, 256, 10368, 65536,
                                                 INT_MAX, static_cast<long long>(INT_MAX) + 1, INT_MIN,
                                                 static_cast<long long>(INT_MIN) - 1, 1000000000000LL,
                                                 LLONG_MAX, 46341};
  static const std::array<double, 8> reals = {0.5, -0.5, 1e-300, 1e12, 1e308, 1.5, 0.999, 1e-9};
  const long long x = old.is_number_integer() ? old.get<long long>() : 0;
  switch (rng() % 6) {
    case 0: return reals[rng() % reals.size()];
    case 1: return x / 2;
    case 2: return x < LLONG_MAX / 2 && x > LLONG_MIN / 2 ? x * 2 : 0;
    case 3: return x < LLONG_MAX ? x + 1 : 0;
    case 4: return x > LLONG_MIN ? x - 1 : 0;
    default: return ints[rng() % ints.size()];
  }
}

json interesting_string(std::minstd_rand& rng) {
  static const char* const strings[] = {
      "", "gb300-nvl72", "gb200-nvl72", "hgx-h100", "hgx-b200", "deepseek-v3", "deepseek-v2", "llama-3.1-405b",
      "mixtral-8x7b", "qwen3-235b-a22b", "megatron-bridge-26.06", "megatron-core-baseline", "gb300", "h100",
      "b200", "../configs/systems/gb300-nvl72", ".hidden", "gqa", "mla", "bf16", "fp8", "mxfp8", "fp4",
      "Et|(tt|)*30L", "E(t|)*3tL", "((t*100000)*100000)", "t*99999999999", "E|L", "Ett|ttmL", "(((E",
      // search and sweep files: base scenarios, dotted paths, schedules, recompute modules, modes
      "../gb300-256-record.json", "../published/gb200-bf16-2511.json", "../gb200-256.json", "missing.json",
      "layout.tp", "layout.pp", "layout.gpus_per_domain", "training.global_batch", "model.layers", "system",
      "system.nic_gbits_per_s", "layout.tpp", "layout..pp", "1f1b", "zb-h1", "dualpipev", "moe_act", "mla_up_proj",
      "weak", "strong",
      // collective options
      "all-reduce", "all-to-all", "ep-dispatch", "ep-combine", "send-recv", "ring", "nvls", "deepep", "hybridep",
      "128M,1G"};
  return strings[rng() % std::size(strings)];
}

json other_type(std::minstd_rand& rng) {
  switch (rng() % 6) {
    case 0: return nullptr;
    case 1: return json::array();
    case 2: return json::object();
    case 3: return true;
    case 4: return "1";
    default: return json{{"base", interesting_string(rng)}};
  }
}

template <std::size_t N>
const char* pick(std::minstd_rand& rng, const char* const (&names)[N]) {
  return names[rng() % N];
}

const char* scenario_key(std::minstd_rand& rng) {
  static const char* const keys[] = {
      "tp", "pp", "vpp", "ep", "etp", "cp", "dp", "gpus_per_domain", "pipeline_layout", "seq_len",
      "global_batch", "micro_batch", "mtp_layers", "gpus", "layers", "experts", "top_k", "max_gpus",
      "nvlink_domain_gpus", "hbm_gbytes", "base", "gpu", "sources", "published",
      // magnitudes that reach the cost model and the platform (issue 11)
      "nic_gbits_per_s", "nvlink_latency_us", "fp8_dense_tflops", "hbm_tbytes_per_s", "eager_launch_gap_us",
      "sm_gbytes_per_s", "oversubscription", "switch_latency_us", "hidden"};
  return pick(rng, keys);
}

// Keys of search and sweep files and, for their "set" objects, dotted scenario paths.
const char* batch_key(std::minstd_rand& rng) {
  static const char* const keys[] = {
      "name", "base", "set", "space", "simulate", "gpus", "axes", "points", "path", "values", "mode", "label",
      "layout", "training", "recipe", "tp", "pp", "vpp", "ep", "etp", "cp", "micro_batch", "schedule",
      "pipeline_layout", "recompute", "ep_overlap", "delay_wgrad", "dispatcher", "cuda_graphs",
      "layout.tp", "layout.pp", "layout.ep", "layout.gpus_per_domain", "training.global_batch", "gpus", "system",
      "system.max_gpus", "model.layers", "training.micro_batch"};
  return pick(rng, keys);
}

const char* collective_key(std::minstd_rand& rng) {
  static const char* const keys[] = {"system", "stack", "op", "ranks", "ep", "gpus_per_domain", "bytes", "algo",
                                     "nvls", "nccl_version", "dispatcher", "kernels", "sms", "fp8", "tokens",
                                     "hidden", "experts", "topk", "groups", "topk_groups"};
  return pick(rng, keys);
}

const char* tool_output_key(std::minstd_rand& rng) {
  static const char* const keys[] = {"text", "ranks", "op", "algo", "experts", "sms", "tokens", "hidden", "topk"};
  return pick(rng, keys);
}

// A key the input's target reads, most of the time; any other now and then (a typo's path).
const char* known_key(std::minstd_rand& rng, moesim::fuzz::Target target) {
  using moesim::fuzz::Target;
  if (rng() % 8 == 0) return rng() % 2 ? scenario_key(rng) : collective_key(rng);
  switch (target) {
    case Target::search:
    case Target::sweep: return rng() % 3 ? batch_key(rng) : scenario_key(rng);
    case Target::collective: return collective_key(rng);
    case Target::tool_output: return tool_output_key(rng);
    default: return scenario_key(rng);
  }
}

void mutate(json& doc, std::minstd_rand& rng) {
  using moesim::fuzz::Target;
  const Target target = moesim::fuzz::target_of(doc);
  // A search, sweep or collective input keeps its envelope: mutations go into the document it
  // carries (an envelope broken into a scenario only repeats the scenario target's work).
  json& body = target == Target::scenario ? doc : doc[moesim::fuzz::to_string(target)];
  std::vector<json*> nodes;
  collect(body, nodes, 0);
  json& node = *nodes[rng() % nodes.size()];
  const unsigned choice = rng() % 10;
  if (choice == 0) {
    node = other_type(rng);
  } else if (node.is_object() && !node.empty() && choice < 4) {
    auto it = node.begin();
    std::advance(it, static_cast<long>(rng() % node.size()));
    node.erase(it);
  } else if (node.is_object() && choice < 7) {
    node[known_key(rng, target)] = rng() % 2 ? interesting_number(rng, json(1)) : interesting_string(rng);
  } else if (node.is_array() && !node.empty() && choice < 5) {
    node.erase(node.begin() + static_cast<long>(rng() % node.size()));
  } else if (node.is_array() && choice < 8) {
    // Another value for an axis: a copy of one (made distinct by the next mutation) or a new one.
    node.push_back(!node.empty() && rng() % 2 ? node[rng() % node.size()] : interesting_number(rng, json(1)));
  } else if (node.is_number()) {
    node = interesting_number(rng, node);
  } else if (node.is_string()) {
    node = interesting_string(rng);
  } else if (node.is_boolean()) {
    node = !node.get<bool>();
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  json doc = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return LLVMFuzzerMutate(data, size, max_size);
  const unsigned rounds = 1 + rng() % 3;
  for (unsigned i = 0; i < rounds; ++i) mutate(doc, rng);
  const std::string text = doc.dump();
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

namespace {

// Inputs of each target by how they ended, printed at exit: how many reached the layout, the
// expansion or the plan rather than a rejection.
unsigned long long outcome_counts[std::size(moesim::fuzz::kTargets)][std::size(moesim::fuzz::kOutcomes)] = {};

void print_outcomes() {
  using namespace moesim::fuzz;
  for (std::size_t t = 0; t < std::size(kTargets); ++t) {
    unsigned long long total = 0, accepted = 0;
    std::string parts;
    for (std::size_t o = 0; o < std::size(kOutcomes); ++o) {
      const unsigned long long n = outcome_counts[t][o];
      total += n;
      if (Result{kTargets[t], kOutcomes[o]}.accepted()) accepted += n;
      if (n > 0) parts += std::string(" ") + to_string(kOutcomes[o]) + "=" + std::to_string(n);
    }
    std::fprintf(stderr, "moesim-fuzz: target %-10s %llu inputs, %llu accepted:%s\n", to_string(kTargets[t]), total,
                 accepted, parts.c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(print_outcomes);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const moesim::fuzz::Result r = moesim::fuzz::run_one(data, size);
  ++outcome_counts[static_cast<std::size_t>(r.target)][static_cast<std::size_t>(r.outcome)];
  return 0;
}
