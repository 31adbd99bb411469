#pragma once
// Private to src/plan: the schedules that have a file of their own.
#include <vector>

#include "moesim/plan/schedule.hpp"

namespace moesim::plan::detail {

// DualPipe (v = false) or DualPipeV (v = true), deepseek-ai/DualPipe.
std::vector<ScheduleEntry> dualpipe_schedule(const Layout& l, int pp_rank, bool v);
// ZB-V, sail-sg zero-bubble-pipeline-parallelism scheduler/zbv.py.
std::vector<ScheduleEntry> zb_v_schedule(const Layout& l, int pp_rank);

}  // namespace moesim::plan::detail
