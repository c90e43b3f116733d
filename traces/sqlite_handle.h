// RAII handles over the SQLite C API, private to traces/: every statement is
// prepared with parameters, every failure becomes a TraceError.
//
// Thread safety: not thread-safe. Connections are opened SQLITE_OPEN_NOMUTEX
// (SQLite's multi-thread mode): a SqliteDb and its statements belong to one
// thread at a time; separate SqliteDbs, on one file too, may run side by side.
#ifndef ACCORDION_TRACES_SQLITE_HANDLE_H_
#define ACCORDION_TRACES_SQLITE_HANDLE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "traces/cell.h"
#include "traces/trace_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace accordion {

class SqliteDb;

// A prepared statement. Bind indices start at 1, column indices at 0.
class SqliteStatement {
 public:
  SqliteStatement(SqliteDb& db, const std::string& sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, double value);
  SqliteStatement& Bind(int index, const std::string& value);
  SqliteStatement& BindNull(int index);
  SqliteStatement& Bind(int index, std::optional<double> value);

  // Advances to the next row; false when done.
  bool Step();
  // Runs a statement that returns no rows, then resets it for reuse.
  void Execute();
  void Reset();

  bool IsNull(int column) const;
  // Typed reads refuse values of the wrong storage class with kInvalidValue,
  // naming `what` (for example "epochs.lr"), so hostile files cannot make us
  // read text as numbers.
  int64_t Int(int column, const char* what) const;
  double Real(int column, const char* what) const;
  std::string Text(int column, const char* what) const;
  std::optional<double> OptionalReal(int column, const char* what) const;
  // The value as stored, whatever its storage class.
  Cell Value(int column) const;

 private:
  SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class SqliteDb {
 public:
  enum class Mode { kReadOnly, kReadWrite, kCreate };
  SqliteDb(const std::string& path, Mode mode);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements without parameters (DDL, pragmas).
  void Exec(const std::string& sql);
  bool TableExists(const std::string& table);
  bool ColumnExists(const std::string& table, const std::string& column);

  // Raises the TraceError matching SQLite's last error.
  [[noreturn]] void Fail(int rc, const std::string& context) const;

  sqlite3* raw() { return db_; }
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// Runs a scope in one transaction: commits in Commit(), rolls back otherwise.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  void Commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace accordion

#endif  // ACCORDION_TRACES_SQLITE_HANDLE_H_
