// libFuzzer harness: a scenario file's bytes through parsing, validation, the layout and the
// cost and platform setup (fuzz_entry.hpp).
// Build: cmake -DMOESIM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (see scripts/fuzz.sh).
// Any exception other than ConfigError / InfeasibleError escapes and is reported as a crash.
//
// Byte mutations alone rarely keep a scenario well-formed long enough to reach the layout, so a
// structure-aware mutator does three times in four: parse the input as JSON, change one value
// (a boundary integer, a huge or fractional number, a config name, a pipeline layout, another
// type), drop or add a key, and write it back. The fourth time, and for input that does not
// parse, libFuzzer's own byte mutations exercise the JSON parser.
#include <array>
#include <climits>
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
  static const std::array<const char*, 30> strings = {
      "", "gb300-nvl72", "gb200-nvl72", "hgx-h100", "hgx-b200", "deepseek-v3", "deepseek-v2", "llama-3.1-405b",
      "mixtral-8x7b", "qwen3-235b-a22b", "megatron-bridge-26.06", "megatron-core-baseline", "gb300", "h100",
      "b200", "../configs/systems/gb300-nvl72", ".hidden", "gqa", "mla", "bf16", "fp8", "mxfp8", "fp4",
      "Et|(tt|)*30L", "E(t|)*3tL", "((t*100000)*100000)", "t*99999999999", "E|L", "Ett|ttmL", "(((E"};
  return strings[rng() % strings.size()];
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

const char* known_key(std::minstd_rand& rng) {
  static const std::array<const char*, 33> keys = {
      "tp", "pp", "vpp", "ep", "etp", "cp", "dp", "gpus_per_domain", "pipeline_layout", "seq_len",
      "global_batch", "micro_batch", "mtp_layers", "gpus", "layers", "experts", "top_k", "max_gpus",
      "nvlink_domain_gpus", "hbm_gbytes", "base", "gpu", "sources", "published",
      // magnitudes that reach the cost model and the platform (issue 11)
      "nic_gbits_per_s", "nvlink_latency_us", "fp8_dense_tflops", "hbm_tbytes_per_s", "eager_launch_gap_us",
      "sm_gbytes_per_s", "oversubscription", "switch_latency_us", "hidden"};
  return keys[rng() % keys.size()];
}

void mutate(json& doc, std::minstd_rand& rng) {
  std::vector<json*> nodes;
  collect(doc, nodes, 0);
  json& node = *nodes[rng() % nodes.size()];
  const unsigned choice = rng() % 10;
  if (choice == 0) {
    node = other_type(rng);
  } else if (node.is_object() && !node.empty() && choice < 4) {
    auto it = node.begin();
    std::advance(it, static_cast<long>(rng() % node.size()));
    node.erase(it);
  } else if (node.is_object() && choice < 7) {
    node[known_key(rng)] = rng() % 2 ? interesting_number(rng, json(1)) : interesting_string(rng);
  } else if (node.is_array() && !node.empty() && choice < 5) {
    node.erase(node.begin() + static_cast<long>(rng() % node.size()));
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

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  moesim::fuzz::run_one(data, size);
  return 0;
}
