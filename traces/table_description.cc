#include "traces/table_description.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "traces/record_checks.h"
#include "traces/trace_error.h"

namespace accordion {

namespace {

// The name's value, or nullopt for a name no enumerator has.
std::optional<Scheme> ParseName(const std::string& name, Scheme*) { return ParseScheme(name); }
std::optional<Policy> ParseName(const std::string& name, Policy*) { return ParsePolicy(name); }
std::optional<RunStatus> ParseName(const std::string& name, RunStatus*) { return ParseRunStatus(name); }
std::optional<CollectiveOp> ParseName(const std::string& name, CollectiveOp*) { return ParseCollectiveOp(name); }

}  // namespace

std::vector<const ColumnLayout*> ColumnsIn(const TableLayout& table, int version) {
  std::vector<const ColumnLayout*> out;
  for (const ColumnLayout& c : table.columns) {
    if (c.since <= version) out.push_back(&c);
  }
  return out;
}

std::string KeyList(const TableLayout& table) {
  std::string out;
  for (size_t i = 0; i < table.key.size(); ++i) out += (i ? ", " : "") + table.key[i];
  return out;
}

std::string CreateTableSql(const TableLayout& table, int version) {
  const std::vector<const ColumnLayout*> columns = ColumnsIn(table, version);
  size_t name_width = 0, type_width = 0;
  for (const ColumnLayout* column : columns) {
    const ColumnLayout& c = *column;
    name_width = std::max(name_width, c.name.size());
    type_width = std::max(type_width, std::string(c.sql_type).size());
  }
  // A one-column key is declared on its column; INTEGER PRIMARY KEY is the
  // rowid and never NULL, any other type needs NOT NULL said.
  const bool inline_key = table.key.size() == 1;
  std::vector<std::string> lines;
  for (const ColumnLayout* column : columns) {
    const ColumnLayout& c = *column;
    std::string constraint;
    if (inline_key && c.name == table.key[0]) {
      constraint = "PRIMARY KEY";
      if (std::string(c.sql_type) != "INTEGER") constraint += " NOT NULL";
      if (!table.key_check.empty()) constraint += " CHECK (" + table.key_check + ")";
    } else if (!c.nullable || c.nullable_since > version) {
      constraint = "NOT NULL";
    }
    std::string line = "  " + c.name + std::string(name_width + 1 - c.name.size(), ' ') + c.sql_type;
    if (!constraint.empty()) {
      line += std::string(type_width + 1 - std::string(c.sql_type).size(), ' ') + constraint;
    }
    lines.push_back(line);
  }
  if (!inline_key) lines.push_back("  PRIMARY KEY (" + KeyList(table) + ")");
  std::string sql = "CREATE TABLE " + table.name + " (\n";
  for (size_t i = 0; i < lines.size(); ++i) sql += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  sql += inline_key ? ")" : ") WITHOUT ROWID";
  return sql;
}

void ColumnType<int>::Bind(SqliteStatement& st, int index, int value) { st.Bind(index, int64_t{value}); }

int ColumnType<int>::Read(const SqliteStatement& st, int column, const char* what) {
  const int64_t v = st.Int(column, what);
  // Far inside int, so sums and products of ids stay in range.
  if (v < -(int64_t{1} << 30) || v > (int64_t{1} << 30)) {
    throw TraceError(TraceErrorCode::kOutOfRange, std::string(what) + " " + std::to_string(v) + " is out of range");
  }
  return static_cast<int>(v);
}

void ColumnType<int>::Check(int value, ValueCheck check, const std::string& where, const std::string& name) {
  CheckValue(int64_t{value}, check, where, name);
}

void ColumnType<int64_t>::Bind(SqliteStatement& st, int index, int64_t value) { st.Bind(index, value); }

int64_t ColumnType<int64_t>::Read(const SqliteStatement& st, int column, const char* what) {
  return st.Int(column, what);
}

void ColumnType<int64_t>::Check(int64_t value, ValueCheck check, const std::string& where, const std::string& name) {
  CheckValue(value, check, where, name);
}

void ColumnType<bool>::Bind(SqliteStatement& st, int index, bool value) { st.Bind(index, int64_t{value ? 1 : 0}); }

bool ColumnType<bool>::Read(const SqliteStatement& st, int column, const char* what) {
  return st.Int(column, what) != 0;
}

void ColumnType<bool>::Check(bool value, ValueCheck check, const std::string& where, const std::string& name) {
  CheckValue(int64_t{value ? 1 : 0}, check, where, name);
}

void ColumnType<double>::Bind(SqliteStatement& st, int index, double value) { st.Bind(index, value); }

double ColumnType<double>::Read(const SqliteStatement& st, int column, const char* what) {
  return st.Real(column, what);
}

void ColumnType<double>::Check(double value, ValueCheck check, const std::string& where, const std::string& name) {
  CheckValue(value, check, where, name);
}

void ColumnType<std::optional<double>>::Bind(SqliteStatement& st, int index, const std::optional<double>& value) {
  st.Bind(index, value);
}

std::optional<double> ColumnType<std::optional<double>>::Read(const SqliteStatement& st, int column, const char* what) {
  return st.OptionalReal(column, what);
}

void ColumnType<std::optional<double>>::Check(const std::optional<double>& value, ValueCheck check,
                                              const std::string& where, const std::string& name) {
  if (value) CheckValue(*value, check, where, name);
}

void ColumnType<std::string>::Bind(SqliteStatement& st, int index, const std::string& value) { st.Bind(index, value); }

std::string ColumnType<std::string>::Read(const SqliteStatement& st, int column, const char* what) {
  return st.Text(column, what);
}

void ColumnType<std::string>::Check(const std::string& value, ValueCheck check, const std::string& where,
                                    const std::string& name) {
  CheckValue(value, check, where, name);
}

void ColumnType<std::vector<int64_t>>::Bind(SqliteStatement& st, int index, const std::vector<int64_t>& value) {
  st.Bind(index, FormatShape(value));
}

std::vector<int64_t> ColumnType<std::vector<int64_t>>::Read(const SqliteStatement& st, int column, const char* what) {
  return ParseShape(st.Text(column, what));
}

void ColumnType<std::vector<int64_t>>::Check(const std::vector<int64_t>& value, ValueCheck check,
                                             const std::string& where, const std::string& name) {
  CheckValue(FormatShape(value), check, where, name);
}

template <typename Enum>
void EnumColumnType<Enum>::Bind(SqliteStatement& st, int index, Enum value) {
  st.Bind(index, std::string(ToString(value)));
}

template <typename Enum>
Enum EnumColumnType<Enum>::Read(const SqliteStatement& st, int column, const char* what) {
  const std::string name = st.Text(column, what);
  const std::optional<Enum> value = ParseName(name, static_cast<Enum*>(nullptr));
  if (!value) {
    throw TraceError(TraceErrorCode::kInvalidValue, std::string(what) + " '" + name + "' is unknown");
  }
  return *value;
}

template <typename Enum>
void EnumColumnType<Enum>::Check(Enum value, ValueCheck check, const std::string& where, const std::string& name) {
  CheckValue(std::string(ToString(value)), check, where, name);
}

template struct EnumColumnType<Scheme>;
template struct EnumColumnType<Policy>;
template struct EnumColumnType<RunStatus>;
template struct EnumColumnType<CollectiveOp>;

void NullWhenNaN::Bind(SqliteStatement& st, int index, double value) {
  if (std::isnan(value)) {
    st.BindNull(index);
  } else {
    st.Bind(index, value);
  }
}

double NullWhenNaN::Read(const SqliteStatement& st, int column, const char* what) {
  return st.IsNull(column) ? std::numeric_limits<double>::quiet_NaN() : st.Real(column, what);
}

void NullWhenNaN::Check(double value, ValueCheck check, const std::string& where, const std::string& name) {
  if (!std::isnan(value)) CheckValue(value, check, where, name);
}

void NullWhenEmptyText::Bind(SqliteStatement& st, int index, const std::string& value) {
  if (value.empty()) {
    st.BindNull(index);
  } else {
    st.Bind(index, value);
  }
}

std::string NullWhenEmptyText::Read(const SqliteStatement& st, int column, const char* what) {
  return st.IsNull(column) ? std::string() : st.Text(column, what);
}

void NullWhenEmptyText::Check(const std::string& value, ValueCheck check, const std::string& where,
                              const std::string& name) {
  CheckValue(value, check, where, name);
}

}  // namespace accordion
