#include "traces/trace_writer.h"

#include "common/output_file.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <utility>

#include "common/version.h"
#include "traces/record_checks.h"
#include "traces/schema.h"
#include "traces/sqlite_handle.h"
#include "traces/trace_reader.h"
#include "traces/trace_tables.h"

namespace accordion {

namespace {

// A file descriptor that closes itself unless released.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(-1); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  bool ok() const { return fd_ >= 0; }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// The writer's lock is flock(), not fcntl(): SQLite takes fcntl locks on the
// same file, and those are separate from flock locks on Linux, so neither
// disturbs the other.
void LockForWriting(const UniqueFd& fd, const std::string& path) {
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK) {
    throw TraceError(TraceErrorCode::kBusy,
                     path + ": another process is writing this trace (a running accordion-train?)");
  }
  throw TraceError(TraceErrorCode::kNotWritable, path + ": cannot lock: " + std::strerror(errno));
}

int CreateExclusively(const std::string& path) {
  return ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
}

void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::remove((path + suffix).c_str());
  }
}

void ConfigureForWriting(SqliteDb& db) {
  db.Exec("PRAGMA journal_mode=WAL");
  // NORMAL in WAL mode: a process crash loses nothing committed.
  db.Exec("PRAGMA synchronous=NORMAL");
  db.Exec("PRAGMA foreign_keys=OFF");
}

// Inserts `rows` with the statement `table` derives for a file of schema
// `version`, prepared once.
template <typename Record>
void InsertRows(SqliteDb& db, const Table<Record>& table, const std::vector<Record>& rows,
                int version = kTraceSchemaVersion) {
  if (rows.empty()) return;
  SqliteStatement st(db, table.InsertSql(version));
  for (const Record& row : rows) {
    table.Bind(st, row, version);
    st.Execute();
  }
}

// What a new trace's run row holds: the rules of the current version.
RunInfo RunToCreate(const RunInfo& run) {
  RunInfo stored = run;
  stored.status = RunStatus::kRunning;
  if (stored.writer.empty()) stored.writer = kWriterLibrary;
  CheckRun(stored);
  if (stored.ranks_per_node > stored.world_size) {
    throw TraceError(TraceErrorCode::kInconsistent, "run: ranks_per_node " + std::to_string(stored.ranks_per_node) +
                                                        " is more than world_size " +
                                                        std::to_string(stored.world_size));
  }
  return stored;
}

}  // namespace

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string SqliteVersion() { return sqlite3_libversion(); }

std::string NewRunId() {
  std::random_device device;
  std::uniform_int_distribution<uint64_t> draw;
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(draw(device)),
                static_cast<unsigned long long>(draw(device)));
  return buf;
}

bool TraceBeingWritten(const std::string& path) { return FileBeingWritten(path); }

TraceWriter::TraceWriter(int lock_fd, std::unique_ptr<SqliteDb> db, RunInfo run, int num_layers, int next_epoch,
                         int version)
    : lock_fd_(lock_fd),
      db_(std::move(db)),
      run_(std::move(run)),
      num_layers_(num_layers),
      next_epoch_(next_epoch),
      version_(version) {}

TraceWriter::~TraceWriter() {
  // SQLite's own locks go when any descriptor of the file closes: close the
  // database first, then give up the writer's lock.
  db_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::unique_ptr<TraceWriter> TraceWriter::Create(const std::string& path, const RunInfo& run,
                                                 const std::vector<LayerInfo>& layers, bool overwrite) {
  RunInfo stored = RunToCreate(run);
  if (layers.empty()) {
    throw TraceError(TraceErrorCode::kInvalidValue, "a trace needs at least one layer");
  }
  for (size_t i = 0; i < layers.size(); ++i) CheckLayer(layers[i], static_cast<int>(i));
  // O_EXCL: of two runs started on one path at once, exactly one creates it.
  UniqueFd fd(CreateExclusively(path));
  if (!fd.ok() && errno == EEXIST) {
    if (!overwrite) {
      throw TraceError(TraceErrorCode::kNotWritable, path + ": already exists (pass overwrite to replace)");
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      throw TraceError(TraceErrorCode::kNotWritable, path + ": not a regular file; refusing to replace it");
    }
    {
      UniqueFd old(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (old.ok()) LockForWriting(old, path);  // a live run's trace stays
      RemoveDatabaseFiles(path);
    }
    fd.Reset(CreateExclusively(path));
  }
  if (!fd.ok()) {
    // ENOSPC and EIO are the machine's; the rest (EACCES, EROFS, ENOENT...) the path's.
    const bool machine = errno == ENOSPC || errno == EIO || errno == EDQUOT;
    throw TraceError(machine ? TraceErrorCode::kIo : TraceErrorCode::kNotWritable,
                     path + ": cannot create: " + std::strerror(errno));
  }
  LockForWriting(fd, path);
  std::unique_ptr<SqliteDb> db;
  try {
    db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kCreate);
    db->Exec("PRAGMA application_id=" + std::to_string(kTraceApplicationId));
    ConfigureForWriting(*db);
    SqliteTransaction tx(*db);
    db->Exec(TraceSchemaSql());
    std::vector<MetaEntry> meta = {{"schema_version", std::to_string(kTraceSchemaVersion)},
                                   {"producer", std::string("accordion-toolkit ") + kVersion},
                                   {"created_utc", UtcNow()}};
    if (!stored.run_id.empty()) meta.push_back({"run_id", stored.run_id});
    InsertRows(*db, MetaTable(), meta);
    // A new run row has not finished, and says when it started.
    RunInfo row = stored;
    if (row.started_utc.empty()) row.started_utc = UtcNow();
    row.finished_utc.clear();
    InsertRows(*db, RunTable(), {row});
    InsertRows(*db, LayersTable(), layers);
    tx.Commit();
  } catch (...) {
    // The file is ours and holds no run: leave nothing that looks like a trace.
    db.reset();
    RemoveDatabaseFiles(path);
    throw;
  }
  return std::unique_ptr<TraceWriter>(
      new TraceWriter(fd.Release(), std::move(db), stored, static_cast<int>(layers.size()), 0, kTraceSchemaVersion));
}

std::unique_ptr<TraceWriter> TraceWriter::Resume(const std::string& path, int next_epoch, const std::string& run_id) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.ok()) throw TraceError(TraceErrorCode::kNotFound, path + ": cannot open: " + std::strerror(errno));
  LockForWriting(fd, path);
  RunInfo run;
  int num_layers = 0;
  int version = 0;
  {
    auto reader = TraceReader::Open(path);  // checks it is a trace we understand
    run = reader->run();
    num_layers = static_cast<int>(reader->layers().size());
    version = reader->schema_version();  // a resumed run goes on in its file's version
  }
  if (!run_id.empty() && run.run_id != run_id) {
    throw TraceError(TraceErrorCode::kInconsistent, path + ": belongs to another run (run id " +
                                                        (run.run_id.empty() ? std::string("none") : run.run_id) +
                                                        ", the checkpoint's is " + run_id + "); nothing was changed");
  }
  if (next_epoch < 0 || next_epoch > run.epochs_planned) {
    throw TraceError(TraceErrorCode::kOutOfRange, path + ": cannot resume at epoch " + std::to_string(next_epoch));
  }
  auto db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kReadWrite);
  ConfigureForWriting(*db);
  {
    SqliteTransaction tx(*db);
    SqliteStatement count(*db, "SELECT COUNT(*) FROM epochs WHERE epoch < ?1");
    count.Bind(1, int64_t{next_epoch});
    count.Step();
    if (count.Int(0, "COUNT(*)") != next_epoch) {
      throw TraceError(TraceErrorCode::kInconsistent, path + ": cannot resume at epoch " + std::to_string(next_epoch) +
                                                          ": the trace does not hold every earlier epoch");
    }
    // Every table keyed by epoch holds rows of the epochs being redone.
    for (const TableSpec& table : TraceTables(version)) {
      if (std::string(table.columns[0]) != "epoch") continue;
      SqliteStatement del(*db, std::string("DELETE FROM ") + table.name + " WHERE epoch >= ?1");
      del.Bind(1, int64_t{next_epoch});
      del.Execute();
    }
    db->Exec("UPDATE run SET status='running', finished_utc=NULL");
    tx.Commit();
  }
  run.status = RunStatus::kRunning;
  run.finished_utc.clear();
  return std::unique_ptr<TraceWriter>(
      new TraceWriter(fd.Release(), std::move(db), run, num_layers, next_epoch, version));
}

void TraceWriter::WriteEpoch(const EpochData& data) {
  const int epoch = data.epoch.epoch;
  if (epoch != next_epoch_) {
    throw TraceError(TraceErrorCode::kInconsistent, "epochs must be written in order: expected epoch " +
                                                        std::to_string(next_epoch_) + ", got " + std::to_string(epoch));
  }
  CheckEpoch(data.epoch, run_);
  if (version_ < 3) {
    const EpochRecord& e = data.epoch;
    for (const double metric : {e.train_loss, e.train_acc, e.test_loss, e.test_acc}) {
      if (Recorded(metric)) continue;
      throw TraceError(TraceErrorCode::kInconsistent, "a trace of schema v" + std::to_string(version_) +
                                                          " holds every epoch's loss and accuracy: epoch " +
                                                          std::to_string(epoch) +
                                                          " left one out (resumed from an older toolkit)");
    }
  }
  if (static_cast<int>(data.layers.size()) != num_layers_) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     "epoch " + std::to_string(epoch) + " has " + std::to_string(data.layers.size()) +
                         " layer rows, the trace has " + std::to_string(num_layers_) + " layers");
  }
  auto same_epoch = [epoch](int e, const char* table) {
    if (e != epoch) {
      throw TraceError(TraceErrorCode::kInconsistent, std::string(table) + " row for epoch " + std::to_string(e) +
                                                          " inside the data of epoch " + std::to_string(epoch));
    }
  };
  for (const auto& r : data.layers) {
    same_epoch(r.epoch, "epoch_layers");
    CheckEpochLayer(r, run_, num_layers_);
  }
  for (const auto& r : data.iterations) {
    same_epoch(r.epoch, "iterations");
    CheckIteration(r, run_);
  }
  for (const auto& r : data.grad_ready) {
    same_epoch(r.epoch, "grad_ready");
    CheckGradReady(r, run_, num_layers_);
  }
  for (const auto& r : data.collectives) {
    same_epoch(r.epoch, "collectives");
    CheckCollective(r, run_);
  }
  for (const auto& r : data.hessian) {
    same_epoch(r.epoch, "hessian");
    CheckHessian(r, run_);
  }
  if (!data.error_profile.empty() && version_ < 4) {
    throw TraceError(TraceErrorCode::kInconsistent, "a trace of schema v" + std::to_string(version_) +
                                                        " has no error profile (resumed from an older toolkit)");
  }
  for (const auto& r : data.error_profile) {
    same_epoch(r.epoch, "error_profile");
    CheckErrorProfile(r, run_, num_layers_);
  }

  SqliteTransaction tx(*db_);
  InsertRows(*db_, EpochsTable(), {data.epoch}, version_);
  InsertRows(*db_, EpochLayersTable(), data.layers, version_);
  InsertRows(*db_, IterationsTable(), data.iterations, version_);
  InsertRows(*db_, GradReadyTable(), data.grad_ready, version_);
  InsertRows(*db_, CollectivesTable(), data.collectives, version_);
  InsertRows(*db_, HessianTable(), data.hessian, version_);
  if (version_ >= 4) InsertRows(*db_, ErrorProfileTable(), data.error_profile, version_);
  tx.Commit();
  ++next_epoch_;
}

void TraceWriter::WriteNetworkProbe(const std::vector<NetworkProbeRecord>& rows) {
  if (version_ < 2) {
    throw TraceError(TraceErrorCode::kInconsistent, "a trace of schema v" + std::to_string(version_) +
                                                        " has no network probe (resumed from an older toolkit)");
  }
  for (const NetworkProbeRecord& r : rows) CheckNetworkProbe(r);
  SqliteTransaction tx(*db_);
  SqliteStatement count(*db_, "SELECT COUNT(*) FROM network_probe");
  count.Step();
  if (count.Int(0, "COUNT(*)") > 0) {
    throw TraceError(TraceErrorCode::kInconsistent, "the trace already holds a network probe");
  }
  InsertRows(*db_, NetworkProbeTable(), rows, version_);
  tx.Commit();
}

void TraceWriter::Finish(RunStatus status) {
  run_.status = status;
  run_.finished_utc = UtcNow();
  SqliteStatement st(*db_, "UPDATE run SET status=?1, finished_utc=?2");
  st.Bind(1, std::string(ToString(status))).Bind(2, run_.finished_utc);
  st.Execute();
  db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db_->Exec("PRAGMA journal_mode=DELETE");
}

}  // namespace accordion
