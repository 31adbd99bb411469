#include <fstream>
#include <sstream>

#include "moesim/config/loader.hpp"
#include "moesim/driver/run.hpp"
#include "moesim/sweep/compare.hpp"
#include "moesim/sweep/point.hpp"

namespace moesim::sweep {

namespace fs = std::filesystem;

SweepResult comparison_input(const fs::path& path, const SweepOptions& options) {
  if (fs::is_directory(path)) return read_result(path);
  const nlohmann::json j = config::read_json_file(path);
  if (j.contains("format")) return read_result(path);
  if (j.contains("axes") || j.contains("points")) return run_sweep(load_sweep(path), options);

  // A scenario: errors propagate (exit codes 2 and 3), as `moesim run` would report them.
  Point p;
  p.base = ScenarioFile{path, path.string()};
  const Scenario s = point_scenario(p, options.configs_dir);
  driver::RunOptions ro;
  ro.configs_dir = options.configs_dir.string();
  ro.engine.fidelity = options.fidelity;
  SweepResult r;
  r.name = s.name;
  r.point_count = 1;
  r.rows.push_back(result_row(p, driver::run_scenario(s, ro)));
  return r;
}

}  // namespace moesim::sweep
