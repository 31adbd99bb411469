#pragma once
// The values a scenario's closed-set keys accept, as the schema declares them: for inputs that
// name scenario values without being scenarios (a layout search's space).
#include <string>
#include <vector>

namespace moesim::config {

const std::vector<std::string>& recompute_modules();  // recipe.recompute entries
const std::vector<std::string>& schedules();          // layout.schedule

}  // namespace moesim::config
