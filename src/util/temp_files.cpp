#include "moesim/util/temp_files.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace moesim::util {

namespace {

constexpr std::size_t kPathBytes = 4096;

// Fixed storage: the handler may not allocate, lock or touch std::string.
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<pid_t> owner{0};
  char path[kPathBytes] = {};
};

std::array<Slot, kMaxTempFiles> slots;
std::atomic<bool> installed{false};

extern "C" void remove_temp_files_and_die(int sig) {
  const pid_t self = ::getpid();
  for (Slot& s : slots)
    if (s.used.load(std::memory_order_acquire) && s.owner.load(std::memory_order_relaxed) == self) ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers() {
  if (installed.exchange(true)) return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    // A signal ignored on purpose (nohup, a shell's background job) stays ignored.
    if (old.sa_handler == SIG_IGN) continue;
    struct sigaction act {};
    act.sa_handler = remove_temp_files_and_die;
    sigemptyset(&act.sa_mask);
    ::sigaction(sig, &act, nullptr);
  }
}

}  // namespace

TempFileGuard::TempFileGuard(const std::filesystem::path& path) : path_(path) {
  const std::string text = path.string();
  if (text.size() >= kPathBytes) throw std::runtime_error("temporary file name too long: " + text);
  install_handlers();
  for (int i = 0; i < kMaxTempFiles; ++i) {
    Slot& s = slots[static_cast<std::size_t>(i)];
    if (s.used.load(std::memory_order_acquire)) continue;
    std::memcpy(s.path, text.c_str(), text.size() + 1);
    s.owner.store(::getpid(), std::memory_order_relaxed);
    s.used.store(true, std::memory_order_release);
    slot_ = i;
    return;
  }
  throw std::runtime_error("more than " + std::to_string(kMaxTempFiles) + " temporary files at once");
}

TempFileGuard::~TempFileGuard() {
  if (slot_ >= 0) slots[static_cast<std::size_t>(slot_)].used.store(false, std::memory_order_release);
  if (!keep_) {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
}

void TempFileGuard::release() { keep_ = true; }

}  // namespace moesim::util
