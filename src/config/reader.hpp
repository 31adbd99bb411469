#pragma once
// The schema of every configuration kind is written once, as a "describe" function that
// declares each key to a Reader: its name, type, JSON unit and factor to SI, default or
// required, allowed range or values, and a one-line meaning. Two Readers run those functions:
//  - ParsingReader (parsing_reader.hpp) reads a JSON document into a spec and validates it;
//  - DocumentingReader (documenting_reader.hpp) records the declarations as Markdown.
// Because both run the same code, the documentation cannot drift from the parser.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moesim::config {

// One key's declaration. Built fluently: key("hbm_gbytes", "HBM capacity").unit("GB", 1e9).above(0)
struct Key {
  std::string name;
  std::string meaning;
  std::string unit;               // as written in JSON ("TFLOP/s", "us"); "" = dimensionless
  double to_si = 1.0;             // SI value = JSON value * to_si
  bool required = true;           // false: an absent key keeps the target's current value
  std::optional<double> min, max; // bounds in JSON units
  bool min_exclusive = false;
  std::optional<double> special;  // one value allowed outside the range (0 = "none", -1 = "calibration")
  bool allow_empty = false;       // strings: "" accepted

  // By value and moved: GCC 12 at -O3 warns falsely (-Wrestrict) on assigning a string_view.
  Key& in(std::string json_unit, double to_si_factor = 1.0) {
    unit = std::move(json_unit);
    to_si = to_si_factor;
    return *this;
  }
  // Optional key: its default is whatever the spec struct holds before reading (one source of
  // truth for defaults: the struct's member initialisers, which the documentation prints).
  Key& optional() {
    required = false;
    return *this;
  }
  Key& at_least(double v) {
    min = v;
    min_exclusive = false;
    return *this;
  }
  Key& above(double v) {
    min = v;
    min_exclusive = true;
    return *this;
  }
  Key& at_most(double v) {
    max = v;
    return *this;
  }
  // A sentinel with its own meaning beside the physical range, e.g. at_least(1).or_exactly(0)
  // for "a peak in [1, ...] TFLOP/s, or 0 = no such tensor cores".
  Key& or_exactly(double v) {
    special = v;
    return *this;
  }
  Key& may_be_empty() {
    allow_empty = true;
    return *this;
  }
};

// Every number key declares a physical range, both ends, in JSON units: the parser checks the
// value after its conversion to SI against it (a finite value inside the range), so that no
// magnitude the later stages compute with can overflow, vanish or reach SimGrid as inf or 0.
// tests/unit/test_config_schema.cpp holds every number key of the schema to it.
//
// Integers without a declared maximum are at most 2^24: far above any real count or size, and
// small enough that the later stages' int arithmetic on them (sums, per-layer and per-stage
// lists) neither overflows nor allocates without bound. Both readers apply it, so the
// documentation shows the bound that the parser enforces.
inline constexpr int kIntegerMax = 1 << 24;
inline Key with_integer_cap(Key k) {
  if (!k.max) k.max = kIntegerMax;
  return k;
}

inline Key key(std::string name, std::string meaning) {
  Key k;
  k.name = std::move(name);
  k.meaning = std::move(meaning);
  return k;
}

// Efficiencies (the share of a link or NIC a transfer reaches) are at least 1 %, as the kernel
// calibration's efficiencies (configs/calibration/kernels.json) are. An assumption, named in the
// key's meaning so that the documentation shows it: the lowest figure any config or gap experiment
// uses is 0.245, and the bound keeps a transfer within 100 times its link's time (1e-300 printed
// a 300-digit step time).
inline constexpr double kLeastEfficiency = 0.01;
inline Key efficiency_key(std::string name, std::string meaning) {
  Key k;
  k.name = std::move(name);
  k.meaning = std::move(meaning) + "; at least 0.01 (an assumption: no measured transfer is that slow)";
  k.at_least(kLeastEfficiency).at_most(1);
  return k;
}

using Body = std::function<void(class Reader&)>;

class Reader {
 public:
  virtual ~Reader() = default;

  virtual void number(const Key& k, double& out) = 0;  // JSON number, stored as JSON * to_si
  virtual void integer(const Key& k, int& out) = 0;    // JSON integer (no fraction, no exponent)
  virtual void boolean(const Key& k, bool& out) = 0;
  virtual void text(const Key& k, std::string& out) = 0;
  // A string from a closed set.
  virtual void choice(const Key& k, std::string& out, const std::vector<std::string>& allowed) = 0;
  // A list of distinct strings from a closed set.
  virtual void choices(const Key& k, std::vector<std::string>& out,
                       const std::vector<std::string>& allowed) = 0;
  // A nested object whose keys `body` declares. Returns whether it was present (documenting:
  // false, after recording the body's keys).
  virtual bool object(const Key& k, const Body& body) = 0;
  // A reference to configs/<kind>/<name>.json: a name, or {"base": name, ...overrides}.
  // `body` describes the referenced kind; it runs on the referenced file (validated alone),
  // then on the file merged with the overrides. Documenting readers do not descend into it.
  virtual void reference(const Key& k, const std::string& kind, std::string& name_out,
                         const Body& body) = 0;
  // The provenance map {"<key>": "<source>"} ("*": every figure of the file).
  virtual void sources(const Key& k, std::map<std::string, std::string>& out) = 0;
  // A constraint between keys, checked after they were read. `where` is the key (dotted for a
  // nested one) the error points at; `rule` says what is expected in the documentation's
  // words; `detail` adds the values at hand to the error message only.
  virtual void rule(std::string_view where, bool ok, std::string_view rule,
                    std::string_view detail = "") = 0;
};

}  // namespace moesim::config
