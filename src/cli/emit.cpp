#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "moesim/util/atomic_file.hpp"

namespace moesim::cli {

void emit(const std::string& text, const std::string& output) {
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  try {
    util::write_file_atomically(output, text);
  } catch (const std::exception& e) {
    throw OutputError(e.what());
  }
}

}  // namespace moesim::cli
