#include "tests/support/trace_sql.h"

#include <sqlite3.h>

#include <filesystem>
#include <stdexcept>

#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace accordion::test_support {

void ExecuteSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + path);
  }
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("SQL failed on " + path + ": " + message + " in: " + sql);
}

int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + path);
  }
  sqlite3_stmt* st = nullptr;
  const bool row = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
  const int64_t value = row ? sqlite3_column_int64(st, 0) : 0;
  const std::string message = sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (!row) throw std::runtime_error("no row from " + sql + " on " + path + ": " + message);
  return value;
}

void CopyWithNetworkProbe(const std::string& from, const std::string& to,
                          const std::vector<NetworkProbeRecord>& probe) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  ExecuteSql(to,
             "ALTER TABLE run ADD COLUMN writer TEXT NOT NULL DEFAULT 'accordion-train'; "
             "ALTER TABLE run ADD COLUMN ranks_per_node INTEGER NOT NULL DEFAULT 2; "
             "CREATE TABLE network_probe (op TEXT NOT NULL, bytes INTEGER NOT NULL, repeat INTEGER NOT NULL, "
             "seconds REAL NOT NULL, PRIMARY KEY (op, bytes, repeat)) WITHOUT ROWID; "
             "UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  const int epochs = TraceReader::Open(to)->run().epochs_planned;
  auto writer = TraceWriter::Resume(to, epochs);
  writer->WriteNetworkProbe(probe);
  writer->Finish(RunStatus::kComplete);
}

std::vector<NetworkProbeRecord> ShapedTwoRankProbe(double gbps, int64_t burst_bytes) {
  std::vector<NetworkProbeRecord> probe;
  for (int64_t size = 4096; size <= (16 << 20); size *= 4) {
    const double alpha = 50e-6, per_byte = size <= burst_bytes ? 0.0 : 8 / (gbps * 1e9);
    for (int r = 0; r < 5; ++r) {
      probe.push_back({CollectiveOp::kAllReduce, size, r, 2 * alpha + per_byte * static_cast<double>(size)});
      probe.push_back({CollectiveOp::kAllGather, size / 2, r, alpha + per_byte * static_cast<double>(size / 2)});
    }
  }
  return probe;
}

}  // namespace accordion::test_support
