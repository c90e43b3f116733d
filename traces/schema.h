// The trace schema: its version, its DDL and the columns a reader requires.
//
// One SQLite file per run. Bump kTraceSchemaVersion on any change a reader of
// the previous version could misread, and document it in docs/trace-format.md.
// A reader reads every version up to its own: a table or column added later
// is marked with the version that added it (trace_tables.cc), a file of an
// earlier version is read without it, and its field keeps the documented
// default. Writers write the current version (a resumed run, its file's).
//
//   v1  the first version.
//   v2  run.writer and run.ranks_per_node; the network_probe table.
//   v3  epochs.train_loss, train_acc, test_loss and test_acc may be NULL: a
//       metric the run did not record (kNotRecorded, records.h).
//   v4  policies adaqs and smith; run.msdr_factor; epochs.schedule_lr;
//       epoch_layers.grad_mean_norm and grad_std (NULL: not recorded); the
//       error_profile table.
//
// Thread-safe: the tables and DDL are built once, on first use (function-local
// statics), and never change; any thread may call these at any time.
#ifndef ACCORDION_TRACES_SCHEMA_H_
#define ACCORDION_TRACES_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

inline constexpr int kTraceSchemaVersion = 4;
// PRAGMA application_id of every trace: "ACRD" in ASCII.
inline constexpr int32_t kTraceApplicationId = 0x41435244;

struct TableSpec {
  const char* name;
  const char* key;                   // the primary key, as an ORDER BY list
  std::vector<const char*> columns;  // every column a reader needs
};

// The tables of schema `version`, in creation order, each with the columns
// that version has.
const std::vector<TableSpec>& TraceTables(int version = kTraceSchemaVersion);

// DDL creating an empty trace of schema `version`.
const std::string& TraceSchemaSql(int version = kTraceSchemaVersion);

}  // namespace accordion

#endif  // ACCORDION_TRACES_SCHEMA_H_
