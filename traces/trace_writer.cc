#include "traces/trace_writer.h"

#include <fcntl.h>
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
  throw TraceError(TraceErrorCode::kIo, path + ": cannot lock: " + std::strerror(errno));
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

void InsertRun(SqliteDb& db, const RunInfo& run) {
  SqliteStatement st(db,
                     "INSERT INTO run (id, status, synthetic, model, dataset, train_samples, "
                     "scheme, policy, level_low, level_high, eta, interval, world_size, backend, "
                     "device, batch_size, epochs_planned, seed, config_json, versions_json, "
                     "started_utc, finished_utc) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                     "?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, NULL)");
  st.Bind(1, std::string(ToString(run.status)))
      .Bind(2, int64_t{run.synthetic ? 1 : 0})
      .Bind(3, run.model)
      .Bind(4, run.dataset)
      .Bind(5, run.train_samples)
      .Bind(6, std::string(ToString(run.scheme)))
      .Bind(7, std::string(ToString(run.policy)))
      .Bind(8, run.level_low)
      .Bind(9, run.level_high)
      .Bind(10, run.eta)
      .Bind(11, int64_t{run.interval})
      .Bind(12, int64_t{run.world_size})
      .Bind(13, run.backend)
      .Bind(14, run.device)
      .Bind(15, run.batch_size)
      .Bind(16, int64_t{run.epochs_planned})
      .Bind(17, run.seed)
      .Bind(18, run.config_json)
      .Bind(19, run.versions_json)
      .Bind(20, run.started_utc.empty() ? UtcNow() : run.started_utc);
  st.Execute();
}

void InsertLayers(SqliteDb& db, const std::vector<LayerInfo>& layers) {
  SqliteStatement st(db,
                     "INSERT INTO layers (layer_id, name, shape, numel, compressible, "
                     "floats_dense, floats_low, floats_high) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                     "?7, ?8)");
  for (const LayerInfo& l : layers) {
    st.Bind(1, int64_t{l.layer_id})
        .Bind(2, l.name)
        .Bind(3, FormatShape(l.shape))
        .Bind(4, l.numel)
        .Bind(5, int64_t{l.compressible ? 1 : 0})
        .Bind(6, l.floats_dense)
        .Bind(7, l.floats_low)
        .Bind(8, l.floats_high);
    st.Execute();
  }
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

std::string NewRunId() {
  std::random_device device;
  std::uniform_int_distribution<uint64_t> draw;
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(draw(device)),
                static_cast<unsigned long long>(draw(device)));
  return buf;
}

bool TraceBeingWritten(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  // A shared probe fails only against a writer's exclusive lock.
  return fd.ok() && ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

TraceWriter::TraceWriter(int lock_fd, std::unique_ptr<SqliteDb> db, RunInfo run, int num_layers,
                         int next_epoch)
    : lock_fd_(lock_fd),
      db_(std::move(db)),
      run_(std::move(run)),
      num_layers_(num_layers),
      next_epoch_(next_epoch) {}

TraceWriter::~TraceWriter() {
  // SQLite's own locks go when any descriptor of the file closes: close the
  // database first, then give up the writer's lock.
  db_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::unique_ptr<TraceWriter> TraceWriter::Create(const std::string& path, const RunInfo& run,
                                                 const std::vector<LayerInfo>& layers,
                                                 bool overwrite) {
  CheckRun(run);
  if (layers.empty()) {
    throw TraceError(TraceErrorCode::kInvalidValue, "a trace needs at least one layer");
  }
  for (size_t i = 0; i < layers.size(); ++i) CheckLayer(layers[i], static_cast<int>(i));
  // O_EXCL: of two runs started on one path at once, exactly one creates it.
  UniqueFd fd(CreateExclusively(path));
  if (!fd.ok() && errno == EEXIST) {
    if (!overwrite) {
      throw TraceError(TraceErrorCode::kIo, path + ": already exists (pass overwrite to replace)");
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      throw TraceError(TraceErrorCode::kIo, path + ": not a regular file; refusing to replace it");
    }
    {
      UniqueFd old(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (old.ok()) LockForWriting(old, path);  // a live run's trace stays
      RemoveDatabaseFiles(path);
    }
    fd.Reset(CreateExclusively(path));
  }
  if (!fd.ok()) throw TraceError(TraceErrorCode::kIo, path + ": cannot create: " + std::strerror(errno));
  LockForWriting(fd, path);
  RunInfo stored = run;
  stored.status = RunStatus::kRunning;
  std::unique_ptr<SqliteDb> db;
  try {
    db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kCreate);
    db->Exec("PRAGMA application_id=" + std::to_string(kTraceApplicationId));
    ConfigureForWriting(*db);
    SqliteTransaction tx(*db);
    db->Exec(TraceSchemaSql());
    SqliteStatement meta(*db, "INSERT INTO meta (key, value) VALUES (?1, ?2)");
    meta.Bind(1, std::string("schema_version")).Bind(2, std::to_string(kTraceSchemaVersion));
    meta.Execute();
    meta.Bind(1, std::string("producer")).Bind(2, std::string("accordion-toolkit ") + kVersion);
    meta.Execute();
    meta.Bind(1, std::string("created_utc")).Bind(2, UtcNow());
    meta.Execute();
    if (!stored.run_id.empty()) {
      meta.Bind(1, std::string("run_id")).Bind(2, stored.run_id);
      meta.Execute();
    }
    InsertRun(*db, stored);
    InsertLayers(*db, layers);
    tx.Commit();
  } catch (...) {
    // The file is ours and holds no run: leave nothing that looks like a trace.
    db.reset();
    RemoveDatabaseFiles(path);
    throw;
  }
  return std::unique_ptr<TraceWriter>(
      new TraceWriter(fd.Release(), std::move(db), stored, static_cast<int>(layers.size()), 0));
}

std::unique_ptr<TraceWriter> TraceWriter::Resume(const std::string& path, int next_epoch,
                                                 const std::string& run_id) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd.ok()) throw TraceError(TraceErrorCode::kNotFound, path + ": cannot open: " + std::strerror(errno));
  LockForWriting(fd, path);
  RunInfo run;
  int num_layers = 0;
  {
    auto reader = TraceReader::Open(path);  // checks it is a trace we understand
    run = reader->run();
    num_layers = static_cast<int>(reader->layers().size());
  }
  if (!run_id.empty() && run.run_id != run_id) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     path + ": belongs to another run (run id " +
                         (run.run_id.empty() ? std::string("none") : run.run_id) + ", the checkpoint's is " +
                         run_id + "); nothing was changed");
  }
  if (next_epoch < 0 || next_epoch > run.epochs_planned) {
    throw TraceError(TraceErrorCode::kOutOfRange,
                     path + ": cannot resume at epoch " + std::to_string(next_epoch));
  }
  auto db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kReadWrite);
  ConfigureForWriting(*db);
  {
    SqliteTransaction tx(*db);
    SqliteStatement count(*db, "SELECT COUNT(*) FROM epochs WHERE epoch < ?1");
    count.Bind(1, int64_t{next_epoch});
    count.Step();
    if (count.Int(0, "COUNT(*)") != next_epoch) {
      throw TraceError(TraceErrorCode::kInconsistent,
                       path + ": cannot resume at epoch " + std::to_string(next_epoch) +
                           ": the trace does not hold every earlier epoch");
    }
    for (const char* table :
         {"epochs", "epoch_layers", "iterations", "grad_ready", "collectives", "hessian"}) {
      SqliteStatement del(*db, std::string("DELETE FROM ") + table + " WHERE epoch >= ?1");
      del.Bind(1, int64_t{next_epoch});
      del.Execute();
    }
    db->Exec("UPDATE run SET status='running', finished_utc=NULL");
    tx.Commit();
  }
  run.status = RunStatus::kRunning;
  run.finished_utc.clear();
  return std::unique_ptr<TraceWriter>(new TraceWriter(fd.Release(), std::move(db), run, num_layers, next_epoch));
}

void TraceWriter::WriteEpoch(const EpochData& data) {
  const int epoch = data.epoch.epoch;
  if (epoch != next_epoch_) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     "epochs must be written in order: expected epoch " +
                         std::to_string(next_epoch_) + ", got " + std::to_string(epoch));
  }
  CheckEpoch(data.epoch, run_);
  if (static_cast<int>(data.layers.size()) != num_layers_) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     "epoch " + std::to_string(epoch) + " has " +
                         std::to_string(data.layers.size()) + " layer rows, the trace has " +
                         std::to_string(num_layers_) + " layers");
  }
  auto same_epoch = [epoch](int e, const char* table) {
    if (e != epoch) {
      throw TraceError(TraceErrorCode::kInconsistent,
                       std::string(table) + " row for epoch " + std::to_string(e) +
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

  SqliteTransaction tx(*db_);
  {
    const EpochRecord& e = data.epoch;
    SqliteStatement st(*db_,
                       "INSERT INTO epochs (epoch, lr, batch_size, iterations, critical, "
                       "model_grad_norm, train_loss, train_acc, test_loss, test_acc, compute_s, "
                       "compress_s, comm_s, total_s, floats_sent) VALUES (?1, ?2, ?3, ?4, ?5, "
                       "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    st.Bind(1, int64_t{e.epoch})
        .Bind(2, e.lr)
        .Bind(3, e.batch_size)
        .Bind(4, e.iterations)
        .Bind(5, int64_t{e.critical ? 1 : 0})
        .Bind(6, e.model_grad_norm)
        .Bind(7, e.train_loss)
        .Bind(8, e.train_acc)
        .Bind(9, e.test_loss)
        .Bind(10, e.test_acc)
        .Bind(11, e.compute_s)
        .Bind(12, e.compress_s)
        .Bind(13, e.comm_s)
        .Bind(14, e.total_s)
        .Bind(15, e.floats_sent);
    st.Execute();
  }
  {
    SqliteStatement st(*db_,
                       "INSERT INTO epoch_layers (epoch, layer_id, grad_norm, ratio, critical, "
                       "level, floats_sent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    for (const auto& r : data.layers) {
      st.Bind(1, int64_t{r.epoch})
          .Bind(2, int64_t{r.layer_id})
          .Bind(3, r.grad_norm)
          .Bind(4, r.ratio)
          .Bind(5, int64_t{r.critical ? 1 : 0})
          .Bind(6, r.level)
          .Bind(7, r.floats_sent);
      st.Execute();
    }
  }
  if (!data.iterations.empty()) {
    SqliteStatement st(*db_,
                       "INSERT INTO iterations (epoch, iteration, rank, forward_s, backward_s, "
                       "compress_s, comm_s, total_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    for (const auto& r : data.iterations) {
      st.Bind(1, int64_t{r.epoch})
          .Bind(2, r.iteration)
          .Bind(3, int64_t{r.rank})
          .Bind(4, r.forward_s)
          .Bind(5, r.backward_s)
          .Bind(6, r.compress_s)
          .Bind(7, r.comm_s)
          .Bind(8, r.total_s);
      st.Execute();
    }
  }
  if (!data.grad_ready.empty()) {
    SqliteStatement st(*db_,
                       "INSERT INTO grad_ready (epoch, iteration, rank, layer_id, offset_s) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const auto& r : data.grad_ready) {
      st.Bind(1, int64_t{r.epoch})
          .Bind(2, r.iteration)
          .Bind(3, int64_t{r.rank})
          .Bind(4, int64_t{r.layer_id})
          .Bind(5, r.offset_s);
      st.Execute();
    }
  }
  if (!data.collectives.empty()) {
    SqliteStatement st(*db_,
                       "INSERT INTO collectives (epoch, iteration, rank, seq, op, bucket, tag, "
                       "bytes, start_s, duration_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                       "?10)");
    for (const auto& r : data.collectives) {
      st.Bind(1, int64_t{r.epoch})
          .Bind(2, r.iteration)
          .Bind(3, int64_t{r.rank})
          .Bind(4, int64_t{r.seq})
          .Bind(5, std::string(ToString(r.op)))
          .Bind(6, int64_t{r.bucket})
          .Bind(7, r.tag)
          .Bind(8, r.bytes)
          .Bind(9, r.start_s)
          .Bind(10, r.duration_s);
      st.Execute();
    }
  }
  if (!data.hessian.empty()) {
    SqliteStatement st(*db_,
                       "INSERT INTO hessian (epoch, block, eigenvalue, iterations, seconds) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const auto& r : data.hessian) {
      st.Bind(1, int64_t{r.epoch})
          .Bind(2, r.block)
          .Bind(3, r.eigenvalue)
          .Bind(4, int64_t{r.iterations})
          .Bind(5, r.seconds);
      st.Execute();
    }
  }
  tx.Commit();
  ++next_epoch_;
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
