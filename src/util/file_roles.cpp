#include "moesim/util/file_roles.hpp"

#include <sys/stat.h>

#include "moesim/util/atomic_file.hpp"

namespace moesim::util {

namespace fs = std::filesystem;

namespace {

struct Identity {
  bool exists = false;
  bool stream = false;   // character device or FIFO: nothing to overwrite
  dev_t dev = 0;
  ino_t ino = 0;
  fs::path resolved;     // for files that do not exist yet
};

Identity identify(const fs::path& p) {
  Identity id;
  if (descriptor_path(p) >= 0) {
    id.stream = true;  // written to an open descriptor, never replaced
    return id;
  }
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    id.exists = true;
    id.stream = S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  std::error_code ec;
  id.resolved = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (ec) id.resolved = fs::absolute(p).lexically_normal();
  return id;
}

bool same(const Identity& a, const Identity& b) {
  if (a.stream || b.stream) return false;
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return !a.exists && !b.exists && a.resolved == b.resolved;
}

}  // namespace

std::string FileClash::message() const {
  const std::string kind = other_is_output ? "another output of this command" : "an input of this command";
  return output.role + " (" + output.path.string() + ") is the same file as " + other.role + " (" +
         other.path.string() + "), " + kind + "; writing it would " +
         (other_is_output ? "lose one of the two outputs" : "overwrite the input") + ": choose another path";
}

std::optional<FileClash> find_clash(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs) {
  std::vector<Identity> input_ids, output_ids;
  for (const FileRole& in : inputs) input_ids.push_back(identify(in.path));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Identity out = identify(outputs[i].path);
    for (std::size_t j = 0; j < inputs.size(); ++j)
      if (input_ids[j].exists && same(out, input_ids[j])) return FileClash{outputs[i], inputs[j], false};
    for (std::size_t j = 0; j < i; ++j)
      if (same(out, output_ids[j])) return FileClash{outputs[i], outputs[j], true};
    output_ids.push_back(out);
  }
  return std::nullopt;
}

}  // namespace moesim::util
