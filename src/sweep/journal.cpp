#include "moesim/sweep/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"

namespace moesim::sweep {

namespace fs = std::filesystem;

std::string inputs_fingerprint(const std::vector<fs::path>& files) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  const auto mix = [&h](const std::string& bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ULL;
    }
  };
  for (const fs::path& f : files) {
    mix(config::read_text_file(f));
    mix(std::string(1, '\0'));  // file boundary: "ab" + "c" differs from "a" + "bc"
  }
  return fmt::format("{:016x}", h);
}

namespace {

// Keys of `want` whose value differs in `got`, for the refusal message.
std::string differences(const Json& got, const Json& want) {
  std::vector<std::string> keys;
  for (const auto& item : want.items())
    if (!got.is_object() || !got.contains(item.key()) || got[item.key()] != item.value()) keys.push_back(item.key());
  return keys.empty() ? "its format" : fmt::format("{}", fmt::join(keys, ", "));
}

// The journal's complete lines (a line cut off by the interruption is dropped) and the byte
// length they take, to which the file is truncated before appending again.
std::vector<std::string> complete_lines(const std::string& text, std::size_t& complete_bytes) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  complete_bytes = start;
  return lines;
}

}  // namespace

RowJournal::RowJournal(const fs::path& dir, const Json& identity, bool resume, std::map<int, Json>& finished)
    : path_(dir / kJournalName) {
  std::error_code ec;
  const bool file_exists = fs::exists(path_, ec);
  std::size_t keep_bytes = 0;
  std::string text;
  if (file_exists) text = config::read_text_file(path_);
  const std::vector<std::string> lines = complete_lines(text, keep_bytes);
  // An empty file or a header cut short (what a full disk leaves) holds no finished point: it
  // is no journal, and is written again from its start. Other text without a line is refused.
  const bool cut_header = lines.empty() && (text.empty() || text.front() == '{');
  const bool exists = file_exists && !cut_header;
  if (exists && !resume)
    throw ConfigError(path_.string(), "$", "no journal of an unfinished sweep here; this one holds the finished points "
                                            "of an interrupted run: continue it with --resume, or remove the file to "
                                            "start again");
  if (exists) {
    Json header;
    try {
      if (!lines.empty()) header = Json::parse(lines.front());
    } catch (const Json::exception&) {
    }  // unreadable: refused below, as a journal of another sweep
    if (lines.empty() || header != identity)
      throw ConfigError(path_.string(), "$", "the journal of this sweep with these inputs; it differs in " +
                                                 differences(header, identity) +
                                                 " (inputs changed since it was started?): remove it to start again");
    for (std::size_t i = 1; i < lines.size(); ++i) {
      Json row;
      try {
        row = Json::parse(lines[i]);
      } catch (const Json::exception& e) {
        throw ConfigError(path_.string(), fmt::format("$ (line {})", i + 1), std::string("a row as JSON: ") + e.what());
      }
      if (!row.is_object() || !row.contains("index") || !row["index"].is_number_integer())
        throw ConfigError(path_.string(), fmt::format("$ (line {})", i + 1), "a sweep row with an index");
      const int index = row["index"].get<int>();
      if (has_status(row, kStatusError)) finished.erase(index);  // a crash may not recur: run it again
      else finished[index] = std::move(row);
    }
  }
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 || (file_exists && ::ftruncate(fd, static_cast<off_t>(keep_bytes)) != 0) ||
      ::lseek(fd, 0, SEEK_END) < 0 || !(file_ = ::fdopen(fd, "a"))) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot write " + path_.string() + ": " + why);
  }
  if (!exists) {
    const std::string line = identity.dump() + "\n";
    if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
      throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
  }
}

RowJournal::~RowJournal() {
  if (file_) std::fclose(file_);
}

void RowJournal::append(const Json& row) {
  const std::string line = row.dump() + "\n";
  if (!file_ || std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
}

void RowJournal::remove() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  std::error_code ignored;
  fs::remove(path_, ignored);
}

}  // namespace moesim::sweep
