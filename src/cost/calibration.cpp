// Reading configs/calibration/kernels.json: strict (every key known, every number in range) and
// sourced (every number has an entry in "sources" for itself or an enclosing object).
#include <iterator>
#include <set>
#include <stdexcept>

#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/cost/kernel_model.hpp"
#include "moesim/util/json_path.hpp"

namespace moesim::cost {

namespace {

// The file's provenance map, and every key read (a source must name one of them).
struct Provenance {
  std::set<std::string> sources;
  std::set<std::string> read;
};

class Strict {
 public:
  Strict(const nlohmann::json& node, std::string file, std::string dotted, Provenance& provenance)
      : node_(node), file_(std::move(file)), dotted_(std::move(dotted)), provenance_(provenance) {
    if (!node_.is_object()) throw ConfigError(file_, path(), "an object");
  }
  Strict(const Strict&) = delete;
  Strict& operator=(const Strict&) = delete;
  ~Strict() noexcept(false) {
    if (std::uncaught_exceptions() > 0) return;
    for (const auto& [name, value] : node_.items())
      if (!read_.count(name)) throw ConfigError(file_, path() + "." + name, "unknown key here");
  }

  Strict object(const std::string& name) { return Strict(at(name), file_, join(name), provenance_); }
  const nlohmann::json& items(const std::string& name) {
    const nlohmann::json& v = at(name);
    if (!v.is_object()) throw ConfigError(file_, path() + "." + name, "an object");
    return v;
  }
  double number(const std::string& name, double min, double max) {
    const nlohmann::json& v = at(name);
    const std::string where = path() + "." + name;
    if (!v.is_number()) throw ConfigError(file_, where, "a number");
    const double x = v.get<double>();
    if (!(x >= min && x <= max))
      throw ConfigError(file_, where, "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    if (!sourced(join(name)))
      throw ConfigError(file_, where, "an entry for this figure in \"sources\" (every figure needs its source)");
    return x;
  }
  void skip(const std::string& name) { read_.insert(name); }  // read elsewhere (text)
  bool has(const std::string& name) const { return node_.contains(name); }

 private:
  const nlohmann::json& at(const std::string& name) {
    if (!node_.contains(name)) throw ConfigError(file_, path() + "." + name, "a required key (kernel calibration)");
    read_.insert(name);
    provenance_.read.insert(join(name));
    return node_[name];
  }
  std::string join(const std::string& name) const { return dotted_.empty() ? name : dotted_ + "." + name; }
  std::string path() const { return dotted_.empty() ? "$" : "$." + dotted_; }
  bool sourced(std::string key) const {
    for (;;) {
      if (provenance_.sources.count(key)) return true;
      const size_t dot = key.rfind('.');
      if (dot == std::string::npos) return provenance_.sources.count("*") > 0;
      key.resize(dot);
    }
  }

  const nlohmann::json& node_;
  std::string file_, dotted_;
  Provenance& provenance_;
  std::set<std::string> read_;
};

// Names of the precisions a mainloop efficiency may be given for: BF16 and the quantisation
// flavours. Per-tensor FP8 is the hardware's FP8 rate itself (its clock, configs/hardware).
Precision flavour(const std::string& file, const std::string& where, const std::string& name) {
  Precision p;
  if (!parse_precision(name, p) || p == Precision::fp8)
    throw ConfigError(file, where + "." + name, "a GEMM flavour: bf16, fp8_blockwise, mxfp8 or nvfp4");
  return p;
}

ArchitectureCalibration read_architecture(Strict a, const std::string& file, const std::string& where) {
  ArchitectureCalibration c;
  {
    Strict g = a.object("gemm");
    c.tile_m = g.number("tile_m", 16, 512);
    c.tile_n = g.number("tile_n", 16, 512);
    c.k_overhead = g.number("k_overhead", 0, 1e5);
    c.gemm_fixed_s = g.number("fixed_us", 0, 1e4) * 1e-6;
    c.grouped_gemm_streams = static_cast<int>(g.number("grouped_streams", 1, 64));
    const std::string mainloop_where = where + ".gemm.mainloop_efficiency";
    Strict m = g.object("mainloop_efficiency");
    for (const auto& [name, value] : g.items("mainloop_efficiency").items())
      c.mainloop_efficiency[flavour(file, mainloop_where, name)] = m.number(name, 0.01, 1.0);
  }
  {
    Strict t = a.object("attention");
    Strict f = t.object("forward_efficiency");
    c.attention_forward_efficiency_bf16 = f.number("bf16", 0.01, 1.0);
    c.attention_forward_efficiency_fp8 = f.number("fp8", 0.01, 1.0);
    Strict b = t.object("backward_efficiency");
    c.attention_backward_efficiency_bf16 = b.number("bf16", 0.01, 1.0);
    c.attention_backward_efficiency_fp8 = b.number("fp8", 0.01, 1.0);
    c.exp2_efficiency = t.number("exp2_efficiency", 0.01, 1.0);
    c.attention_backward_tile = t.number("backward_tile", 16, 512);
    if (t.has("cudnn_bf16_time_ratios")) {
      Strict versions = t.object("cudnn_bf16_time_ratios");
      for (const auto& [version, value] : t.items("cudnn_bf16_time_ratios").items()) {
        const auto key = parse_major_minor(version);
        if (!key)
          throw ConfigError(file, where + ".attention.cudnn_bf16_time_ratios." + version, "a cuDNN version major.minor");
        Strict r = versions.object(version);
        c.cudnn_bf16_time_ratios[*key] = {r.number("forward", 0.5, 2.0), r.number("backward", 0.5, 2.0)};
      }
    }
  }
  {
    Strict m = a.object("memory");
    c.elementwise_hbm_efficiency = m.number("elementwise_hbm_efficiency", 0.01, 1.0);
    c.copy_hbm_efficiency = m.number("copy_hbm_efficiency", 0.01, 1.0);
  }
  return c;
}

}  // namespace

std::filesystem::path default_calibration_file(const std::filesystem::path& configs_dir) {
  return configs_dir / "calibration" / "kernels.json";
}

namespace {

KernelCalibration read_calibration(const nlohmann::json& j, const std::string& f);

}  // namespace

void use_cudnn_version(KernelCalibration& c, const std::string& version) {
  if (version.empty()) return;
  const auto key = parse_major_minor(version);
  if (!key) throw std::invalid_argument("cuDNN version '" + version + "': expected major.minor[.patch]");
  for (auto& [name, arch] : c.architectures) {
    const auto& table = arch.cudnn_bf16_time_ratios;
    if (table.empty()) continue;
    auto at_or_below = table.upper_bound(*key);
    const auto& ratios = at_or_below == table.begin() ? table.begin()->second : std::prev(at_or_below)->second;
    arch.attention_forward_time_ratio_bf16 = ratios.first;
    arch.attention_backward_time_ratio_bf16 = ratios.second;
  }
}

KernelCalibration load_calibration(const std::filesystem::path& file) {
  return read_calibration(config::read_json_file(file), file.string());
}

KernelCalibration load_calibration(const std::filesystem::path& file, const std::map<std::string, double>& values,
                                   const std::map<std::string, std::string>& sources, const std::string& by) {
  nlohmann::json j = config::read_json_file(file);
  if (values.empty()) return read_calibration(j, file.string());
  for (const auto& [dotted, value] : values) util::dotted_slot(j, dotted) = value;
  for (const auto& [dotted, text] : sources) j["sources"][dotted] = text;
  return read_calibration(j, file.string() + " as calibrated by " + by);
}

namespace {

KernelCalibration read_calibration(const nlohmann::json& j, const std::string& f) {
  Provenance provenance;
  if (!j.is_object() || !j.contains("sources") || !j["sources"].is_object())
    throw ConfigError(f, "$.sources", "an object {\"<dotted key>\": \"<source>\"}");
  for (const auto& [name, text] : j["sources"].items()) {
    if (!text.is_string() || text.get_ref<const std::string&>().empty())
      throw ConfigError(f, "$.sources." + name, "a non-empty string naming the source");
    provenance.sources.insert(name);
  }
  KernelCalibration c;
  Strict root(j, f, "", provenance);
  root.skip("about");
  root.skip("sources");
  {
    Strict archs = root.object("architectures");
    for (const auto& [name, value] : root.items("architectures").items())
      c.architectures[name] = read_architecture(archs.object(name), f, "$.architectures." + name);
  }
  Strict launch = root.object("launch");
  c.launch_eager_s = launch.number("eager_us", 0.0, 1e4) * 1e-6;
  c.launch_graph_s = launch.number("graph_replay_us", 0.0, 1e4) * 1e-6;
  for (const std::string& name : provenance.sources)
    if (name != "*" && !provenance.read.count(name))
      throw ConfigError(f, "$.sources." + name, "a source for a key of this file (no key \"" + name + "\")");
  return c;
}

}  // namespace

}  // namespace moesim::cost
