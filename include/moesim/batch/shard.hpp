#pragma once
// `--shard i/n`: which jobs (a sweep's points, a search's simulations) one of n independent
// processes runs. Round-robin (jobs i, i+n, i+2n, ...) rather than blocks, so that each shard
// gets a mix of small and large jobs (GPU counts, best and worse candidates) and the shards
// finish at about the same time.
#include <string>

namespace moesim::batch {

struct Shard {
  int index = 0;  // 0-based, as Slurm's SLURM_ARRAY_TASK_ID with --array=0-(n-1)
  int count = 1;

  bool owns(int point_index) const { return point_index % count == index; }
};

// "i/n" with 0 <= i < n; ConfigError naming `option` otherwise.
Shard parse_shard(const std::string& text, const std::string& option = "--shard");

}  // namespace moesim::batch
