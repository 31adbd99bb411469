#pragma once
// Reading back a result file a batch command wrote (sweep.json, search.json): what `moesim
// merge` and `--resume` start from.
#include <filesystem>
#include <string>

#include "moesim/batch/table_text.hpp"

namespace moesim::batch {

struct ResultFile {
  std::filesystem::path file;  // the file read (`file_name` inside a directory)
  Json json;
};

// `file_or_dir`: the file, or a directory holding `file_name`. ConfigError naming the file when it
// cannot be read ("an existing, readable <what> (...)") or is not JSON.
ResultFile read_result_file(const std::filesystem::path& file_or_dir, const std::string& file_name,
                            const std::string& what);

}  // namespace moesim::batch
