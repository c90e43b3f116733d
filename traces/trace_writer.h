// TraceWriter records one training run into a trace file as it happens.
//
// Each WriteEpoch() is one SQLite transaction in WAL mode, so a crash loses at
// most the epoch being written. The run row says "running" until Finish(), so
// an unfinished file never looks complete.
#ifndef ACCORDION_TRACES_TRACE_WRITER_H_
#define ACCORDION_TRACES_TRACE_WRITER_H_

#include <memory>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion {

class SqliteDb;

class TraceWriter {
 public:
  // Creates a new trace at `path` holding the run and its layers. An existing
  // file is an error (kIo) unless `overwrite`.
  static std::unique_ptr<TraceWriter> Create(const std::string& path, const RunInfo& run,
                                             const std::vector<LayerInfo>& layers,
                                             bool overwrite = false);

  // Reopens a trace to continue its run at `next_epoch` (for --resume): rows of
  // epochs >= next_epoch are dropped and the status returns to "running".
  static std::unique_ptr<TraceWriter> Resume(const std::string& path, int next_epoch);

  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Appends one epoch. Epochs must arrive in order without gaps; every row is
  // checked first (see record_checks.h) and nothing is written if one fails.
  void WriteEpoch(const EpochData& data);

  // Marks the run finished with `status` and folds the WAL into the file, so
  // a finished trace is one self-contained file.
  void Finish(RunStatus status);

  const RunInfo& run() const { return run_; }
  int next_epoch() const { return next_epoch_; }

 private:
  TraceWriter(std::unique_ptr<SqliteDb> db, RunInfo run, int num_layers, int next_epoch);

  std::unique_ptr<SqliteDb> db_;
  RunInfo run_;
  int num_layers_;
  int next_epoch_;
};

// Current UTC time as ISO 8601 ("2026-11-21T20:15:03Z").
std::string UtcNow();

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_WRITER_H_
