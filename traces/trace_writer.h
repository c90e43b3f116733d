// TraceWriter records one training run into a trace file as it happens.
//
// Each WriteEpoch() is one SQLite transaction in WAL mode, so a crash loses at
// most the epoch being written. The run row says "running" until Finish(), so
// an unfinished file never looks complete. A writer holds an exclusive flock()
// on the file for its lifetime: a second writer (another run on the same
// path, an --overwrite, a resume) is refused while the first is alive, and
// readers are never blocked. The lock dies with the process.
//
// Thread safety: a TraceWriter is not thread-safe: one thread drives it (its
// own SQLite connection, SQLITE_OPEN_NOMUTEX). TraceBeingWritten, NewRunId and
// UtcNow (gmtime_r) keep no state and may be called from any thread.
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
  // path is an error (kIo) unless `overwrite`, and even then when it is not a
  // regular file; a trace another writer holds is kBusy. `run.run_id`, when
  // set, goes into the meta table; an empty `run.writer` is recorded as
  // kWriterLibrary.
  static std::unique_ptr<TraceWriter> Create(const std::string& path, const RunInfo& run,
                                             const std::vector<LayerInfo>& layers, bool overwrite = false);

  // Reopens a trace to continue its run at `next_epoch` (for --resume): rows of
  // epochs >= next_epoch are dropped and the status returns to "running".
  // When `run_id` is not empty the trace must carry the same id (kInconsistent
  // otherwise, and nothing is changed): the proof that it is the trace of the
  // checkpoint being resumed.
  static std::unique_ptr<TraceWriter> Resume(const std::string& path, int next_epoch, const std::string& run_id = "");

  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Appends one epoch. Epochs must arrive in order without gaps; every row is
  // checked first (see record_checks.h) and nothing is written if one fails.
  void WriteEpoch(const EpochData& data);

  // Stores the network probe the run made before training (schema v2):
  // once per trace, one transaction; rows are checked first. A resumed
  // run's trace keeps the probe of its first start.
  void WriteNetworkProbe(const std::vector<NetworkProbeRecord>& rows);

  // Marks the run finished with `status` and folds the WAL into the file, so
  // a finished trace is one self-contained file.
  void Finish(RunStatus status);

  const RunInfo& run() const { return run_; }
  int next_epoch() const { return next_epoch_; }

 private:
  TraceWriter(int lock_fd, std::unique_ptr<SqliteDb> db, RunInfo run, int num_layers, int next_epoch, int version);

  int lock_fd_;  // holds the flock; closed only after db_ (see the destructor)
  std::unique_ptr<SqliteDb> db_;
  RunInfo run_;
  int num_layers_;
  int next_epoch_;
  int version_;  // the file's schema version
};

// True when a live TraceWriter (of any process) holds the trace at `path`.
bool TraceBeingWritten(const std::string& path);

// A fresh run id: 32 random hex digits.
std::string NewRunId();

// Current UTC time as ISO 8601 ("2026-11-21T20:15:03Z").
std::string UtcNow();

// The SQLite library traces are written with ("3.40.1"), for the versions a
// run records: callers need not include SQLite for it.
std::string SqliteVersion();

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_WRITER_H_
