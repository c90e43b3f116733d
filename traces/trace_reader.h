// TraceReader gives typed, checked access to one trace file.
//
// Open() checks that the file is an SQLite database, that it is a trace, that
// its schema version is one we read, and that every table and column is
// there; it loads the run and its layers. Every accessor checks the rows it
// returns (record_checks.h), so a hostile file yields a TraceError, never a
// crash. The per-iteration tables are streamed row by row.
//
// Thread safety: a TraceReader is not thread-safe: use one per thread. Each
// holds its own SQLite connection (SQLITE_OPEN_NOMUTEX), which two threads may
// not use at once; readers of one file in several threads each open their own.
#ifndef ACCORDION_TRACES_TRACE_READER_H_
#define ACCORDION_TRACES_TRACE_READER_H_

#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/cell.h"

#include "traces/records.h"

namespace accordion {

class SqliteDb;

// One sampled optimizer step of one rank.
struct StepKey {
  int epoch = 0;
  int64_t iteration = 0;
  int rank = 0;
};

class TraceReader {
 public:
  static std::unique_ptr<TraceReader> Open(const std::string& path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const { return schema_version_; }
  // The run as its tools read it. A run the Python hook of schema v3 or
  // older closed before its planned epochs (early stopping) was marked
  // complete: it is read as stopped early (status_read_as_stopped_early()).
  const RunInfo& run() const { return run_; }
  bool status_read_as_stopped_early() const { return status_read_as_stopped_early_; }
  const std::vector<LayerInfo>& layers() const { return layers_; }
  int num_layers() const { return static_cast<int>(layers_.size()); }

  // Epoch rows ordered by epoch.
  std::vector<EpochRecord> Epochs();
  // Per-layer rows ordered by (epoch, layer_id).
  std::vector<EpochLayerRecord> EpochLayers();
  std::vector<HessianRecord> Hessian();
  // Ordered by (epoch, layer_id, level); empty before schema v4.
  std::vector<ErrorProfileRecord> ErrorProfile();
  // The network probe the run made at start, ordered by (op, bytes,
  // repeat); empty when it made none or the file predates schema v2.
  std::vector<NetworkProbeRecord> NetworkProbe();

  // Streams the per-iteration tables in key order; the callback may throw to stop.
  void ForEachIteration(const std::function<void(const IterationRecord&)>& fn);
  void ForEachGradReady(const std::function<void(const GradReadyRecord&)>& fn);
  void ForEachCollective(const std::function<void(const CollectiveRecord&)>& fn);
  // The same for one step only, read through the key index.
  void ForEachGradReady(const StepKey& step, const std::function<void(const GradReadyRecord&)>& fn);
  void ForEachCollective(const StepKey& step, const std::function<void(const CollectiveRecord&)>& fn);

  // Streams any table's columns, as schema.h lists them for this file's
  // version (TraceTables(schema_version())), in key order.
  void ForEachRow(const std::string& table, const std::function<void(const std::vector<Cell>&)>& fn);

  int64_t CountRows(const std::string& table);

  // Raw key/value pairs of the meta table.
  std::vector<std::pair<std::string, std::string>> Meta();

 private:
  TraceReader(std::string path, std::unique_ptr<SqliteDb> db);
  void CheckFileHeader();
  void CheckStructure();
  void LoadRun();
  void LoadLayers();
  void ForEachGradReadyWhere(const std::optional<StepKey>& step, const std::function<void(const GradReadyRecord&)>& fn);
  void ForEachCollectiveWhere(const std::optional<StepKey>& step,
                              const std::function<void(const CollectiveRecord&)>& fn);

  std::string path_;
  std::unique_ptr<SqliteDb> db_;
  int schema_version_ = 0;
  bool status_read_as_stopped_early_ = false;
  RunInfo run_;
  std::vector<LayerInfo> layers_;
};

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_READER_H_
