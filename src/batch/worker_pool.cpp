#include "moesim/batch/worker_pool.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace moesim::batch {

namespace {

struct Worker {
  int job = 0;
  pid_t pid = 0;
  int fd = -1;
  std::string output;
};

// The child writes the job's string, or the exception's message and a non-zero status.
[[noreturn]] void run_worker(const std::function<std::string(int)>& job, int index, int fd) {
  // Handlers inherited from the parent (e.g. Catch2's) would report the worker's crash as the
  // parent's own failure; the worker dies plainly and the parent reports it.
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM}) std::signal(sig, SIG_DFL);
  int status = 0;
  std::string out;
  try {
    out = job(index);
  } catch (const std::exception& e) {
    out = e.what();
    status = 1;
  } catch (...) {
    out = "a non-standard exception";
    status = 1;
  }
  FILE* f = ::fdopen(fd, "wb");
  const bool written = f && std::fwrite(out.data(), 1, out.size(), f) == out.size() && std::fclose(f) == 0;
  _exit(written ? status : 3);  // no atexit handlers or destructors of the parent's objects
}

Worker spawn(const std::function<std::string(int)>& job, int index) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("workers: pipe failed: ") + std::strerror(errno));
  // Buffered output would otherwise be written twice, once by each process.
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("workers: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_worker(job, index, fds[1]);
  }
  ::close(fds[1]);
  return Worker{index, pid, fds[0], {}};
}

WorkerOutcome reap(Worker& w) {
  int status = 0;
  while (::waitpid(w.pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("workers: waitpid failed");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, std::move(w.output)};
  if (WIFSIGNALED(status)) return {false, "worker killed by signal " + std::to_string(WTERMSIG(status))};
  return {false, w.output.empty() ? "worker exit status " + std::to_string(WEXITSTATUS(status)) : std::move(w.output)};
}

}  // namespace

std::vector<WorkerOutcome> run_in_workers(int count, int jobs, const std::function<std::string(int)>& job,
                                          const std::function<void(int, const WorkerOutcome&)>& on_done) {
  std::vector<WorkerOutcome> outcomes(static_cast<std::size_t>(count));
  std::vector<Worker> active;
  int next = 0;
  char buf[1 << 16];
  while (next < count || !active.empty()) {
    while (next < count && static_cast<int>(active.size()) < std::max(jobs, 1)) active.push_back(spawn(job, next++));
    std::vector<pollfd> fds;
    for (const Worker& w : active) fds.push_back({w.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("workers: poll failed: ") + std::strerror(errno));
    }
    // Backwards, so erasing a finished worker leaves the remaining indices valid.
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      Worker& w = active[i];
      const ssize_t n = ::read(w.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        w.output.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      ::close(w.fd);
      WorkerOutcome outcome = reap(w);
      const int index = w.job;
      active.erase(active.begin() + static_cast<long>(i));
      if (on_done) on_done(index, outcome);
      outcomes[static_cast<std::size_t>(index)] = std::move(outcome);
    }
  }
  return outcomes;
}

int available_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

}  // namespace moesim::batch
