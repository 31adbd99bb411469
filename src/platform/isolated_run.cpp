#include "moesim/platform/isolated_run.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>

namespace moesim::platform {
namespace {

constexpr std::size_t kStderrTailBytes = 4000;  // enough for an xbt_die message and a backtrace head

void write_all(int fd, const std::string& s) {
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void run_child(const std::function<std::string()>& body, int result_fd, int stderr_fd) {
  // Handlers inherited from the parent (e.g. Catch2's) would report the child's crash as the
  // parent's own failure; the child dies plainly and the parent reports it.
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM}) std::signal(sig, SIG_DFL);
  ::dup2(stderr_fd, STDERR_FILENO);  // SimGrid writes its diagnostics to fd 2
  ::close(stderr_fd);
  int status = 0;
  try {
    write_all(result_fd, body());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_isolated: body threw: %s\n", e.what());
    status = 1;
  } catch (...) {
    std::fprintf(stderr, "run_isolated: body threw a non-standard exception\n");
    status = 1;
  }
  std::fflush(nullptr);
  ::close(result_fd);
  _exit(status);  // skip atexit handlers and static destructors shared with the parent
}

// Reads both pipes until both reach EOF; poll() avoids a deadlock when the child fills one.
void drain(int result_fd, int stderr_fd, std::string& result, std::string& err) {
  pollfd fds[2] = {{result_fd, POLLIN, 0}, {stderr_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result, &err};
  int open_fds = 2;
  char buf[1 << 16];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("run_isolated: poll failed: ") + std::strerror(errno));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_fds;
      } else {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      }
    }
  }
}

}  // namespace

std::string run_isolated(const std::function<std::string()>& body) {
  int result_pipe[2];
  int stderr_pipe[2];
  if (::pipe(result_pipe) != 0) throw std::runtime_error("run_isolated: pipe failed");
  if (::pipe(stderr_pipe) != 0) {
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    throw std::runtime_error("run_isolated: pipe failed");
  }
  // Buffered output would otherwise be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {result_pipe[0], result_pipe[1], stderr_pipe[0], stderr_pipe[1]}) ::close(fd);
    throw std::runtime_error(std::string("run_isolated: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(result_pipe[0]);
    ::close(stderr_pipe[0]);
    run_child(body, result_pipe[1], stderr_pipe[1]);
  }
  ::close(result_pipe[1]);
  ::close(stderr_pipe[1]);

  std::string result;
  std::string err;
  drain(result_pipe[0], stderr_pipe[0], result, err);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("run_isolated: waitpid failed");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return result;

  std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exit status " + std::to_string(WEXITSTATUS(status));
  if (err.size() > kStderrTailBytes) err = "..." + err.substr(err.size() - kStderrTailBytes);
  throw std::runtime_error("run_isolated: child failed (" + why + ")" + (err.empty() ? "" : ":\n" + err));
}

}  // namespace moesim::platform
