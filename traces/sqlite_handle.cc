#include "traces/sqlite_handle.h"

#include <sqlite3.h>

namespace accordion {

namespace {

TraceErrorCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return TraceErrorCode::kNotSqlite;
    case SQLITE_CORRUPT:
      return TraceErrorCode::kCorrupt;
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return TraceErrorCode::kNotFound;
    case SQLITE_READONLY:
      return TraceErrorCode::kNotWritable;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return TraceErrorCode::kBusy;
    default:
      return TraceErrorCode::kIo;
  }
}

}  // namespace

SqliteDb::SqliteDb(const std::string& path, Mode mode) : path_(path) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case Mode::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Mode::kReadWrite:
      flags |= SQLITE_OPEN_READWRITE;
      break;
    case Mode::kCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw TraceError(CodeFor(rc), path + ": cannot open: " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  // A busy writer (the trainer) must not make readers fail at once.
  sqlite3_busy_timeout(db_, 5000);
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

void SqliteDb::Fail(int rc, const std::string& context) const {
  if ((rc & 0xff) == SQLITE_FULL) {
    throw TraceError(TraceErrorCode::kIo, path_ + ": disk full; what was committed before stays readable");
  }
  const char* msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  throw TraceError(CodeFor(rc), path_ + ": " + context + ": " + msg);
}

void SqliteDb::Exec(const std::string& sql) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) Fail(rc, "SQL failed");
}

bool SqliteDb::TableExists(const std::string& table) {
  SqliteStatement st(*this, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1");
  st.Bind(1, table);
  return st.Step();
}

bool SqliteDb::ColumnExists(const std::string& table, const std::string& column) {
  // pragma_table_info takes the table name as a bound argument.
  SqliteStatement st(*this, "SELECT 1 FROM pragma_table_info(?1) WHERE name=?2");
  st.Bind(1, table).Bind(2, column);
  return st.Step();
}

SqliteStatement::SqliteStatement(SqliteDb& db, const std::string& sql) : db_(db), sql_(sql) {
  const int rc = sqlite3_prepare_v2(db.raw(), sql.c_str(), -1, &stmt_, nullptr);
  if (rc != SQLITE_OK) db_.Fail(rc, "cannot prepare query");
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
SqliteStatement& SqliteStatement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}
SqliteStatement& SqliteStatement::Bind(int index, const std::string& value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}
SqliteStatement& SqliteStatement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}
SqliteStatement& SqliteStatement::Bind(int index, std::optional<double> value) {
  return value ? Bind(index, *value) : BindNull(index);
}

bool SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.Fail(rc, "query failed");
}

void SqliteStatement::Execute() {
  Step();
  Reset();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool SqliteStatement::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

int64_t SqliteStatement::Int(int column, const char* what) const {
  if (sqlite3_column_type(stmt_, column) != SQLITE_INTEGER) {
    throw TraceError(TraceErrorCode::kInvalidValue, db_.path() + ": " + what + " is not an integer");
  }
  return sqlite3_column_int64(stmt_, column);
}

double SqliteStatement::Real(int column, const char* what) const {
  const int type = sqlite3_column_type(stmt_, column);
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) {
    // SQLite stores NaN as NULL, so a NULL here is most often a NaN written.
    throw TraceError(TraceErrorCode::kInvalidValue,
                     db_.path() + ": " + what + (type == SQLITE_NULL ? " is NULL or NaN" : " is not a number"));
  }
  return sqlite3_column_double(stmt_, column);
}

std::optional<double> SqliteStatement::OptionalReal(int column, const char* what) const {
  if (IsNull(column)) return std::nullopt;
  return Real(column, what);
}

Cell SqliteStatement::Value(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER:
      return Cell{static_cast<int64_t>(sqlite3_column_int64(stmt_, column))};
    case SQLITE_FLOAT:
      return Cell{sqlite3_column_double(stmt_, column)};
    case SQLITE_NULL:
      return Cell{};
    default: {
      const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
      return Cell{std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))};
    }
  }
}

std::string SqliteStatement::Text(int column, const char* what) const {
  if (sqlite3_column_type(stmt_, column) != SQLITE_TEXT) {
    throw TraceError(TraceErrorCode::kInvalidValue, db_.path() + ": " + what + " is not text");
  }
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

SqliteTransaction::SqliteTransaction(SqliteDb& db) : db_(db) { db_.Exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!done_) sqlite3_exec(db_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::Commit() {
  db_.Exec("COMMIT");
  done_ = true;
}

}  // namespace accordion
