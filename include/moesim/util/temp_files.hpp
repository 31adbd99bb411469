#pragma once
// Temporary files that must not outlive an interrupted command: each is registered while it
// exists, and SIGINT, SIGTERM and SIGHUP remove every registered file of this process before
// the process dies of the signal as it would have without the handler (exit status 128 + n).
//
// The handler only calls unlink() and re-raises, both async-signal-safe; a forked child
// inherits the registry but removes only files its own pid registered.
#include <filesystem>

namespace moesim::util {

class TempFileGuard {
 public:
  // Registers `path` (at most kMaxTempFiles at once; beyond that, throws std::runtime_error)
  // and installs the signal handlers on first use.
  explicit TempFileGuard(const std::filesystem::path& path);
  // Unregisters; removes the file unless release() was called (after a successful rename).
  ~TempFileGuard();
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

  void release();  // the file became the output: keep it, stop watching it

 private:
  int slot_ = -1;
  std::filesystem::path path_;
  bool keep_ = false;
};

inline constexpr int kMaxTempFiles = 16;

}  // namespace moesim::util
