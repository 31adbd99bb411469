#pragma once
// The rows of a running sweep, kept on disk as it goes: `sweep.rows.jsonl` in the output
// directory holds a header line (which sweep, which inputs) and then one line per finished
// point, appended as each point finishes. When the sweep is interrupted (Ctrl-C, a crash, a
// killed batch job) the finished points survive, and `moesim sweep ... --resume` reads them
// back and runs only the others. The final outputs are then the same bytes as an uninterrupted
// run's: a row is JSON whose numbers round-trip exactly, and every output depends on rows alone.
// The journal is removed once the outputs are written (kept when points failed unexpectedly,
// so that --resume reruns just those).
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "moesim/sweep/row.hpp"

namespace moesim::sweep {

inline constexpr const char* kJournalName = "sweep.rows.jsonl";

// FNV-1a over the bytes of `files`, in order: whether a sweep's inputs changed since the
// journal was started (a resumed run must not mix rows of different inputs).
std::string inputs_fingerprint(const std::vector<std::filesystem::path>& files);

class RowJournal {
 public:
  // Opens <dir>/sweep.rows.jsonl for the sweep `identity` (a JSON object naming the sweep, its
  // shard, options and inputs fingerprint). Without `resume`, an existing journal is refused
  // (ConfigError: it holds finished work; resume or remove it). With `resume`, its rows come
  // back in `finished` (by point index; "error" rows are left out, to run again), and a header
  // that differs from `identity` is refused, naming what changed.
  RowJournal(const std::filesystem::path& dir, const Json& identity, bool resume, std::map<int, Json>& finished);
  ~RowJournal();
  RowJournal(const RowJournal&) = delete;
  RowJournal& operator=(const RowJournal&) = delete;

  void append(const Json& row);  // one line, flushed to the kernel: it survives the process
  void remove();                 // the outputs are written: the journal has done its job
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace moesim::sweep
