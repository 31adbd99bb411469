#pragma once
// A calibration overlay: what a user measured on their own cluster (`moesim calibrate`,
// docs/calibration.md), as overrides of one bundled system, layered over every scenario that runs
// on that system. It names each key it sets and carries each one's source (the fit); nothing else
// moves. A scenario's own overrides of the same keys still win: the overlay is a base layer.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/config/specs.hpp"

namespace moesim::config {

// The version `moesim calibrate` writes and this reader accepts ("moesim_calibration").
inline constexpr int kCalibrationFormat = 1;

struct CalibrationOverlay {
  std::filesystem::path file;
  std::string system;               // the name in configs/systems/ it calibrates
  nlohmann::json system_overrides;  // {"nccl": {...}, "sources": {...}}: merged like a reference's
  std::vector<std::string> keys;    // every key it sets, "nccl.nvlink_efficiency", ...
};

// Reads and checks an overlay; ConfigError naming the file and the JSON path. The overrides are
// checked against the system they patch (unknown keys, ranges, every key with its source).
CalibrationOverlay read_calibration_overlay(const std::filesystem::path& file,
                                            const std::filesystem::path& configs_dir);

// The overlay of the system named `system` (a name in configs/systems/), or nullptr. Two
// overlays for one system are refused (ConfigError on the second).
const CalibrationOverlay* overlay_for(const std::string& system, const std::vector<CalibrationOverlay>& overlays);

// Patches the scenario's "system" with the overlay for that system, if one is given; returns the
// overlay applied or nullptr (overlay_for's choice).
const CalibrationOverlay* apply_calibration(nlohmann::json& scenario, const std::vector<CalibrationOverlay>& overlays);

// configs/systems/<name>.json with overrides merged in (the overlay's, or none).
SystemSpec load_system_with(const std::string& name, const std::filesystem::path& configs_dir,
                            const nlohmann::json& overrides);

}  // namespace moesim::config
