#pragma once
// The sweep's shards are the shared ones (batch/shard.hpp).
#include "moesim/batch/shard.hpp"

namespace moesim::sweep {

using batch::parse_shard;
using batch::Shard;

}  // namespace moesim::sweep
