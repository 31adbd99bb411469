#pragma once
// Output files are written whole or not at all: content goes to a temporary file beside the
// target, which is renamed over it only once everything is written.
#include <filesystem>
#include <string>

namespace moesim::util {

// Throws std::runtime_error naming the path and the reason (e.g. a missing directory or no
// permission) and leaves nothing behind.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace moesim::util
