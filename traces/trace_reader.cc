#include "traces/trace_reader.h"

#include <sys/stat.h>

#include <array>
#include <cstring>
#include <fstream>

#include "traces/record_checks.h"
#include "traces/schema.h"
#include "traces/sqlite_handle.h"
#include "traces/trace_error.h"

namespace accordion {

namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // 16 bytes with the NUL

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

TraceReader::TraceReader(std::string path, std::unique_ptr<SqliteDb> db)
    : path_(std::move(path)), db_(std::move(db)) {}

TraceReader::~TraceReader() = default;

std::unique_ptr<TraceReader> TraceReader::Open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw TraceError(TraceErrorCode::kNotFound, path + ": no such file");
  }
  if (!S_ISREG(st.st_mode)) {
    throw TraceError(TraceErrorCode::kNotFound, path + ": not a regular file");
  }
  std::unique_ptr<TraceReader> reader(new TraceReader(path, nullptr));
  reader->CheckFileHeader();
  reader->db_ = std::make_unique<SqliteDb>(path, SqliteDb::Mode::kReadOnly);
  reader->CheckStructure();
  reader->LoadRun();
  reader->LoadLayers();
  return reader;
}

// Reads the 100-byte SQLite header ourselves: it names non-databases and
// truncated files precisely, before SQLite gives a generic answer.
void TraceReader::CheckFileHeader() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw TraceError(TraceErrorCode::kNotFound, path_ + ": cannot be read");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  if (size == 0) throw TraceError(TraceErrorCode::kNotATrace, path_ + ": empty file, not a trace");
  std::array<unsigned char, 100> header{};
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  const auto got = static_cast<size_t>(in.gcount());
  if (got < 16 || std::memcmp(header.data(), kSqliteMagic, 16) != 0) {
    throw TraceError(TraceErrorCode::kNotSqlite, path_ + ": not an SQLite file");
  }
  if (got < header.size()) {
    throw TraceError(TraceErrorCode::kTruncated,
                     path_ + ": truncated inside the SQLite header (" + std::to_string(size) +
                         " bytes)");
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
  std::ifstream wal(path_ + "-wal", std::ios::binary | std::ios::ate);
  const bool wal_holds_pages = wal && wal.tellg() > 0;
  if (count_valid && page_count > 0 && uint64_t{page_count} * page_size > size && !wal_holds_pages) {
    throw TraceError(TraceErrorCode::kTruncated,
                     path_ + ": truncated: " + std::to_string(size) + " bytes, header says " +
                         std::to_string(uint64_t{page_count} * page_size));
  }
}

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
    throw TraceError(TraceErrorCode::kNotATrace,
                     path_ + ": an SQLite file but not an Accordion trace (no meta table)");
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
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(text) < 1) {
    throw TraceError(TraceErrorCode::kUnknownVersion,
                     path_ + ": schema_version '" + text + "' is not a version number");
  }
  schema_version_ = std::stoi(text);
  if (schema_version_ > kTraceSchemaVersion) {
    throw TraceError(TraceErrorCode::kNewerVersion,
                     path_ + ": schema version " + text + " is newer than this toolkit reads (" +
                         std::to_string(kTraceSchemaVersion) + "); upgrade accordion");
  }
  for (const TableSpec& table : TraceTables()) {
    if (!db_->TableExists(table.name)) {
      throw TraceError(TraceErrorCode::kMissingTable,
                       path_ + ": missing table '" + table.name + "'");
    }
    for (const char* column : table.columns) {
      if (!db_->ColumnExists(table.name, column)) {
        throw TraceError(TraceErrorCode::kMissingColumn,
                         path_ + ": table '" + table.name + "' has no column '" + column + "'");
      }
    }
  }
}

void TraceReader::LoadRun() {
  SqliteStatement st(*db_,
                     "SELECT status, synthetic, model, dataset, train_samples, scheme, policy, "
                     "level_low, level_high, eta, interval, world_size, backend, device, "
                     "batch_size, epochs_planned, seed, config_json, versions_json, started_utc, "
                     "finished_utc FROM run ORDER BY id");
  if (!st.Step()) throw TraceError(TraceErrorCode::kMissingRow, path_ + ": the run table is empty");
  RunInfo r;
  const std::string status = st.Text(0, "run.status");
  const auto parsed_status = ParseRunStatus(status);
  if (!parsed_status) {
    throw TraceError(TraceErrorCode::kInvalidValue, path_ + ": run.status '" + status + "' is unknown");
  }
  r.status = *parsed_status;
  r.synthetic = st.Int(1, "run.synthetic") != 0;
  r.model = st.Text(2, "run.model");
  r.dataset = st.Text(3, "run.dataset");
  r.train_samples = st.Int(4, "run.train_samples");
  const std::string scheme = st.Text(5, "run.scheme");
  const auto parsed_scheme = ParseScheme(scheme);
  if (!parsed_scheme) {
    throw TraceError(TraceErrorCode::kInvalidValue, path_ + ": run.scheme '" + scheme + "' is unknown");
  }
  r.scheme = *parsed_scheme;
  const std::string policy = st.Text(6, "run.policy");
  const auto parsed_policy = ParsePolicy(policy);
  if (!parsed_policy) {
    throw TraceError(TraceErrorCode::kInvalidValue, path_ + ": run.policy '" + policy + "' is unknown");
  }
  r.policy = *parsed_policy;
  r.level_low = st.Real(7, "run.level_low");
  r.level_high = st.Real(8, "run.level_high");
  r.eta = st.Real(9, "run.eta");
  const int64_t interval = st.Int(10, "run.interval");
  const int64_t world = st.Int(11, "run.world_size");
  r.backend = st.Text(12, "run.backend");
  r.device = st.Text(13, "run.device");
  r.batch_size = st.Int(14, "run.batch_size");
  const int64_t planned = st.Int(15, "run.epochs_planned");
  r.seed = st.Int(16, "run.seed");
  r.config_json = st.Text(17, "run.config_json");
  r.versions_json = st.Text(18, "run.versions_json");
  r.started_utc = st.Text(19, "run.started_utc");
  r.finished_utc = st.IsNull(20) ? "" : st.Text(20, "run.finished_utc");
  SqliteStatement id(*db_, "SELECT value FROM meta WHERE key='run_id'");
  if (id.Step() && !id.IsNull(0)) r.run_id = id.Text(0, "meta.run_id");
  // Keep the int fields inside int range before narrowing them.
  constexpr int64_t kMaxCount = 1 << 30;
  if (interval < 1 || interval > kMaxCount || world < 1 || world > kMaxCount || planned < 1 ||
      planned > kMaxCount) {
    throw TraceError(TraceErrorCode::kInvalidValue,
                     path_ + ": run: interval, world_size and epochs_planned must be in [1, 2^30]");
  }
  r.interval = static_cast<int>(interval);
  r.world_size = static_cast<int>(world);
  r.epochs_planned = static_cast<int>(planned);
  if (st.Step()) {
    throw TraceError(TraceErrorCode::kInconsistent, path_ + ": the run table has more than one row");
  }
  try {
    CheckRun(r);
  } catch (const TraceError& e) {
    throw TraceError(e.code(), path_ + ": " + e.what());
  }
  run_ = r;
}

void TraceReader::LoadLayers() {
  SqliteStatement st(*db_,
                     "SELECT layer_id, name, shape, numel, compressible, floats_dense, "
                     "floats_low, floats_high FROM layers ORDER BY layer_id");
  while (st.Step()) {
    LayerInfo l;
    const int64_t id = st.Int(0, "layers.layer_id");
    if (id < 0 || id > (1 << 24)) {
      throw TraceError(TraceErrorCode::kOutOfRange,
                       path_ + ": layers.layer_id " + std::to_string(id) + " is out of range");
    }
    l.layer_id = static_cast<int>(id);
    l.name = st.Text(1, "layers.name");
    l.shape = ParseShape(st.Text(2, "layers.shape"));
    l.numel = st.Int(3, "layers.numel");
    l.compressible = st.Int(4, "layers.compressible") != 0;
    l.floats_dense = st.Real(5, "layers.floats_dense");
    l.floats_low = st.Real(6, "layers.floats_low");
    l.floats_high = st.Real(7, "layers.floats_high");
    try {
      CheckLayer(l, static_cast<int>(layers_.size()));
    } catch (const TraceError& e) {
      throw TraceError(e.code(), path_ + ": " + e.what());
    }
    layers_.push_back(std::move(l));
  }
  if (layers_.empty()) throw TraceError(TraceErrorCode::kMissingRow, path_ + ": no layers");
}

namespace {

// Narrows an integer column to int after a range check.
int SmallInt(const SqliteStatement& st, int column, const char* what, const std::string& path) {
  const int64_t v = st.Int(column, what);
  if (v < -(int64_t{1} << 30) || v > (int64_t{1} << 30)) {
    throw TraceError(TraceErrorCode::kOutOfRange,
                     path + ": " + what + " " + std::to_string(v) + " is out of range");
  }
  return static_cast<int>(v);
}

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

}  // namespace

std::vector<EpochRecord> TraceReader::Epochs() {
  std::vector<EpochRecord> out;
  SqliteStatement st(*db_,
                     "SELECT epoch, lr, batch_size, iterations, critical, model_grad_norm, "
                     "train_loss, train_acc, test_loss, test_acc, compute_s, compress_s, comm_s, "
                     "total_s, floats_sent FROM epochs ORDER BY epoch");
  Checked(path_, [&] {
    while (st.Step()) {
      EpochRecord e;
      e.epoch = SmallInt(st, 0, "epochs.epoch", path_);
      e.lr = st.Real(1, "epochs.lr");
      e.batch_size = st.Int(2, "epochs.batch_size");
      e.iterations = st.Int(3, "epochs.iterations");
      e.critical = st.Int(4, "epochs.critical") != 0;
      e.model_grad_norm = st.Real(5, "epochs.model_grad_norm");
      e.train_loss = st.Real(6, "epochs.train_loss");
      e.train_acc = st.Real(7, "epochs.train_acc");
      e.test_loss = st.Real(8, "epochs.test_loss");
      e.test_acc = st.Real(9, "epochs.test_acc");
      e.compute_s = st.Real(10, "epochs.compute_s");
      e.compress_s = st.Real(11, "epochs.compress_s");
      e.comm_s = st.Real(12, "epochs.comm_s");
      e.total_s = st.Real(13, "epochs.total_s");
      e.floats_sent = st.Real(14, "epochs.floats_sent");
      CheckEpoch(e, run_);
      if (!out.empty() && e.epoch == out.back().epoch) {
        throw TraceError(TraceErrorCode::kInconsistent,
                         "epochs: epoch " + std::to_string(e.epoch) + " appears twice");
      }
      out.push_back(e);
    }
  });
  return out;
}

std::vector<EpochLayerRecord> TraceReader::EpochLayers() {
  std::vector<EpochLayerRecord> out;
  SqliteStatement st(*db_,
                     "SELECT epoch, layer_id, grad_norm, ratio, critical, level, floats_sent "
                     "FROM epoch_layers ORDER BY epoch, layer_id");
  Checked(path_, [&] {
    while (st.Step()) {
      EpochLayerRecord r;
      r.epoch = SmallInt(st, 0, "epoch_layers.epoch", path_);
      r.layer_id = SmallInt(st, 1, "epoch_layers.layer_id", path_);
      r.grad_norm = st.Real(2, "epoch_layers.grad_norm");
      r.ratio = st.OptionalReal(3, "epoch_layers.ratio");
      r.critical = st.Int(4, "epoch_layers.critical") != 0;
      r.level = st.Real(5, "epoch_layers.level");
      r.floats_sent = st.Real(6, "epoch_layers.floats_sent");
      CheckEpochLayer(r, run_, num_layers());
      out.push_back(r);
    }
  });
  return out;
}

std::vector<HessianRecord> TraceReader::Hessian() {
  std::vector<HessianRecord> out;
  SqliteStatement st(*db_,
                     "SELECT epoch, block, eigenvalue, iterations, seconds FROM hessian "
                     "ORDER BY epoch, block");
  Checked(path_, [&] {
    while (st.Step()) {
      HessianRecord r;
      r.epoch = SmallInt(st, 0, "hessian.epoch", path_);
      r.block = st.Text(1, "hessian.block");
      r.eigenvalue = st.Real(2, "hessian.eigenvalue");
      r.iterations = SmallInt(st, 3, "hessian.iterations", path_);
      r.seconds = st.Real(4, "hessian.seconds");
      CheckHessian(r, run_);
      out.push_back(r);
    }
  });
  return out;
}

void TraceReader::ForEachIteration(const std::function<void(const IterationRecord&)>& fn) {
  SqliteStatement st(*db_,
                     "SELECT epoch, iteration, rank, forward_s, backward_s, compress_s, comm_s, "
                     "total_s FROM iterations ORDER BY epoch, iteration, rank");
  Checked(path_, [&] {
    while (st.Step()) {
      IterationRecord r;
      r.epoch = SmallInt(st, 0, "iterations.epoch", path_);
      r.iteration = st.Int(1, "iterations.iteration");
      r.rank = SmallInt(st, 2, "iterations.rank", path_);
      r.forward_s = st.Real(3, "iterations.forward_s");
      r.backward_s = st.Real(4, "iterations.backward_s");
      r.compress_s = st.Real(5, "iterations.compress_s");
      r.comm_s = st.Real(6, "iterations.comm_s");
      r.total_s = st.Real(7, "iterations.total_s");
      CheckIteration(r, run_);
      fn(r);
    }
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
  SqliteStatement st(*db_,
                     "SELECT epoch, iteration, rank, layer_id, offset_s FROM grad_ready" + StepFilter(step) +
                         " ORDER BY epoch, iteration, rank, layer_id");
  BindStep(st, step);
  Checked(path_, [&] {
    while (st.Step()) {
      GradReadyRecord r;
      r.epoch = SmallInt(st, 0, "grad_ready.epoch", path_);
      r.iteration = st.Int(1, "grad_ready.iteration");
      r.rank = SmallInt(st, 2, "grad_ready.rank", path_);
      r.layer_id = SmallInt(st, 3, "grad_ready.layer_id", path_);
      r.offset_s = st.Real(4, "grad_ready.offset_s");
      CheckGradReady(r, run_, num_layers());
      fn(r);
    }
  });
}

void TraceReader::ForEachCollectiveWhere(const std::optional<StepKey>& step,
                                        const std::function<void(const CollectiveRecord&)>& fn) {
  SqliteStatement st(*db_,
                     "SELECT epoch, iteration, rank, seq, op, bucket, tag, bytes, start_s, "
                     "duration_s FROM collectives" +
                         StepFilter(step) + " ORDER BY epoch, iteration, rank, seq");
  BindStep(st, step);
  Checked(path_, [&] {
    while (st.Step()) {
      CollectiveRecord r;
      r.epoch = SmallInt(st, 0, "collectives.epoch", path_);
      r.iteration = st.Int(1, "collectives.iteration");
      r.rank = SmallInt(st, 2, "collectives.rank", path_);
      r.seq = SmallInt(st, 3, "collectives.seq", path_);
      const std::string op = st.Text(4, "collectives.op");
      const auto parsed = ParseCollectiveOp(op);
      if (!parsed) {
        throw TraceError(TraceErrorCode::kInvalidValue,
                         "collectives: op '" + op + "' is not allreduce, allgather or broadcast");
      }
      r.op = *parsed;
      r.bucket = SmallInt(st, 5, "collectives.bucket", path_);
      r.tag = st.Text(6, "collectives.tag");
      r.bytes = st.Int(7, "collectives.bytes");
      r.start_s = st.Real(8, "collectives.start_s");
      r.duration_s = st.Real(9, "collectives.duration_s");
      CheckCollective(r, run_);
      fn(r);
    }
  });
}

void TraceReader::ForEachRow(const std::string& table,
                             const std::function<void(const std::vector<Cell>&)>& fn) {
  const TableSpec* spec = nullptr;
  for (const TableSpec& t : TraceTables()) {
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
  for (const TableSpec& spec : TraceTables()) known = known || table == spec.name;
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
