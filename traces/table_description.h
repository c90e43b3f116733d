// A trace table described once: each column's name, its SQL type, the record
// field it holds and the check its value must pass (ValueCheck,
// record_checks.h). The DDL, the INSERT, the
// SELECT, the row read and the per-column checks are all derived from that
// list, so a column is written in one place (traces/trace_tables.cc).
//
// Private to traces/. The SQL type and the bind/read code of a column follow
// from the C++ type of its field (ColumnType below):
//   int, int64_t          INTEGER (int is read back only within +-2^30)
//   bool                  INTEGER 0/1
//   double                REAL
//   std::optional<double> REAL or NULL
//   double, NullWhenNaN   REAL, NULL for NaN (a metric not recorded)
//   std::string           TEXT
//   Scheme, Policy, RunStatus, CollectiveOp   TEXT, their ToString() names
//   std::vector<int64_t>  TEXT, the shape form "64,3,3,3" (FormatShape)
//
// Thread safety: a Table is immutable once built and may be used from several
// threads at once; the statements it binds and reads are one thread's each.
#ifndef ACCORDION_TRACES_TABLE_DESCRIPTION_H_
#define ACCORDION_TRACES_TABLE_DESCRIPTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/record_checks.h"
#include "traces/records.h"
#include "traces/sqlite_handle.h"

namespace accordion {

// Trace schema versions a table or column exists in start at its `since`:
// a file of version N has the columns with since <= N, and a reader of a
// later version leaves the others at their record's default.
inline constexpr int kAllVersions = 1 << 30;

// One column as the DDL declares it.
struct ColumnLayout {
  std::string name;
  const char* sql_type;  // INTEGER, REAL or TEXT
  bool nullable;
  int since = 1;  // the first schema version that has it
  // The first schema version in which a nullable column may hold NULL;
  // earlier versions declare it NOT NULL.
  int nullable_since = 1;
};

// What the DDL and the reader's structure check need of a table.
struct TableLayout {
  std::string name;
  std::vector<ColumnLayout> columns;  // in the order of the DDL
  std::vector<std::string> key;       // the primary key; two or more columns make it WITHOUT ROWID
  std::string key_check;              // a CHECK on a one-column key ("id = 1"), or ""
  int since = 1;                      // the first schema version that has it
};

// The columns of `table` that a file of schema `version` has.
std::vector<const ColumnLayout*> ColumnsIn(const TableLayout& table, int version);

// "CREATE TABLE ... (...)" without the semicolon, laid out as trace schema v1
// has always been written (names and types in aligned columns), with the
// columns schema `version` has (later ones come last, as ALTER TABLE would
// add them).
std::string CreateTableSql(const TableLayout& table, int version = kAllVersions);
// The key as an ORDER BY list: "epoch, layer_id".
std::string KeyList(const TableLayout& table);

// Per-type column code, chosen by the field's C++ type. `what` names the
// column in errors ("epochs.lr"), `where` the row ("epochs row for epoch 3");
// Check applies a ValueCheck to the value as it is stored.
template <typename T>
struct ColumnType;

template <>
struct ColumnType<int> {
  static constexpr const char* kSqlType = "INTEGER";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, int value);
  static int Read(const SqliteStatement& st, int column, const char* what);
  static void Check(int value, ValueCheck check, const std::string& where, const std::string& name);
};

template <>
struct ColumnType<int64_t> {
  static constexpr const char* kSqlType = "INTEGER";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, int64_t value);
  static int64_t Read(const SqliteStatement& st, int column, const char* what);
  static void Check(int64_t value, ValueCheck check, const std::string& where, const std::string& name);
};

template <>
struct ColumnType<bool> {
  static constexpr const char* kSqlType = "INTEGER";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, bool value);
  static bool Read(const SqliteStatement& st, int column, const char* what);
  static void Check(bool value, ValueCheck check, const std::string& where, const std::string& name);
};

template <>
struct ColumnType<double> {
  static constexpr const char* kSqlType = "REAL";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, double value);
  static double Read(const SqliteStatement& st, int column, const char* what);
  static void Check(double value, ValueCheck check, const std::string& where, const std::string& name);
};

template <>
struct ColumnType<std::optional<double>> {
  static constexpr const char* kSqlType = "REAL";
  static constexpr bool kNullable = true;
  static void Bind(SqliteStatement& st, int index, const std::optional<double>& value);
  static std::optional<double> Read(const SqliteStatement& st, int column, const char* what);
  static void Check(const std::optional<double>& value, ValueCheck check, const std::string& where,
                    const std::string& name);
};

template <>
struct ColumnType<std::string> {
  static constexpr const char* kSqlType = "TEXT";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, const std::string& value);
  static std::string Read(const SqliteStatement& st, int column, const char* what);
  static void Check(const std::string& value, ValueCheck check, const std::string& where, const std::string& name);
};

template <>
struct ColumnType<std::vector<int64_t>> {
  static constexpr const char* kSqlType = "TEXT";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, const std::vector<int64_t>& value);
  static std::vector<int64_t> Read(const SqliteStatement& st, int column, const char* what);
  static void Check(const std::vector<int64_t>& value, ValueCheck check, const std::string& where,
                    const std::string& name);
};

// Enums travel as their names; an unknown name read back is kInvalidValue.
template <typename Enum>
struct EnumColumnType {
  static constexpr const char* kSqlType = "TEXT";
  static constexpr bool kNullable = false;
  static void Bind(SqliteStatement& st, int index, Enum value);
  static Enum Read(const SqliteStatement& st, int column, const char* what);
  static void Check(Enum value, ValueCheck check, const std::string& where, const std::string& name);
};
template <>
struct ColumnType<Scheme> : EnumColumnType<Scheme> {};
template <>
struct ColumnType<Policy> : EnumColumnType<Policy> {};
template <>
struct ColumnType<RunStatus> : EnumColumnType<RunStatus> {};
template <>
struct ColumnType<CollectiveOp> : EnumColumnType<CollectiveOp> {};

// Text that is stored as NULL while empty (run.finished_utc).
struct NullWhenEmptyText {
  static constexpr const char* kSqlType = "TEXT";
  static constexpr bool kNullable = true;
  static void Bind(SqliteStatement& st, int index, const std::string& value);
  static std::string Read(const SqliteStatement& st, int column, const char* what);
  static void Check(const std::string& value, ValueCheck check, const std::string& where, const std::string& name);
};

// A metric that may be missing (epochs.test_acc): NaN in the record (not
// recorded) is NULL in the file and back; any other value passes `check`.
struct NullWhenNaN {
  static constexpr const char* kSqlType = "REAL";
  static constexpr bool kNullable = true;
  static void Bind(SqliteStatement& st, int index, double value);
  static double Read(const SqliteStatement& st, int column, const char* what);
  static void Check(double value, ValueCheck check, const std::string& where, const std::string& name);
};

// One column of a table of `Record`s; made by Column() and its siblings.
template <typename Record>
struct TableColumn {
  ColumnLayout layout;
  std::function<void(SqliteStatement&, int index, const Record&)> bind;
  std::function<void(const SqliteStatement&, int column, const char* what, Record&)> read;
  std::function<void(const Record&, const std::string& where)> check;
};

// A column holding `Record::*field`, coded as `Type` says.
template <typename Type, typename Record, typename T>
TableColumn<Record> ColumnOf(const char* name, T Record::*field, ValueCheck check) {
  TableColumn<Record> c;
  c.layout = {name, Type::kSqlType, Type::kNullable};
  c.bind = [field](SqliteStatement& st, int index, const Record& r) { Type::Bind(st, index, r.*field); };
  c.read = [field](const SqliteStatement& st, int column, const char* what, Record& r) {
    r.*field = Type::Read(st, column, what);
  };
  const std::string column_name = name;
  c.check = [field, check, column_name](const Record& r, const std::string& where) {
    Type::Check(r.*field, check, where, column_name);
  };
  return c;
}

template <typename Record, typename T>
TableColumn<Record> Column(const char* name, T Record::*field, ValueCheck check = ValueCheck::kAny) {
  return ColumnOf<ColumnType<T>>(name, field, check);
}

template <typename Record>
TableColumn<Record> NullWhenEmptyColumn(const char* name, std::string Record::*field) {
  return ColumnOf<NullWhenEmptyText>(name, field, ValueCheck::kAny);
}

// A double column stored as NULL where the record holds NaN (NullWhenNaN),
// from schema `version` on: earlier versions declare it NOT NULL.
template <typename Record>
TableColumn<Record> NullWhenNaNColumn(int version, const char* name, double Record::*field, ValueCheck check) {
  TableColumn<Record> c = ColumnOf<NullWhenNaN>(name, field, check);
  c.layout.nullable_since = version;
  return c;
}

// `column` as added by schema `version`: files of earlier versions lack it.
template <typename Record>
TableColumn<Record> Since(int version, TableColumn<Record> column) {
  column.layout.since = version;
  return column;
}

// A key column with no field: every row stores `value` (run.id, always 1).
template <typename Record>
TableColumn<Record> ConstantColumn(const char* name, int64_t value) {
  TableColumn<Record> c;
  c.layout = {name, "INTEGER", false};
  c.bind = [value](SqliteStatement& st, int index, const Record&) { st.Bind(index, value); };
  c.read = [](const SqliteStatement&, int, const char*, Record&) {};
  c.check = [](const Record&, const std::string&) {};
  return c;
}

// A table of `Record`s and the SQL derived from its columns. The SQL and the
// row code take the file's schema version (default: the current one, every
// column): a column a version lacks is neither written nor read, and its
// field keeps the record's default.
template <typename Record>
class Table {
 public:
  Table(std::string name, std::vector<std::string> key, std::vector<TableColumn<Record>> columns,
        std::string key_check = "", int since = 1)
      : columns_(std::move(columns)) {
    layout_.name = std::move(name);
    layout_.key = std::move(key);
    layout_.key_check = std::move(key_check);
    layout_.since = since;
    for (const TableColumn<Record>& c : columns_) {
      layout_.columns.push_back(c.layout);
      what_.push_back(layout_.name + "." + c.layout.name);
    }
  }

  const TableLayout& layout() const { return layout_; }
  // Whether a file of schema `version` has this table.
  bool In(int version) const { return layout_.since <= version; }
  std::string InsertSql(int version = kAllVersions) const {
    std::string names, params;
    int n = 0;
    for (const TableColumn<Record>& c : columns_) {
      if (c.layout.since > version) continue;
      ++n;
      names += (n > 1 ? ", " : "") + c.layout.name;
      params += (n > 1 ? ", ?" : "?") + std::to_string(n);
    }
    return "INSERT INTO " + layout_.name + " (" + names + ") VALUES (" + params + ")";
  }
  // Every column in key order; `filter` (" WHERE ...") goes before ORDER BY.
  std::string SelectSql(const std::string& filter = "", int version = kAllVersions) const {
    std::string names;
    for (const TableColumn<Record>& c : columns_) {
      if (c.layout.since <= version) names += (names.empty() ? "" : ", ") + c.layout.name;
    }
    return "SELECT " + names + " FROM " + layout_.name + filter + " ORDER BY " + KeyList(layout_);
  }

  // Binds `row` to a statement made from InsertSql(version).
  void Bind(SqliteStatement& st, const Record& row, int version = kAllVersions) const {
    int index = 0;
    for (const TableColumn<Record>& c : columns_) {
      if (c.layout.since <= version) c.bind(st, ++index, row);
    }
  }
  // Reads the current row of a statement made from SelectSql(filter, version).
  Record Read(const SqliteStatement& st, int version = kAllVersions) const {
    Record row;
    int index = 0;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i].layout.since <= version) columns_[i].read(st, index++, what_[i].c_str(), row);
    }
    return row;
  }
  // Runs every column's ValueCheck, in column order. A column the row's
  // version lacks holds its default, which passes its check.
  void CheckValues(const Record& row, const std::string& where) const {
    for (const TableColumn<Record>& c : columns_) c.check(row, where);
  }

 private:
  TableLayout layout_;
  std::vector<TableColumn<Record>> columns_;
  std::vector<std::string> what_;
};

}  // namespace accordion

#endif  // ACCORDION_TRACES_TABLE_DESCRIPTION_H_
