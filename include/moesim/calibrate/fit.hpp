#pragma once
// The fit every tool's measurements share (nccl_fit, dispatcher_fit): a table's rows priced by
// moesim's closed forms under overrides of the layers an overlay sets ({"system": {...},
// "dispatchers": {<file>: {...}}}); per table, the candidate that moves its largest rows most
// (a bandwidth term) and the one that moves its smallest rows most (a fixed cost) are chosen from
// the data; then all tables' log time ratios are minimised together, one value per key.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace moesim::calibrate {

// A fitted value must leave no measured row off by more than this, and rest on at least
// kMinInformingSizes rows it moves, or the overlay says so (issue 41: reported, not hidden).
inline constexpr double kMaxResidualPct = 10.0;
inline constexpr int kMinInformingSizes = 3;

// Which part of a time a parameter sets: the rate its bytes move at (seen at the largest sizes)
// or a fixed cost per call (seen at the smallest).
enum class Term { bandwidth, fixed };

// A key a table can move: `key` inside `layer` ("system" with "nccl.nvlink_efficiency", or
// "dispatchers.deepep" with "dispatch.nvlink_efficiency"), its bundled value and its schema range.
struct Candidate {
  std::string layer, key;
  double bundled = 0;
  Term term = Term::bandwidth;
  double lower = 0, upper = 0;
  std::string name() const { return layer == "system" ? key : layer + "." + key; }
};

struct MeasuredRow {
  std::string what;          // "1048576" (a size) or "dispatch (FP8)"
  double size_bytes = 0;     // orders the rows (largest and smallest thirds); 0: unknown
  int line = 0;              // where it was read
  double measured_us = 0;
};

// The modelled times of a table's rows, and a note per row ("ring/Simple", "bound by NVLink").
struct Pricing {
  std::vector<double> seconds;
  std::vector<std::string> notes;
};

struct MeasuredTable {
  std::string file;
  std::string heading;          // the report's title: "all-reduce, 16 ranks, NCCL 2.28"
  std::string what_column = "size (B)", note_column = "algorithm";  // note_column "": no notes
  nlohmann::ordered_json details = nlohmann::ordered_json::object();  // the overlay's "fits" entry
  std::vector<MeasuredRow> rows;
  std::vector<Candidate> candidates;  // the keys it may move (bundled 0 = another mechanism: left out)
  // Rows of different kinds, not sizes (an FP8 and a BF16 dispatch): each row's own binding key
  // is fitted too, not only the largest and smallest rows'.
  bool rows_differ_in_kind = false;
  std::function<Pricing(const nlohmann::json& overrides)> price;  // overrides as the overlay's layers
};

struct FittedParameter {
  std::string key;                    // Candidate::name(): "nccl.nvlink_efficiency"
  std::string layer, layer_key;       // where the overlay sets it
  double bundled = 0, fitted = 0;
  int informing_sizes = 0;            // measured rows whose time it moves
  std::vector<std::string> files;     // the tables it was chosen for, each once
};

struct FitRow {
  std::string what;
  double size_bytes = 0;
  int line = 0;
  double measured_us = 0, before_us = 0, after_us = 0;
  std::string note_before, note_after;
};

struct TableFit {
  std::string file, heading, what_column, note_column;
  nlohmann::ordered_json details;
  std::vector<FitRow> rows;
  double rms_error_before_pct = 0, rms_error_after_pct = 0, max_error_after_pct = 0;
};

struct Calibration {
  std::string system;
  std::vector<FittedParameter> parameters;
  std::vector<TableFit> tables;
  std::vector<std::string> warnings;  // too few informing rows, a bound reached, residuals above kMaxResidualPct
};

// Fits the tables together; `system` names the overlay's system.
Calibration fit_tables(const std::string& system, const std::vector<MeasuredTable>& tables);

// The layers a parameter list sets, as MeasuredTable::price takes them.
nlohmann::json layered_overrides(const std::vector<Candidate>& keys, const std::vector<double>& values);

// The overlay `--calibration` reads (config/calibration_overlay.hpp): the fitted keys in their
// layers, each with its source, and the residual tables they were fitted on.
nlohmann::ordered_json overlay_json(const Calibration& c);

// Per table and row: measured, bundled and calibrated times and errors; the fitted values.
std::string calibration_text(const Calibration& c);

}  // namespace moesim::calibrate
