#include "moesim/workload/program.hpp"

namespace moesim::workload {

std::string_view to_string(Activity a) {
  switch (a) {
    case Activity::compute: return "compute";
    case Activity::tp_comm: return "tp";
    case Activity::ep_dispatch: return "ep_dispatch";
    case Activity::ep_combine: return "ep_combine";
    case Activity::pp_comm: return "pp";
    case Activity::dp_grad_sync: return "dp_grad_sync";
    case Activity::dp_param_gather: return "dp_param_gather";
    case Activity::optimizer: return "optimizer";
    case Activity::host_copy: return "host_copy";
  }
  return "?";
}

std::string_view to_string(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::input_grad: return "input-gradient";
    case Phase::weight_grad: return "weight-gradient";
    case Phase::step: return "step";
  }
  return "?";
}

}  // namespace moesim::workload
