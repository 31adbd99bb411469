#pragma once
// From a sweep point to the scenario it simulates.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "moesim/config/calibration_overlay.hpp"
#include "moesim/config/specs.hpp"
#include "moesim/sweep/spec.hpp"

namespace moesim::sweep {

// Sets `value` at the dotted `path` of a scenario object, creating objects on the way. A
// reference given by name ("system": "gb300-nvl72") becomes {"base": "gb300-nvl72"} when the
// path goes into it, so "system.nic_gbits_per_s" overrides one field of the referenced file.
// ConfigError (naming `label`) when the path crosses a number, list or other non-object.
void set_at_path(nlohmann::json& scenario, const std::string& path, const nlohmann::json& value,
                 const std::string& label);

// The base scenario with the point's fields set and its GPU count applied. Raises ConfigError
// for an invalid result and InfeasibleError for more GPUs than the system holds.
// `configs_dir` empty: found from the base scenario file. `overlays`: --calibration's.
Scenario point_scenario(const Point& p, const std::filesystem::path& configs_dir,
                        const std::vector<config::CalibrationOverlay>& overlays = {});

}  // namespace moesim::sweep
