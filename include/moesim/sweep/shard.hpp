#pragma once
// `--shard i/n`: which points one of n independent processes runs. Round-robin (points i,
// i+n, i+2n, ...) rather than blocks, so that each shard gets a mix of small and large GPU
// counts and the shards finish at about the same time.
#include <string>

namespace moesim::sweep {

struct Shard {
  int index = 0;  // 0-based, as Slurm's SLURM_ARRAY_TASK_ID with --array=0-(n-1)
  int count = 1;

  bool owns(int point_index) const { return point_index % count == index; }
};

// "i/n" with 0 <= i < n; ConfigError naming `option` otherwise.
Shard parse_shard(const std::string& text, const std::string& option = "--shard");

}  // namespace moesim::sweep
