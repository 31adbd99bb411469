// Strict JSON reading: malformed text and duplicate keys are ConfigErrors that say where.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "moesim/config/loader.hpp"
#include "parsing_reader.hpp"

namespace moesim::config {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct DuplicateKey {
  std::string path;
};

// Where the parser is, so that a duplicate key can be reported with its JSON path.
struct Frame {
  bool array = false;
  std::set<std::string> keys;  // objects: keys seen so far
  std::string key;             // objects: the key whose value is being parsed
  std::size_t index = 0;       // arrays: elements completed so far
};

std::string path_of(const std::vector<Frame>& frames) {
  std::string path = "$";
  for (std::size_t i = 0; i + 1 < frames.size(); ++i)
    path = frames[i].array ? path + "[" + std::to_string(frames[i].index) + "]" : child_path(path, frames[i].key);
  return path;
}

// "line 3, column 5 (byte 27)" from nlohmann's 1-based count of bytes read.
std::string location(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min(byte > 0 ? byte - 1 : 0, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < end; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return "line " + std::to_string(line) + ", column " + std::to_string(end - line_start + 1) +
         " (byte " + std::to_string(byte) + ")";
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string detail(const json::parse_error& e) {
  const std::string what = e.what();
  const auto column = what.find("column ");
  const auto colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

std::size_t max_json_nodes() {
  if (const char* cap = std::getenv("MOESIM_MAX_JSON_NODES"); cap && *cap) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(cap, &end, 10);
    if (end && *end == '\0' && v > 0) return static_cast<std::size_t>(v);
  }
  return kMaxJsonNodes;
}

void JsonNodeBudget::count(nlohmann::detail::parse_event_t event) {
  using E = nlohmann::detail::parse_event_t;
  if (event != E::object_start && event != E::array_start && event != E::value) return;  // keys and ends: no new value
  if (++nodes_ > max_)
    throw ConfigError(label_, "$", fmt::format("a JSON document of at most {} values (objects, arrays, strings, "
                                               "numbers, booleans and nulls; moesim reads no larger input, "
                                               "$MOESIM_MAX_JSON_NODES sets another cap); this one holds more",
                                               max_));
}

json parse_json_text(const std::string& text, const std::string& label) {
  std::vector<Frame> frames;
  JsonNodeBudget budget(label);
  const json::parser_callback_t track = [&frames, &budget](int, json::parse_event_t event, json& parsed) {
    budget.count(event);
    switch (event) {
      case json::parse_event_t::object_start: frames.push_back(Frame{}); break;
      case json::parse_event_t::array_start: frames.push_back(Frame{true, {}, {}, 0}); break;
      case json::parse_event_t::key: {
        Frame& top = frames.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second) throw DuplicateKey{child_path(path_of(frames), top.key)};
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        if (!frames.empty() && frames.back().array) ++frames.back().index;
        break;
      case json::parse_event_t::value:
        if (!frames.empty() && frames.back().array) ++frames.back().index;
        break;
    }
    return true;
  };
  try {
    return json::parse(text, track, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    throw ConfigError(label, "$", "well-formed JSON; parse error at " + location(text, e.byte) + ": " + detail(e));
  } catch (const json::out_of_range& e) {
    // A number beyond a double's range (1e400): nlohmann reports it as out_of_range, not as a
    // parse error; the frames still say whose value it was.
    const std::string what = e.what();
    const auto bracket = what.find("] ");
    std::string path = path_of(frames);
    if (!frames.empty()) path = frames.back().array ? path + "[" + std::to_string(frames.back().index) + "]"
                                                    : child_path(path, frames.back().key);
    throw ConfigError(label, path, "a number within the range of a double (about 1.8e308); " +
                                       (bracket == std::string::npos ? what : what.substr(bracket + 2)));
  } catch (const DuplicateKey& d) {
    throw ConfigError(label, d.path, "each key once in an object; this key appears again (duplicate key)");
  }
}

namespace {
InputRecorder* current_recorder = nullptr;
}  // namespace

InputRecorder::InputRecorder() : outer_(current_recorder) { current_recorder = this; }
InputRecorder::~InputRecorder() { current_recorder = outer_; }
void InputRecorder::add(const std::filesystem::path& file) {
  for (InputRecorder* r = this; r; r = r->outer_) r->files_.push_back(file);
}

std::string read_text_file(const std::filesystem::path& file, std::size_t max_bytes) {
  if (current_recorder) current_recorder->add(file);
  const std::string limit = fmt::format("at most {} MiB (moesim reads no larger input)", max_bytes >> 20);
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    const auto size = fs::file_size(file, ec);
    if (!ec && size > max_bytes)
      throw ConfigError(file.string(), "$", fmt::format("a file of {}; this one has {} bytes", limit, size));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file.string(), "$", "an existing, readable JSON file");
  std::string text;
  try {  // a directory opens, then fails on the first read (libstdc++ throws from underflow)
    std::vector<char> buf(1 << 16);
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
      text.append(buf.data(), static_cast<std::size_t>(in.gcount()));
      if (text.size() > max_bytes)  // a device or pipe (/dev/zero) has no size to check first
        throw ConfigError(file.string(), "$", fmt::format("an input of {}; more was read", limit));
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError(file.string(), "$", std::string("an existing, readable JSON file; reading failed: ") + e.what());
  }
  if (in.bad()) throw ConfigError(file.string(), "$", "an existing, readable JSON file; reading failed");
  return text;
}

json read_json_file(const std::filesystem::path& file) { return parse_json_text(read_text_file(file), file.string()); }

}  // namespace moesim::config
