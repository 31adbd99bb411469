// sweep.json: writing and reading back the results of a sweep or a shard.
#include "moesim/sweep/result.hpp"

#include <fmt/format.h>

#include <map>

#include "moesim/config/error.hpp"
#include "moesim/batch/result_file.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/util/statistics.hpp"

namespace moesim::sweep {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "moesim-sweep-result/1";

std::vector<std::string> row_keys(const Json& row) {
  std::vector<std::string> keys;
  for (const auto& item : row.items()) keys.push_back(item.key());
  return keys;
}

}  // namespace

SweepResult empty_result(const SweepSpec& spec, int point_count, const std::optional<Shard>& shard) {
  SweepResult r;
  r.name = spec.name;
  r.description = spec.description;
  r.point_count = point_count;
  r.axis_columns = spec.axis_columns();
  if (const Axis* a = spec.gpu_axis()) {
    r.gpu_column = a->name;
    r.gpu_scaling = to_string(a->scaling);
  }
  r.shard = shard;
  return r;
}

Json series_values(const SweepResult& r, const Json& row) {
  Json values = Json::array();
  for (const std::string& c : r.axis_columns)
    if (c != r.gpu_column) values.push_back(row[c]);
  return values;
}

void fill_scaling_efficiency(SweepResult& r) {
  const bool meaningful = r.complete() && !r.gpu_column.empty();
  std::map<std::string, const Json*> first_of_series;
  for (Json& row : r.rows) {
    row["scaling_efficiency"] = nullptr;
    row["scaling_efficiency_ci95"] = nullptr;
    if (!meaningful) continue;
    const Json* ref = first_of_series.emplace(series_values(r, row).dump(), &row).first->second;
    const bool both_ok = has_status(row, kStatusOk) && has_status(*ref, kStatusOk);
    if (!both_ok) continue;
    const Json& samples = row["tflops_per_gpu_samples"];
    const Json& ref_samples = (*ref)["tflops_per_gpu_samples"];
    if (samples.is_array() && ref_samples.is_array() && samples.size() == ref_samples.size()) {
      // Seed k of one size against seed k of the reference: the same cluster, grown.
      std::vector<double> ratios;
      for (std::size_t k = 0; k < samples.size(); ++k) ratios.push_back(samples[k].get<double>() / ref_samples[k].get<double>());
      const util::Interval e = util::interval95(ratios);
      row["scaling_efficiency"] = e.mean;
      row["scaling_efficiency_ci95"] = Json::array({e.low, e.high});
    } else {
      row["scaling_efficiency"] = row["tflops_per_gpu"].get<double>() / (*ref)["tflops_per_gpu"].get<double>();
    }
  }
}

Json to_json(const SweepResult& r) {
  Json j;
  j["format"] = kFormat;
  j["sweep"] = r.name;
  j["description"] = r.description;
  j["points"] = r.point_count;
  j["axes"] = r.axis_columns;
  j["gpu_axis"] = r.gpu_column.empty() ? Json(nullptr) : Json(r.gpu_column);
  j["gpu_scaling"] = r.gpu_scaling.empty() ? Json(nullptr) : Json(r.gpu_scaling);
  if (r.shard) j["shard"] = {{"index", r.shard->index}, {"count", r.shard->count}};
  j["rows"] = r.rows;
  return j;
}

SweepResult result_from_json(const Json& j, const std::string& label) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    throw ConfigError(label, "$.format", std::string("a sweep result (\"format\": \"") + kFormat +
                                             "\", the sweep.json that moesim sweep writes)");
  SweepResult r;
  try {
    r.name = j.at("sweep").get<std::string>();
    r.description = j.at("description").get<std::string>();
    r.point_count = j.at("points").get<int>();
    r.axis_columns = j.at("axes").get<std::vector<std::string>>();
    if (!j.at("gpu_axis").is_null()) r.gpu_column = j.at("gpu_axis").get<std::string>();
    if (!j.at("gpu_scaling").is_null()) r.gpu_scaling = j.at("gpu_scaling").get<std::string>();
    if (j.contains("shard")) r.shard = Shard{j["shard"].at("index").get<int>(), j["shard"].at("count").get<int>()};
    r.rows = j.at("rows").get<std::vector<Json>>();
  } catch (const Json::exception& e) {
    throw ConfigError(label, "$", std::string("a sweep result as moesim sweep writes it: ") + e.what());
  }
  const std::vector<std::string> columns = row_columns(r.axis_columns);
  int previous = -1;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const Json& row = r.rows[i];
    const std::string at = fmt::format("$.rows[{}]", i);
    if (!row.is_object() || row_keys(row) != columns)
      throw ConfigError(label, at, "a row with the columns " + fmt::format("{}", fmt::join(columns, ", ")));
    if (!row["index"].is_number_integer() || row["index"].get<int>() <= previous || row["index"].get<int>() >= r.point_count)
      throw ConfigError(label, at + ".index", fmt::format("indices ascending, below {} (the sweep's points)", r.point_count));
    previous = row["index"].get<int>();
  }
  return r;
}

SweepResult read_result(const fs::path& file_or_dir) {
  const batch::ResultFile f = batch::read_result_file(file_or_dir, "sweep.json", "sweep result");
  return result_from_json(f.json, f.file.string());
}

}  // namespace moesim::sweep
