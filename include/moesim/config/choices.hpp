#pragma once
// The values a scenario's closed-set keys accept, as the schema declares them: for inputs that
// name scenario values without being scenarios (a layout search's space).
#include <string>
#include <vector>

namespace moesim::config {

const std::vector<std::string>& recompute_modules();  // recipe.recompute entries
// (layout.schedule's values: moesim::pipeline_schedule_names(), config/specs.hpp)

}  // namespace moesim::config
