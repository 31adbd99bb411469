#pragma once
// Dotted paths into JSON objects ("architectures.hopper.gemm.fixed_us"): how calibration overlays
// and the kernel calibration name the keys they set, written and read by one walk.
#include <sstream>
#include <string>

namespace moesim::util {

// The value a dotted path names inside `object` (nlohmann's json or ordered_json), the objects on
// the way created where missing.
template <class Json>
Json& dotted_slot(Json& object, const std::string& dotted) {
  Json* at = &object;
  std::stringstream parts(dotted);
  for (std::string part; std::getline(parts, part, '.');) at = &(*at)[part];
  return *at;
}

}  // namespace moesim::util
