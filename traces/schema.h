// The trace schema: its version, its DDL and the columns a reader requires.
//
// One SQLite file per run. Bump kTraceSchemaVersion on any change a reader of
// the previous version could misread, and document it in docs/trace-format.md.
#ifndef ACCORDION_TRACES_SCHEMA_H_
#define ACCORDION_TRACES_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

inline constexpr int kTraceSchemaVersion = 1;
// PRAGMA application_id of every trace: "ACRD" in ASCII.
inline constexpr int32_t kTraceApplicationId = 0x41435244;

struct TableSpec {
  const char* name;
  const char* key;                   // the primary key, as an ORDER BY list
  std::vector<const char*> columns;  // every column a reader needs
};

// The tables of kTraceSchemaVersion, in creation order.
const std::vector<TableSpec>& TraceTables();

// DDL creating an empty trace of kTraceSchemaVersion.
const std::string& TraceSchemaSql();

}  // namespace accordion

#endif  // ACCORDION_TRACES_SCHEMA_H_
