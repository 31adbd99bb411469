#pragma once
// The schema of each configuration kind, written once (see reader.hpp): the same functions
// parse files (ParsingReader) and document them (DocumentingReader, schema_markdown()).
#include "moesim/config/specs.hpp"
#include "reader.hpp"

namespace moesim::config {

void describe_gpu(Reader& r, GpuSpec& gpu);              // configs/hardware/<name>.json
void describe_system(Reader& r, SystemSpec& system);     // configs/systems/<name>.json
void describe_model(Reader& r, ModelSpec& model);        // configs/models/<name>.json
void describe_stack(Reader& r, StackSpec& stack);        // configs/stacks/<name>.json
void describe_dispatcher(Reader& r, EpDispatcherSpec& d);  // configs/dispatchers/<name>.json
void describe_recipe(Reader& r, RecipeSpec& recipe);     // a stack's "recipe", a scenario's "recipe"
// Rules that every dispatcher, graph scope and switch the recipe turns on is one the stack
// supports; `where` prefixes the keys the errors point at ("" inside the recipe object).
void check_recipe_supported(Reader& r, const std::string& where, const RecipeSpec& recipe, const StackSpec& stack);
void describe_scenario(Reader& r, Scenario& scenario);   // scenarios/<name>.json
// A system's "variability" (GPU keys only) or a scenario's (every key).
void describe_variability(Reader& r, VariabilitySpec& v, bool with_routing);

// The "sources" key every config file carries.
inline Key sources_key() {
  return key("sources",
             "provenance of every figure: {\"<key>\": \"<source>\"}, a dotted key for a nested one, "
             "a parent object's key for all its figures, \"*\" for the whole file; a source cites a "
             "document by its key in docs/sources.md (\"DGXC: GB300 BF16 dense 2,450 TFLOP/s\"), a measurement "
             "(\"measured: ...\") or says \"assumption: <why>\"")
      .optional();
}

}  // namespace moesim::config
