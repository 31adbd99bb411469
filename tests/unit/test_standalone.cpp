// The repository stands alone: no tracked file refers to a path outside it (a clone has no
// sibling folders), and every figure's source names a key that docs/sources.md defines.
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config_test_support.hpp"

using moesim::test::source_dir;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The files git tracks; without git (an unpacked archive), every file but build outputs.
std::vector<fs::path> tracked_files() {
  std::vector<fs::path> files;
  const std::string command = "git -C '" + source_dir().string() + "' ls-files -z 2>/dev/null";
  if (FILE* p = ::popen(command.c_str(), "r")) {
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (::pclose(p) == 0)
      for (std::size_t start = 0, end; (end = out.find('\0', start)) != std::string::npos; start = end + 1)
        files.push_back(source_dir() / out.substr(start, end - start));
  }
  if (!files.empty()) return files;
  for (auto it = fs::recursive_directory_iterator(source_dir()); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name == ".git")) it.disable_recursion_pending();
    else if (it->is_regular_file()) files.push_back(it->path());
  }
  return files;
}

// Keys defined in docs/sources.md: every bold name, "- **KEY**:" or "**KEY**" in a list.
std::set<std::string> defined_keys() {
  const std::string text = read(source_dir() / "docs" / "sources.md");
  std::set<std::string> keys;
  const std::regex bold(R"(\*\*([A-Za-z0-9][A-Za-z0-9.\-]*)\*\*)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), bold); it != std::sregex_iterator(); ++it)
    keys.insert((*it)[1]);
  return keys;
}

void collect_sources(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "sources" && v.is_object()) {
        for (const auto& [name, text] : v.items())
          if (text.is_string()) out.push_back(text.get<std::string>());
      } else {
        collect_sources(v, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) collect_sources(v, out);
  }
}

}  // namespace

TEST_CASE("No tracked file refers to a path outside the repository", "[docs][standalone]") {
  // Spelt in pieces so that this file does not match itself.
  const std::vector<std::string> outside = {std::string("../") + "shared", std::string("/work") + "/",
                                            std::string("DESIGN") + ".md"};
  const std::vector<fs::path> files = tracked_files();
  REQUIRE(files.size() > 50);
  for (const fs::path& f : files) {
    if (f.extension() == ".png" || !fs::is_regular_file(f)) continue;
    const std::string text = read(f);
    for (const std::string& needle : outside) {
      INFO(fs::relative(f, source_dir()).string() << " mentions " << needle);
      CHECK(text.find(needle) == std::string::npos);
    }
  }
}

TEST_CASE("Every figure's source starts with a key of docs/sources.md, measured: or assumption:", "[docs][standalone]") {
  const std::set<std::string> keys = defined_keys();
  REQUIRE(keys.count("MB-A") == 1);
  REQUIRE(keys.count("DGXC") == 1);
  const std::regex leading(R"(^([A-Za-z0-9][A-Za-z0-9.\-]*):)");
  int checked = 0;
  for (const char* folder : {"configs", "scenarios"}) {
    for (const auto& e : fs::recursive_directory_iterator(source_dir() / folder)) {
      if (e.path().extension() != ".json") continue;
      std::vector<std::string> sources;
      collect_sources(nlohmann::json::parse(read(e.path())), sources);
      for (const std::string& text : sources) {
        INFO(fs::relative(e.path(), source_dir()).string() << ": \"" << text.substr(0, 80) << "\"");
        std::smatch m;
        const bool keyed = std::regex_search(text, m, leading);
        CHECK(keyed);
        if (keyed) CHECK((m[1] == "assumption" || m[1] == "measured" || keys.count(m[1]) == 1));
        ++checked;
      }
    }
  }
  CHECK(checked > 100);

  // The published runs name their source by key too.
  for (const auto& e : fs::directory_iterator(source_dir() / "scenarios" / "published")) {
    const auto j = nlohmann::json::parse(read(e.path()));
    INFO(e.path().filename().string());
    CHECK(keys.count(j.at("published").at("source").get<std::string>()) == 1);
  }
}
