#include "traces/schema.h"

#include "traces/trace_tables.h"

namespace accordion {

const std::vector<TableSpec>& TraceTables() {
  // TableSpec points at strings: the key lists must outlive it like the layouts do.
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const TableLayout* layout : TraceTableLayouts()) out.push_back(KeyList(*layout));
    return out;
  }();
  static const std::vector<TableSpec> tables = [] {
    std::vector<TableSpec> out;
    for (size_t i = 0; i < TraceTableLayouts().size(); ++i) {
      const TableLayout& layout = *TraceTableLayouts()[i];
      TableSpec spec{layout.name.c_str(), keys[i].c_str(), {}};
      for (const ColumnLayout& column : layout.columns) spec.columns.push_back(column.name.c_str());
      out.push_back(spec);
    }
    return out;
  }();
  return tables;
}

const std::string& TraceSchemaSql() {
  static const std::string sql = [] {
    std::string out = "\n";
    for (const TableLayout* layout : TraceTableLayouts()) out += CreateTableSql(*layout) + ";\n";
    return out;
  }();
  return sql;
}

}  // namespace accordion
