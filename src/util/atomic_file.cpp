#include "moesim/util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "moesim/util/temp_files.hpp"

namespace moesim::util {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& why) {
  throw std::runtime_error("cannot write " + path.string() + ": " + why);
}

// Follows symbolic links to the file that is finally written (which may not exist yet).
// Relative link targets are relative to the link's folder.
fs::path link_target(const fs::path& path) {
  fs::path at = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(at, ec))) return at;
    const fs::path next = fs::read_symlink(at, ec);
    if (ec) fail(path, "cannot read the symbolic link " + at.string() + ": " + ec.message());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  fail(path, "too many levels of symbolic links");
}

std::string kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

int descriptor_path(const fs::path& path) {
  const std::string p = path.lexically_normal().string();
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string pre(prefix);
    if (p.size() <= pre.size() || p.compare(0, pre.size(), pre) != 0) continue;
    const std::string digits = p.substr(pre.size());
    if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::atoi(digits.c_str());
  }
  return -1;
}

bool write_all(int fd, const std::string& content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

void write_file_atomically(const fs::path& path, const std::string& content) {
  if (const int fd = descriptor_path(path); fd >= 0) {
    std::fflush(nullptr);  // what stdio buffered for the same descriptor goes first
    if (!write_all(fd, content)) fail(path, std::strerror(errno));
    return;
  }
  const fs::path target = link_target(path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, std::strerror(errno));
    const bool ok = write_all(fd, content);
    const int saved = errno;
    ::close(fd);
    if (!ok) fail(path, std::strerror(saved));
    return;
  }
  if (exists && !S_ISREG(st.st_mode))
    fail(path, kind_name(st.st_mode) + (target == path ? "" : " (" + target.string() + ")") +
                   "; give a regular file, a character device or a FIFO");

  // Beside the target, so that the rename stays within one file system.
  std::string name = target.string() + ".tmp." + std::to_string(static_cast<long>(::getpid())) + ".XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, std::strerror(errno));
  const fs::path tmp = name;
  std::optional<TempFileGuard> guard;
  try {
    guard.emplace(tmp);
  } catch (const std::exception& e) {
    ::close(fd);
    ::unlink(name.c_str());
    fail(path, e.what());
  }
  const mode_t mode = exists ? (st.st_mode & 07777) : new_file_mode();
  bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, content) && ::fsync(fd) == 0;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok) fail(path, std::strerror(saved ? saved : errno));
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) fail(path, ec.message());
  guard->release();
}

}  // namespace moesim::util
