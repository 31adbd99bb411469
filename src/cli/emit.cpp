#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "moesim/util/atomic_file.hpp"
#include "moesim/util/terminal_text.hpp"

namespace moesim::cli {

void emit(const std::string& raw, const std::string& output) {
  // Names and reasons come from user files: their control characters are shown, not obeyed
  // (JSON too: its escape is a JSON escape, and nlohmann leaves DEL and C1 raw).
  const std::string escaped = util::is_terminal_safe(raw) ? std::string() : util::terminal_safe(raw);
  const std::string& text = escaped.empty() ? raw : escaped;
  if (output.empty() || output == "-") {
    // A full disk or a closed pipe must not pass for success (exit 4, not 0).
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw OutputError(std::string("cannot write to standard output: ") + std::strerror(errno));
    return;
  }
  try {
    util::write_file_atomically(output, text);
  } catch (const std::exception& e) {
    throw OutputError(e.what());
  }
}

}  // namespace moesim::cli
