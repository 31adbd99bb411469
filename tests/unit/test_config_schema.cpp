// schema_markdown() documents every key the parser accepts, from the same declarations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <vector>

#include "config_test_support.hpp"
#include "moesim/config/loader.hpp"

using namespace moesim;
using Catch::Matchers::Contains;
using moesim::test::config_error;
using moesim::test::TempTree;
using nlohmann::json;

namespace {

// The keys the parser allows in one object, read from its "unknown key" error.
std::vector<std::string> allowed_keys(const std::function<void()>& load) {
  const std::string expected = config_error(load).expected();
  const std::string marker = "allowed keys here: ";
  const auto at = expected.find(marker);
  REQUIRE(at != std::string::npos);
  std::vector<std::string> keys;
  std::string rest = expected.substr(at + marker.size());
  for (std::size_t comma; (comma = rest.find(", ")) != std::string::npos; rest = rest.substr(comma + 2))
    keys.push_back(rest.substr(0, comma));
  keys.push_back(rest);
  return keys;
}

void check_documented(const std::string& markdown, const std::string& prefix, const std::vector<std::string>& keys) {
  for (const auto& k : keys) {
    INFO("key " << prefix + k);
    CHECK_THAT(markdown, Contains("`" + prefix + k + "`"));
  }
}

// Every key of a JSON file, dotted, without the contents of "sources".
void file_keys(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    out.push_back(prefix + k);
    if (v.is_object() && k != "sources" && !v.contains("base")) file_keys(v, prefix + k + ".", out);
  }
}

}  // namespace

TEST_CASE("schema_markdown documents every key the parser accepts", "[config]") {
  const std::string md = config::schema_markdown();
  TempTree tree("schema");
  const auto dir = tree.configs();
  auto with_unknown = [&](const std::string& relative, const std::string& object_key) {
    json j = config::read_json_file(dir / relative);
    (object_key.empty() ? j : j[object_key])["zzz_not_a_key"] = 1;
    tree.write("configs/" + relative, j.dump(2));
  };

  with_unknown("hardware/gb300.json", "");
  check_documented(md, "", allowed_keys([&] { config::load_gpu("gb300", dir); }));
  with_unknown("systems/hgx-b200.json", "");
  check_documented(md, "", allowed_keys([&] { config::load_system("hgx-b200", dir); }));
  with_unknown("systems/hgx-h100.json", "fabric");
  check_documented(md, "fabric.", allowed_keys([&] { config::load_system("hgx-h100", dir); }));
  with_unknown("models/deepseek-v3.json", "");
  check_documented(md, "", allowed_keys([&] { config::load_model("deepseek-v3", dir); }));
  with_unknown("models/deepseek-v2.json", "attention");
  check_documented(md, "attention.", allowed_keys([&] { config::load_model("deepseek-v2", dir); }));
  with_unknown("models/mixtral-8x7b.json", "moe");
  check_documented(md, "moe.", allowed_keys([&] { config::load_model("mixtral-8x7b", dir); }));
  with_unknown("stacks/megatron-core-baseline.json", "");
  check_documented(md, "", allowed_keys([&] { config::load_stack("megatron-core-baseline", dir); }));

  json s = config::read_json_file(moesim::test::source_dir() / "scenarios" / "gb300-256-record.json");
  for (const std::string object : {"", "training", "layout", "published"}) {
    json patched = s;
    (object.empty() ? patched : patched[object])["zzz_not_a_key"] = 1;
    const std::string prefix = object.empty() ? "" : object + ".";
    check_documented(md, prefix, allowed_keys([&] {
      config::load_scenario_json(patched, "s.json", {moesim::test::bundled_configs()});
    }));
  }
}

TEST_CASE("schema_markdown documents every key of the bundled files, with units", "[config]") {
  const std::string md = config::schema_markdown();
  const auto dir = moesim::test::bundled_configs();
  std::vector<std::string> keys;
  for (const std::string kind : {"hardware", "systems", "models", "stacks"})
    for (const auto& name : config::list_configs(dir, kind)) file_keys(config::read_json_file(dir / kind / (name + ".json")), "", keys);
  for (const auto& entry : std::filesystem::directory_iterator(moesim::test::source_dir() / "scenarios"))
    if (entry.path().extension() == ".json") file_keys(config::read_json_file(entry.path()), "", keys);
  for (const auto& k : keys) {
    INFO("key " << k);
    CHECK_THAT(md, Contains("`" + k + "`"));
  }
  for (const std::string unit : {"TFLOP/s", "GB", "TB/s", "GB/s", "Gb/s", "us", "W"}) CHECK_THAT(md, Contains("| " + unit + " |"));
  CHECK_THAT(md, Contains("every figure needs its source") || Contains("Every figure needs its source"));
  CHECK_THAT(md, Contains("## Scenario"));
  CHECK_THAT(md, Contains("## Software stack"));
  CHECK_THAT(md, Contains("`training.precision`: a precision the system's GPU has tensor cores for"));
}

TEST_CASE("Every number key has a physical range at both ends, shown in SI too", "[config]") {
  const std::string md = config::schema_markdown();
  std::istringstream lines(md);
  std::string line;
  std::vector<std::string> number_keys;
  while (std::getline(lines, line)) {
    // | key | type | unit | required / default | allowed | meaning |
    std::vector<std::string> cells;
    for (std::size_t start = 2, bar; (bar = line.find(" | ", start)) != std::string::npos; start = bar + 3)
      cells.push_back(line.substr(start, bar - start));
    if (cells.size() < 5 || cells[1] != "number") continue;
    number_keys.push_back(cells[0]);
    INFO(line);
    const std::string& allowed = cells[4];
    CHECK((allowed.find(">= ") != std::string::npos || allowed.find("> ") != std::string::npos));
    CHECK(allowed.find("<= ") != std::string::npos);
    const std::string& unit = cells[2];
    const bool si = unit.empty() || unit == "W" || unit == "TFLOP/s" || unit == "tokens/s";
    if (!si) CHECK(allowed.find(" to ") != std::string::npos);  // the range after conversion
  }
  // The table was read: the keys of the reproducers are among the rows checked.
  for (const char* reproducer : {"`nic_gbits_per_s`", "`hbm_tbytes_per_s`", "`nvlink_latency_us`",
                                 "`nvlink_gbytes_per_s_per_direction`", "`fp8_dense_tflops`"})
    CHECK(std::find(number_keys.begin(), number_keys.end(), reproducer) != number_keys.end());
}
