// Runs SQL on a trace file, for tests that plant or remove rows, or bring a
// file to another schema version, to see what the tools make of it.
#ifndef ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_
#define ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion::test_support {

// Executes `sql` (one or more statements) on the SQLite file at `path`;
// throws std::runtime_error with SQLite's message when it fails.
void ExecuteSql(const std::string& path, const std::string& sql);

// The integer in the first column of the first row `sql` returns (a
// COUNT(*)); throws std::runtime_error when there is none.
int64_t QueryInt(const std::string& path, const std::string& sql);

// Copies a schema v1 trace (the checked-in samples) to `to`, brought to v2
// as ALTER TABLE would, with `probe` as its network probe: a trace a replay
// anchors on.
void CopyWithNetworkProbe(const std::string& from, const std::string& to, const std::vector<NetworkProbeRecord>& probe);

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_
