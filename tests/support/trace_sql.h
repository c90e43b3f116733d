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

// The probe 2 ranks make of a 25 us link at `gbps` behind a token-bucket
// shaper whose burst takes sizes up to `burst_bytes` at no cost (latency
// alone): all-reduces and all-gathers from 4 KiB to 16 MiB, 5 repeats each.
// burst_bytes 0: no shaper.
std::vector<NetworkProbeRecord> ShapedTwoRankProbe(double gbps, int64_t burst_bytes);

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_
