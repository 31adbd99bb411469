// Running gnuplot on the written script. It is optional: without it a sweep or a search still
// succeeds with its CSV, JSON and Markdown, and says how to get the plots.
#include "moesim/batch/gnuplot.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "moesim/platform/isolated_run.hpp"
#include "moesim/util/atomic_file.hpp"

namespace moesim::batch {

namespace fs = std::filesystem;

namespace {

bool on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    if (::access(((dir.empty() ? "." : dir) + "/" + program).c_str(), X_OK) == 0) return true;
    start = colon + 1;
  }
  return false;
}

}  // namespace

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string png_and_svg(const std::string& stem, const std::string& plot_commands) {
  return fmt::format("set terminal pngcairo size 960,600 font 'sans,10' noenhanced\nset output '{0}.png'\n{1}"
                     "set terminal svg size 960,600 font 'sans,10' noenhanced\nset output '{0}.svg'\nreplot\n"
                     "unset output\n\n",
                     stem, plot_commands);
}

PlotOutcome draw_with_gnuplot(const fs::path& dir, const std::vector<PlotFile>& files, const std::string& script,
                              const std::vector<std::string>& images, const std::string& nothing_to_plot,
                              const std::string& gnuplot) {
  if (files.empty()) return {false, nothing_to_plot};
  for (const PlotFile& f : files) util::write_file_atomically(dir / f.name, f.content);
  if (!on_path(gnuplot))
    return {false, fmt::format("no plots drawn: {} was not found on PATH (Debian: apt-get install gnuplot-nox, or "
                               "scripts/setup.sh); the script is in {}: run `gnuplot {}` there",
                               gnuplot, dir.string(), script)};
  // run_isolated gives the fork, the wait and gnuplot's stderr in the error when it fails.
  platform::run_isolated([&]() -> std::string {
    if (::chdir(dir.c_str()) != 0) throw std::runtime_error("cannot enter " + dir.string() + ": " + std::strerror(errno));
    ::execlp(gnuplot.c_str(), gnuplot.c_str(), script.c_str(), static_cast<char*>(nullptr));
    throw std::runtime_error("cannot run " + gnuplot + ": " + std::strerror(errno));
  });
  std::vector<std::string> drawn;
  for (const std::string& image : images)
    if (fs::exists(dir / image)) drawn.push_back(image);
  return {true, fmt::format("plots in {}: {}", dir.string(), fmt::join(drawn, ", "))};
}

}  // namespace moesim::batch
