// Opening a trace must leave the SQLite locks of the process's other
// connections to it alone. POSIX record locks belong to the process, and
// closing any descriptor of the file drops all of them: a reader that read
// the header through a stream of its own, and closed it, silently released
// the read lock of another thread's open transaction on the same trace, so
// a writer in another process could take the file from under it.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>

#include "tests/support/synthetic_trace.h"
#include "tests/support/temp_dir_test.h"
#include "tests/support/trace_sql.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

namespace accordion {
namespace {

using TraceReaderLocks = test_support::TempDirTest;

// In another process (a fresh one: a forked child would inherit SQLite's
// own record of this process's locks and answer from it): whether an
// exclusive lock on `path` is refused at once, as it must be while this
// process reads. The sqlite3 shell exits 1 with "database is locked".
bool ExclusiveLockIsRefusedElsewhere(const std::string& path) {
  const int status = std::system(("sqlite3 '" + path + "' 'BEGIN EXCLUSIVE; COMMIT;' 2>/dev/null").c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) != 0;
}

TEST_F(TraceReaderLocks, OpeningATraceKeepsAnotherConnectionsReadLock) {
  if (std::system("sqlite3 -version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no sqlite3 shell (apt-get install sqlite3)";
  const std::string path = Path("t.trace");
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 3;
  synthetic::WriteSyntheticTrace(path, o);
  // A finished trace's mode: readers and a writer exclude each other.
  test_support::ExecuteSql(path, "PRAGMA journal_mode=DELETE");

  // Another connection of this process, in the middle of a read.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* read = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT * FROM epochs", -1, &read, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(read), SQLITE_ROW);
  ASSERT_TRUE(ExclusiveLockIsRefusedElsewhere(path)) << "the read must hold its lock to begin with";

  TraceReader::Open(path);  // opened and closed again
  ValidateTrace(path);
  EXPECT_TRUE(ExclusiveLockIsRefusedElsewhere(path)) << "opening a reader dropped the other read's lock";

  sqlite3_finalize(read);
  sqlite3_close(db);
  EXPECT_FALSE(ExclusiveLockIsRefusedElsewhere(path)) << "with the read over, the lock is free";
}

// A live trace whose tables are still only in its write-ahead log, copied
// without "<trace>-wal": the reader says what is missing, not "not an
// Accordion trace".
TEST_F(TraceReaderLocks, ALiveTraceCopiedWithoutItsWalSaysWhatIsMissing) {
  const std::string live = Path("live.trace"), copy = Path("copy.trace");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(live.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;"
                         "CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('schema_version', '3');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::filesystem::copy_file(live, copy);  // the main file alone, as a careless copy takes it
  try {
    TraceReader::Open(copy);
    ADD_FAILURE() << "a copy without its WAL opened";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("its " + copy + "-wal file is missing"), std::string::npos) << e.what();
  }
  sqlite3_close(db);
}

}  // namespace
}  // namespace accordion
