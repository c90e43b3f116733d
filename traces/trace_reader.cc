#include "traces/trace_reader.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>

#include "common/input_file.h"
#include "traces/policy_description.h"
#include "traces/record_checks.h"
#include "traces/schema.h"
#include "traces/sqlite_handle.h"
#include "traces/trace_error.h"
#include "traces/trace_tables.h"

namespace accordion {

namespace {

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

TraceReader::TraceReader(std::string path, std::unique_ptr<SqliteDb> db) : path_(std::move(path)), db_(std::move(db)) {}

TraceReader::~TraceReader() = default;

std::unique_ptr<TraceReader> TraceReader::Open(const std::string& path) {
  const std::string problem = InputFileProblem(path);
  if (!problem.empty()) throw TraceError(TraceErrorCode::kNotFound, path + ": " + problem);
  std::unique_ptr<TraceReader> reader(new TraceReader(path, nullptr));
  reader->db_ = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kReadOnly);
  reader->CheckFileHeader();
  reader->CheckStructure();
  reader->LoadRun();
  reader->LoadLayers();
  return reader;
}

// Reads the 100-byte SQLite header ourselves: it names non-databases and
// truncated files precisely, before SQLite gives a generic answer. It reads
// through the connection's own descriptor (SQLite opens the file before it
// reads a byte of it): a descriptor of ours, once closed, would drop every
// POSIX lock this process holds on the file, those of the other
// connections to it in this process included (the GUI's threads read a live
// trace side by side), and SQLite's locking relies on them.
void TraceReader::CheckFileHeader() {
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db_->raw(), "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == nullptr ||
      file->pMethods == nullptr) {
    throw TraceError(TraceErrorCode::kNotFound, path_ + ": cannot be read");
  }
  sqlite3_int64 file_size = 0;
  if (file->pMethods->xFileSize(file, &file_size) != SQLITE_OK) {
    throw TraceError(TraceErrorCode::kIo, path_ + ": cannot be read");
  }
  const auto size = static_cast<uint64_t>(file_size);
  if (size == 0) throw TraceError(TraceErrorCode::kNotATrace, path_ + ": empty file, not a trace");
  std::array<unsigned char, 100> header{};
  const int rc = file->pMethods->xRead(file, header.data(), static_cast<int>(header.size()), 0);
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) {
    throw TraceError(TraceErrorCode::kIo, path_ + ": cannot be read");
  }
  const auto got = static_cast<size_t>(std::min<uint64_t>(size, header.size()));
  if (got < 16 || std::memcmp(header.data(), kSqliteHeader, sizeof kSqliteHeader) != 0) {
    throw TraceError(TraceErrorCode::kNotSqlite, path_ + ": not an SQLite file");
  }
  if (got < header.size()) {
    throw TraceError(TraceErrorCode::kTruncated,
                     path_ + ": truncated inside the SQLite header (" + std::to_string(size) + " bytes)");
  }
  uint32_t page_size = (uint32_t{header[16]} << 8) | header[17];
  if (page_size == 1) page_size = 65536;
  const uint32_t page_count = BigEndian32(&header[28]);
  // The in-header page count is valid when its change counter matches.
  const bool count_valid = BigEndian32(&header[24]) == BigEndian32(&header[92]);
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) {
    throw TraceError(TraceErrorCode::kCorrupt, path_ + ": SQLite header has an invalid page size");
  }
  // Pages of a trace whose writer stopped before folding its WAL back (a
  // crash, a full disk) may still be only in the WAL: SQLite reads them there.
  struct stat wal {};
  const bool wal_holds_pages = ::stat((path_ + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  if (count_valid && page_count > 0 && uint64_t{page_count} * page_size > size && !wal_holds_pages) {
    throw TraceError(TraceErrorCode::kTruncated, path_ + ": truncated: " + std::to_string(size) +
                                                     " bytes, header says " +
                                                     std::to_string(uint64_t{page_count} * page_size));
  }
}

namespace {

// Whether the SQLite file at `path` says it is in WAL mode (its header's
// read and write versions, bytes 18 and 19, are 2).
bool InWalMode(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[20] = {};
  return in.read(header, sizeof header) && header[18] == 2 && header[19] == 2;
}

}  // namespace

void TraceReader::CheckStructure() {
  {
    SqliteStatement app(*db_, "PRAGMA application_id");
    const int64_t id = app.Step() ? app.Int(0, "application_id") : 0;
    if (id != 0 && id != kTraceApplicationId) {
      throw TraceError(TraceErrorCode::kNotATrace,
                       path_ + ": an SQLite file of another application, not an Accordion trace");
    }
  }
  if (!db_->TableExists("meta")) {
    // A live trace's tables may be only in its write-ahead log: a copy
    // without "<trace>-wal" beside it has an empty main file (header bytes
    // 18 and 19 are 2 in WAL mode).
    struct stat wal {};
    const bool wal_present = ::stat((path_ + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
    if (!wal_present && InWalMode(path_)) {
      throw TraceError(TraceErrorCode::kNotATrace,
                       path_ + ": an SQLite file in WAL mode whose tables are not in it: its " + path_ +
                           "-wal file is missing (a trace copied while its run was live? copy the -wal file beside "
                           "it, or copy the trace once the run has ended)");
    }
    throw TraceError(TraceErrorCode::kNotATrace, path_ + ": an SQLite file but not an Accordion trace (no meta table)");
  }
  if (!db_->ColumnExists("meta", "key") || !db_->ColumnExists("meta", "value")) {
    throw TraceError(TraceErrorCode::kNotATrace, path_ + ": meta table has no key/value columns");
  }
  SqliteStatement version(*db_, "SELECT value FROM meta WHERE key='schema_version'");
  if (!version.Step()) {
    throw TraceError(TraceErrorCode::kUnknownVersion, path_ + ": no schema_version in meta");
  }
  std::string text;
  if (version.IsNull(0)) {
    text = "";
  } else {
    // Accept a version stored as text or as an integer.
    try {
      text = version.Text(0, "meta.schema_version");
    } catch (const TraceError&) {
      text = std::to_string(version.Int(0, "meta.schema_version"));
    }
  }
  // meta's key is its primary key in every file we write: a second row is a
  // hand-made or damaged table, and which one holds the version is anyone's guess.
  if (version.Step()) {
    throw TraceError(TraceErrorCode::kUnknownVersion, path_ + ": meta holds schema_version more than once");
  }
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) < 1) {
    throw TraceError(TraceErrorCode::kUnknownVersion,
                     path_ + ": schema_version '" + text + "' is not a version number");
  }
  schema_version_ = std::stoi(text);
  if (schema_version_ > kTraceSchemaVersion) {
    throw TraceError(TraceErrorCode::kNewerVersion, path_ + ": schema version " + text +
                                                        " is newer than this toolkit reads (" +
                                                        std::to_string(kTraceSchemaVersion) + "); upgrade accordion");
  }
  for (const TableSpec& table : TraceTables(schema_version_)) {
    if (!db_->TableExists(table.name)) {
      throw TraceError(TraceErrorCode::kMissingTable, path_ + ": missing table '" + table.name + "'");
    }
    for (const char* column : table.columns) {
      if (!db_->ColumnExists(table.name, column)) {
        throw TraceError(TraceErrorCode::kMissingColumn,
                         path_ + ": table '" + table.name + "' has no column '" + column + "'");
      }
    }
  }
}

namespace {

// Prefixes `path` to the message of a TraceError `fn` throws, unless there.
template <typename Fn>
void Checked(const std::string& path, Fn&& fn) {
  try {
    fn();
  } catch (const TraceError& e) {
    const std::string what = e.what();
    if (what.rfind(path, 0) == 0) throw;
    throw TraceError(e.code(), path + ": " + what);
  }
}

// Reads `table` of a file of schema `version` in key order (`filter`, bound
// by `bind`, may narrow it) and hands each row to `fn`, which checks it. A
// table the version lacks has no rows; a column it lacks keeps its default.
template <typename Record, typename Bind, typename Fn>
void ReadRows(SqliteDb& db, const std::string& path, int version, const Table<Record>& table, const std::string& filter,
              Bind&& bind, Fn&& fn) {
  if (!table.In(version)) return;
  SqliteStatement st(db, table.SelectSql(filter, version));
  bind(st);
  Checked(path, [&] {
    while (st.Step()) fn(table.Read(st, version));
  });
}

template <typename Record, typename Fn>
void ReadRows(SqliteDb& db, const std::string& path, int version, const Table<Record>& table, Fn&& fn) {
  ReadRows(
      db, path, version, table, "", [](SqliteStatement&) {}, std::forward<Fn>(fn));
}

}  // namespace

void TraceReader::LoadRun() {
  int rows = 0;
  ReadRows(*db_, path_, schema_version_, RunTable(), [&](RunInfo r) {
    if (++rows > 1) {
      throw TraceError(TraceErrorCode::kInconsistent, "the run table has more than one row");
    }
    CheckRun(r);
    run_ = std::move(r);
  });
  if (rows == 0) throw TraceError(TraceErrorCode::kMissingRow, path_ + ": the run table is empty");
  SqliteStatement id(*db_, "SELECT value FROM meta WHERE key='run_id'");
  if (id.Step() && !id.IsNull(0)) run_.run_id = id.Text(0, "meta.run_id");
  // AdaQS and Smith et al. came with schema v4 (and read its columns).
  const int since = DescriptionOf(run_.policy).min_schema_version;
  if (schema_version_ < since) {
    throw TraceError(TraceErrorCode::kInconsistent, path_ + ": run: policy " + ToString(run_.policy) + " is schema v" +
                                                        std::to_string(since) + "'s; a v" +
                                                        std::to_string(schema_version_) + " file cannot carry it");
  }
  // The Python hook of schema v3 and older marked a run it closed before
  // its planned epochs "complete"; every tool reads it as what it was.
  if (schema_version_ < 4 && run_.writer == kWriterPythonHook && run_.status == RunStatus::kComplete) {
    SqliteStatement count(*db_, "SELECT COUNT(*) FROM epochs");
    const int64_t epochs = count.Step() ? count.Int(0, "epochs count") : 0;
    if (epochs > 0 && epochs < run_.epochs_planned) {
      run_.status = RunStatus::kStoppedEarly;
      status_read_as_stopped_early_ = true;
    }
  }
}

void TraceReader::LoadLayers() {
  ReadRows(*db_, path_, schema_version_, LayersTable(), [&](LayerInfo l) {
    CheckLayer(l, static_cast<int>(layers_.size()));
    layers_.push_back(std::move(l));
  });
  if (layers_.empty()) throw TraceError(TraceErrorCode::kMissingRow, path_ + ": no layers");
}

std::vector<EpochRecord> TraceReader::Epochs() {
  std::vector<EpochRecord> out;
  ReadRows(*db_, path_, schema_version_, EpochsTable(), [&](const EpochRecord& e) {
    CheckEpoch(e, run_);
    if (!out.empty() && e.epoch == out.back().epoch) {
      throw TraceError(TraceErrorCode::kInconsistent, "epochs: epoch " + std::to_string(e.epoch) + " appears twice");
    }
    out.push_back(e);
  });
  return out;
}

std::vector<EpochLayerRecord> TraceReader::EpochLayers() {
  std::vector<EpochLayerRecord> out;
  ReadRows(*db_, path_, schema_version_, EpochLayersTable(), [&](const EpochLayerRecord& r) {
    CheckEpochLayer(r, run_, num_layers());
    out.push_back(r);
  });
  return out;
}

std::vector<NetworkProbeRecord> TraceReader::NetworkProbe() {
  std::vector<NetworkProbeRecord> out;
  ReadRows(*db_, path_, schema_version_, NetworkProbeTable(), [&](const NetworkProbeRecord& r) {
    CheckNetworkProbe(r);
    out.push_back(r);
  });
  return out;
}

std::vector<ErrorProfileRecord> TraceReader::ErrorProfile() {
  std::vector<ErrorProfileRecord> out;
  ReadRows(*db_, path_, schema_version_, ErrorProfileTable(), [&](const ErrorProfileRecord& r) {
    CheckErrorProfile(r, run_, num_layers());
    out.push_back(r);
  });
  return out;
}

std::vector<HessianRecord> TraceReader::Hessian() {
  std::vector<HessianRecord> out;
  ReadRows(*db_, path_, schema_version_, HessianTable(), [&](const HessianRecord& r) {
    CheckHessian(r, run_);
    out.push_back(r);
  });
  return out;
}

void TraceReader::ForEachIteration(const std::function<void(const IterationRecord&)>& fn) {
  ReadRows(*db_, path_, schema_version_, IterationsTable(), [&](const IterationRecord& r) {
    CheckIteration(r, run_);
    fn(r);
  });
}

void TraceReader::ForEachGradReady(const std::function<void(const GradReadyRecord&)>& fn) {
  ForEachGradReadyWhere(std::nullopt, fn);
}

void TraceReader::ForEachGradReady(const StepKey& step, const std::function<void(const GradReadyRecord&)>& fn) {
  ForEachGradReadyWhere(step, fn);
}

void TraceReader::ForEachCollective(const std::function<void(const CollectiveRecord&)>& fn) {
  ForEachCollectiveWhere(std::nullopt, fn);
}

void TraceReader::ForEachCollective(const StepKey& step, const std::function<void(const CollectiveRecord&)>& fn) {
  ForEachCollectiveWhere(step, fn);
}

namespace {

// " WHERE ..." selecting one step's rows (a prefix of the tables' keys, so
// SQLite reads them from the primary-key index), bound by BindStep.
std::string StepFilter(const std::optional<StepKey>& step) {
  return step ? " WHERE epoch = ?1 AND iteration = ?2 AND rank = ?3" : "";
}

void BindStep(SqliteStatement& st, const std::optional<StepKey>& step) {
  if (!step) return;
  st.Bind(1, static_cast<int64_t>(step->epoch)).Bind(2, step->iteration).Bind(3, static_cast<int64_t>(step->rank));
}

}  // namespace

void TraceReader::ForEachGradReadyWhere(const std::optional<StepKey>& step,
                                        const std::function<void(const GradReadyRecord&)>& fn) {
  ReadRows(
      *db_, path_, schema_version_, GradReadyTable(), StepFilter(step),
      [&](SqliteStatement& st) { BindStep(st, step); },
      [&](const GradReadyRecord& r) {
        CheckGradReady(r, run_, num_layers());
        fn(r);
      });
}

void TraceReader::ForEachCollectiveWhere(const std::optional<StepKey>& step,
                                         const std::function<void(const CollectiveRecord&)>& fn) {
  ReadRows(
      *db_, path_, schema_version_, CollectivesTable(), StepFilter(step),
      [&](SqliteStatement& st) { BindStep(st, step); },
      [&](const CollectiveRecord& r) {
        CheckCollective(r, run_);
        fn(r);
      });
}

void TraceReader::ForEachRow(const std::string& table, const std::function<void(const std::vector<Cell>&)>& fn) {
  const TableSpec* spec = nullptr;
  for (const TableSpec& t : TraceTables(schema_version_)) {
    if (table == t.name) spec = &t;
  }
  if (!spec) throw TraceError(TraceErrorCode::kMissingTable, "no trace table named '" + table + "'");
  std::string sql = "SELECT ";
  for (size_t i = 0; i < spec->columns.size(); ++i) {
    sql += (i ? ", " : "") + std::string(spec->columns[i]);
  }
  // Column and table names come from our own schema, never from input.
  sql += " FROM " + table + " ORDER BY " + spec->key;
  SqliteStatement st(*db_, sql);
  std::vector<Cell> row(spec->columns.size());
  Checked(path_, [&] {
    while (st.Step()) {
      for (size_t i = 0; i < row.size(); ++i) row[i] = st.Value(static_cast<int>(i));
      fn(row);
    }
  });
}

int64_t TraceReader::CountRows(const std::string& table) {
  bool known = false;
  for (const TableSpec& spec : TraceTables(schema_version_)) known = known || table == spec.name;
  if (!known) throw TraceError(TraceErrorCode::kMissingTable, "no trace table named '" + table + "'");
  // Table names cannot be bound as parameters; `table` is one of ours.
  SqliteStatement st(*db_, "SELECT COUNT(*) FROM " + table);
  st.Step();
  return st.Int(0, "COUNT(*)");
}

std::vector<std::pair<std::string, std::string>> TraceReader::Meta() {
  std::vector<std::pair<std::string, std::string>> out;
  SqliteStatement st(*db_, "SELECT key, CAST(value AS TEXT) FROM meta ORDER BY key");
  Checked(path_, [&] {
    while (st.Step()) out.emplace_back(st.Text(0, "meta.key"), st.IsNull(1) ? "" : st.Text(1, "meta.value"));
  });
  return out;
}

}  // namespace accordion
