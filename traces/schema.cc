#include "traces/schema.h"

#include <stdexcept>

#include "traces/trace_tables.h"

namespace accordion {

const std::vector<TableSpec>& TraceTables(int version) {
  // TableSpec points at strings: the key lists must outlive it like the layouts do.
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const TableLayout* layout : TraceTableLayouts()) out.push_back(KeyList(*layout));
    return out;
  }();
  static const std::vector<std::vector<TableSpec>> by_version = [] {
    std::vector<std::vector<TableSpec>> out(kTraceSchemaVersion + 1);
    for (int v = 1; v <= kTraceSchemaVersion; ++v) {
      for (size_t i = 0; i < TraceTableLayouts().size(); ++i) {
        const TableLayout& layout = *TraceTableLayouts()[i];
        if (layout.since > v) continue;
        TableSpec spec{layout.name.c_str(), keys[i].c_str(), {}};
        for (const ColumnLayout* column : ColumnsIn(layout, v)) spec.columns.push_back(column->name.c_str());
        out[v].push_back(spec);
      }
    }
    return out;
  }();
  if (version < 1 || version > kTraceSchemaVersion) {
    throw std::out_of_range("no trace schema version " + std::to_string(version));
  }
  return by_version[version];
}

const std::string& TraceSchemaSql(int version) {
  static const std::vector<std::string> by_version = [] {
    std::vector<std::string> out(kTraceSchemaVersion + 1);
    for (int v = 1; v <= kTraceSchemaVersion; ++v) {
      out[v] = "\n";
      for (const TableLayout* layout : TraceTableLayouts()) {
        if (layout->since <= v) out[v] += CreateTableSql(*layout, v) + ";\n";
      }
    }
    return out;
  }();
  if (version < 1 || version > kTraceSchemaVersion) {
    throw std::out_of_range("no trace schema version " + std::to_string(version));
  }
  return by_version[version];
}

}  // namespace accordion
