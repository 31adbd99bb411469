#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "moesim/util/atomic_file.hpp"

namespace moesim::cli {

void emit(const std::string& text, const std::string& output) {
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
