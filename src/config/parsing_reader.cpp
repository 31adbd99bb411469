#include "parsing_reader.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "moesim/config/error.hpp"
#include "references.hpp"
#include "text.hpp"

namespace moesim::config {

using nlohmann::json;

std::string describe_json_value(const json& value) {
  auto excerpt = [&] {
    std::string text = value.dump();
    return text.size() <= 60 ? text : text.substr(0, 57) + "...";
  };
  switch (value.type()) {
    case json::value_t::string: return "the string " + excerpt();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "the integer " + excerpt();
    case json::value_t::number_float: return "the number " + excerpt();
    case json::value_t::boolean: return "the boolean " + excerpt();
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    default: return "a value of another type";
  }
}

std::string child_path(const std::string& parent, const std::string& key) {
  bool identifier = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
  for (char c : key) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    identifier = identifier && word;
  }
  return identifier ? parent + "." + key : parent + "[" + json(key).dump() + "]";
}

namespace {

// What the readers of one document share: its context and what they saw in it.
struct DocumentState {
  explicit DocumentState(const DocumentContext& c) : ctx(c) {}
  const DocumentContext& ctx;
  std::vector<std::string> figures;     // numeric keys present, dotted, relative to the root
  std::vector<std::string> overridden;  // keys whose value comes from ctx.overrides
  std::set<std::string> declared;       // every key the schema declared, dotted
  std::map<std::string, std::string>* sources_out = nullptr;
  std::string sources_path;             // JSON path of "sources" (for its errors)
};

// True when `key` (dotted) has a source: itself, one of its parent objects, or "*".
bool covered(const std::string& key, const std::map<std::string, std::string>& sources) {
  if (sources.count("*")) return true;
  for (std::string k = key;;) {
    if (sources.count(k)) return true;
    const auto dot = k.rfind('.');
    if (dot == std::string::npos) return false;
    k.resize(dot);
  }
}

// The value at a dotted path of `root`, or nullptr.
const json* lookup(const json& root, const std::string& dotted) {
  const json* at = &root;
  std::size_t begin = 0;
  while (true) {
    const auto end = dotted.find('.', begin);
    const std::string part = dotted.substr(begin, end == std::string::npos ? end : end - begin);
    if (!at->is_object()) return nullptr;
    const auto it = at->find(part);
    if (it == at->end()) return nullptr;
    at = &*it;
    if (end == std::string::npos) return at;
    begin = end + 1;
  }
}

class ParsingReader final : public Reader {
 public:
  ParsingReader(const json& object, DocumentState& state, std::string path, std::string rel)
      : object_(object), state_(state), path_(std::move(path)), rel_(std::move(rel)) {}

  void number(const Key& k, double& out) override {
    const std::string expected = with_unit_and_range(k, "a number");
    const json* v = find(k, expected, true);
    if (!v) return;
    if (!v->is_number()) throw wrong_type(k, expected, *v);
    const double x = v->get<double>();
    check_range(k, x, expected, v->dump());
    // The range is physical in SI: checked again after the conversion, which must stay finite.
    const double si = x * k.to_si;
    const bool special = k.special && x == *k.special;
    if (!std::isfinite(si) || (!special && ((k.min && si < *k.min * k.to_si) || (k.max && si > *k.max * k.to_si))))
      throw error(k.name, expected + "; got " + v->dump() + " (out of range after conversion to SI)");
    out = si;
    state_.figures.push_back(rel_ + k.name);
  }

  void integer(const Key& declared, int& out) override {
    const Key k = with_integer_cap(declared);
    const std::string expected = with_unit_and_range(k, "an integer");
    const json* v = find(k, expected, true);
    if (!v) return;
    if (!v->is_number_integer()) throw wrong_type(k, expected, *v);
    const bool fits = v->is_number_unsigned()
                          ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                          : v->get<std::int64_t>() >= INT_MIN && v->get<std::int64_t>() <= INT_MAX;
    if (!fits) throw error(k.name, expected + " that fits in 32 bits; got " + v->dump() + " (out of range)");
    const int x = v->get<int>();
    check_range(k, x, expected, v->dump());
    out = x;
    state_.figures.push_back(rel_ + k.name);
  }

  void boolean(const Key& k, bool& out) override {
    const std::string expected = "true or false";
    const json* v = find(k, expected, true);
    if (!v) return;
    if (!v->is_boolean()) throw wrong_type(k, expected, *v);
    out = v->get<bool>();
  }

  void text(const Key& k, std::string& out) override {
    const std::string expected = k.allow_empty ? "a string" : "a non-empty string";
    const json* v = find(k, expected, true);
    if (!v) return;
    if (!v->is_string()) throw wrong_type(k, expected, *v);
    if (!k.allow_empty && v->get_ref<const std::string&>().empty())
      throw error(k.name, expected + "; got \"\" (out of range)");
    out = v->get<std::string>();
  }

  void choice(const Key& k, std::string& out, const std::vector<std::string>& allowed) override {
    const std::string expected = "one of " + join(allowed);
    const json* v = find(k, expected, true);
    if (!v) return;
    if (!v->is_string()) throw wrong_type(k, expected, *v);
    out = check_allowed(*v, allowed, expected, path(k));
  }

  void choices(const Key& k, std::vector<std::string>& out,
               const std::vector<std::string>& allowed) override {
    const std::string expected = "a list of distinct values from: " + join(allowed);
    const json* v = find(k, expected, true);
    if (!v) return;
    if (!v->is_array()) throw wrong_type(k, expected, *v);
    std::vector<std::string> items;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const std::string at = path(k) + "[" + std::to_string(i) + "]";
      const json& item = (*v)[i];
      if (!item.is_string())
        throw ConfigError(label(), at, "one of " + join(allowed) + "; got " + describe_json_value(item) + " (wrong type)");
      std::string value = check_allowed(item, allowed, "one of " + join(allowed), at);
      for (const auto& seen : items)
        if (seen == value) throw ConfigError(label(), at, "each value once; got \"" + value + "\" again (duplicate)");
      items.push_back(std::move(value));
    }
    out = std::move(items);
  }

  bool object(const Key& k, const Body& body) override {
    const json* v = find(k, "an object", false);
    if (!v) return false;
    if (!v->is_object()) throw wrong_type(k, "an object", *v);
    ParsingReader child(*v, state_, path(k), rel_ + k.name + ".");
    body(child);
    child.finish();
    return true;
  }

  void reference(const Key& k, const std::string& kind, std::string& name_out,
                 const Body& body) override {
    const std::string expected =
        "a name in configs/" + kind + "/ or an object {\"base\": <name>, <key>: <override>, ...}";
    const json* v = find(k, expected, false);
    if (!v) return;
    // An override that names another file replaces the reference: record it for provenance.
    if (const json* o = state_.ctx.overrides ? lookup(*state_.ctx.overrides, rel_ + k.name) : nullptr;
        o && (o->is_string() || (o->is_object() && o->contains("base"))))
      state_.overridden.push_back(rel_ + k.name);
    const ReferenceSite site{label(), path(k), state_.ctx.configs_dir,
                             state_.ctx.sources_required || state_.ctx.override_sources_required};
    resolve_reference(*v, kind, site, body, name_out);
  }

  void sources(const Key& k, std::map<std::string, std::string>& out) override {
    out.clear();
    state_.sources_out = &out;
    state_.sources_path = path(k);
    const std::string expected = "an object {\"<key>\": \"<source>\", ...}";
    const json* v = find(k, expected, false);
    if (!v) return;
    if (!v->is_object()) throw wrong_type(k, expected, *v);
    for (const auto& [name, source] : v->items()) {
      if (!source.is_string() || source.get_ref<const std::string&>().empty())
        throw ConfigError(label(), child_path(path(k), name),
                          "a non-empty string naming the source; got " + describe_json_value(source));
      out[name] = source.get<std::string>();
    }
  }

  void rule(std::string_view where, bool ok, std::string_view rule, std::string_view detail) override {
    if (missing_ || ok) return;  // after a missing key the values are defaults: report that first
    std::string expected(rule);
    if (!detail.empty()) expected += " (" + std::string(detail) + ")";
    throw ConfigError(label(), path_ + "." + std::string(where), expected);
  }

  // Unknown keys first (a misspelt key is the likely cause of a missing one), then missing keys.
  void finish() {
    for (const auto& item : object_.items()) {
      bool known = false;
      for (const auto& name : declared_) known = known || name == item.key();
      if (!known)
        throw ConfigError(label(), child_path(path_, item.key()),
                          "unknown key; allowed keys here: " + join(declared_));
    }
    if (missing_) throw *missing_;
  }

 private:
  const std::string& label() const { return state_.ctx.label; }
  std::string path(const Key& k) const { return child_path(path_, k.name); }

  // Declares `k`; returns its value, or nullptr when absent (a required key's absence is
  // reported by finish()). `leaf`: a value an override can set (for provenance).
  const json* find(const Key& k, const std::string& expected, bool leaf) {
    declared_.push_back(k.name);
    state_.declared.insert(rel_ + k.name);
    const auto it = object_.find(k.name);
    if (it == object_.end()) {
      if (k.required && !missing_)
        missing_.emplace(label(), path(k), expected + ": " + k.meaning + " (required key missing)");
      return nullptr;
    }
    if (leaf && state_.ctx.overrides && lookup(*state_.ctx.overrides, rel_ + k.name))
      state_.overridden.push_back(rel_ + k.name);
    return &*it;
  }

  ConfigError error(const std::string& name, const std::string& expected) const {
    return ConfigError(label(), child_path(path_, name), expected);
  }
  ConfigError wrong_type(const Key& k, const std::string& expected, const json& v) const {
    return error(k.name, expected + "; got " + describe_json_value(v) + " (wrong type)");
  }
  void check_range(const Key& k, double x, const std::string& expected, const std::string& shown) const {
    if (k.special && x == *k.special) return;
    const bool low = k.min && (k.min_exclusive ? x <= *k.min : x < *k.min);
    const bool high = k.max && x > *k.max;
    if (low || high) throw error(k.name, expected + "; got " + shown + " (out of range)");
  }
  std::string check_allowed(const json& v, const std::vector<std::string>& allowed,
                            const std::string& expected, const std::string& at) const {
    const auto& s = v.get_ref<const std::string&>();
    for (const auto& a : allowed)
      if (a == s) return s;
    throw ConfigError(label(), at, expected + "; got " + v.dump() + " (not allowed)");
  }
  static std::string with_unit_and_range(const Key& k, const std::string& what) {
    std::string s = what;
    if (!k.unit.empty()) s += " in " + k.unit;
    if (const auto range = range_text(k); !range.empty()) s += ", " + range;
    return s;
  }

  const json& object_;
  DocumentState& state_;
  std::string path_;  // JSON path of this object in the file named in errors
  std::string rel_;   // dotted prefix of this object's keys inside the document ("" or "fabric.")
  std::vector<std::string> declared_;
  std::optional<ConfigError> missing_;
};

// After the whole document was read: every source names a key, every figure has a source,
// and overridden values say where they come from.
void check_sources(DocumentState& state) {
  const DocumentContext& ctx = state.ctx;
  static const std::map<std::string, std::string> none;
  const auto& sources = state.sources_out ? *state.sources_out : none;
  for (const auto& [name, source] : sources) {
    if (name != "*" && !state.declared.count(name)) {
      std::vector<std::string> keys(state.declared.begin(), state.declared.end());
      throw ConfigError(ctx.label, child_path(state.sources_path, name),
                        "\"*\" or a key of this file (" + join(keys) + "); \"" + name + "\" is not one (unknown key)");
    }
  }
  if (ctx.sources_required) {
    for (const auto& figure : state.figures)
      if (!covered(figure, sources))
        throw ConfigError(ctx.label, ctx.root_path + "." + figure,
                          "an entry for this figure in \"sources\" (every figure needs its source): add \"" +
                              figure + "\": \"<document and key>\" or \"assumption: <why>\", or \"*\" for the whole file");
  }
  if (!ctx.overrides) return;
  std::map<std::string, std::string> override_sources;
  if (const auto it = ctx.overrides->find("sources"); it != ctx.overrides->end() && it->is_object())
    for (const auto& [name, source] : it->items())
      if (source.is_string()) override_sources[name] = source.get<std::string>();
  for (const auto& key : state.overridden) {
    const bool has_source = covered(key, override_sources);
    const bool is_figure = std::find(state.figures.begin(), state.figures.end(), key) != state.figures.end();
    if (ctx.override_sources_required && is_figure && !has_source)
      throw ConfigError(ctx.label, ctx.root_path + "." + key,
                        "an entry for this override in the override object's \"sources\" (every figure needs its source)");
    if (state.sources_out && !has_source)
      (*state.sources_out)[key] = "override: " + ctx.label + " at " + ctx.root_path + "." + key;
  }
}

}  // namespace

void parse_document(const json& document, const DocumentContext& context, const Body& body) {
  if (!document.is_object())
    throw ConfigError(context.label, context.root_path,
                      "a JSON object; got " + describe_json_value(document) + " (wrong type)");
  DocumentState state(context);
  ParsingReader reader(document, state, context.root_path, "");
  body(reader);
  reader.finish();
  check_sources(state);
}

}  // namespace moesim::config
