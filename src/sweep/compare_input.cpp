#include "moesim/config/loader.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/sweep/compare.hpp"
#include "moesim/sweep/point.hpp"

namespace moesim::sweep {

namespace fs = std::filesystem;

namespace {

enum class Kind { result, sweep, scenario };

Kind kind_of(const fs::path& path) {
  if (fs::is_directory(path)) return Kind::result;
  const nlohmann::json j = config::read_json_file(path);
  if (j.contains("format")) return Kind::result;
  if (j.contains("axes") || j.contains("points")) return Kind::sweep;
  return Kind::scenario;
}

Point scenario_point(const fs::path& path) {
  Point p;
  p.base = ScenarioFile{path, path.string()};
  return p;
}

driver::RunOptions run_options(const SweepOptions& options) {
  driver::RunOptions ro;
  ro.configs_dir = options.configs_dir.string();
  ro.engine.fidelity = options.fidelity;
  return ro;
}

}  // namespace

std::vector<fs::path> comparison_input_files(const fs::path& path, const SweepOptions& options) {
  switch (kind_of(path)) {
    case Kind::result: return {fs::is_directory(path) ? path / "sweep.json" : path};
    case Kind::sweep: return input_files(load_sweep(path), options);
    case Kind::scenario: break;
  }
  config::InputRecorder recorder;
  const Scenario s = point_scenario(scenario_point(path), options.configs_dir);
  recorder.add(driver::calibration_path(s, run_options(options)));
  return recorder.files();
}

SweepResult comparison_input(const fs::path& path, const SweepOptions& options) {
  switch (kind_of(path)) {
    case Kind::result: return read_result(path);
    case Kind::sweep: return run_sweep(load_sweep(path), options);
    case Kind::scenario: break;
  }
  // A scenario: errors propagate (exit codes 2 and 3), as `moesim run` would report them.
  const Point p = scenario_point(path);
  const Scenario s = point_scenario(p, options.configs_dir);
  SweepResult r;
  r.name = s.name;
  r.point_count = 1;
  r.rows.push_back(result_row(p, driver::run_scenario(s, run_options(options))));
  return r;
}

}  // namespace moesim::sweep
