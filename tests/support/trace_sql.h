// Runs SQL on a trace file, for tests that plant or remove rows, or bring a
// file to another schema version, to see what the tools make of it.
#ifndef ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_
#define ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_

#include <cstdint>
#include <string>

namespace accordion::test_support {

// Executes `sql` (one or more statements) on the SQLite file at `path`;
// throws std::runtime_error with SQLite's message when it fails.
void ExecuteSql(const std::string& path, const std::string& sql);

// The integer in the first column of the first row `sql` returns (a
// COUNT(*)); throws std::runtime_error when there is none.
int64_t QueryInt(const std::string& path, const std::string& sql);

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_SUPPORT_TRACE_SQL_H_
