#pragma once
// Refusing, before any work, a command whose output would overwrite one of its own inputs (the
// scenario, a config it references, the sweep file, a compared result) or another of its
// outputs (`--trace T -o T`). Files are compared by identity (device and inode), so a second
// name, a symbolic link or a hard link to the same file is caught too; outputs that do not
// exist yet are compared by their resolved path. Character devices and FIFOs (/dev/null,
// /dev/stdout on a terminal) hold no data to lose and are never a clash.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace moesim::util {

struct FileRole {
  std::filesystem::path path;
  std::string role;  // in the user's words: "the scenario", "--trace", "the sweep file"
};

struct FileClash {
  FileRole output;
  FileRole other;   // the input or the other output it names
  bool other_is_output = false;
  std::string message() const;
};

// The first output that names the same file as an input or an earlier output; none when all
// are distinct.
std::optional<FileClash> find_clash(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs);

}  // namespace moesim::util
