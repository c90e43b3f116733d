// The check every tool makes on a path it is about to read, so that a FIFO,
// a device or a directory named where a file is expected is refused in one
// line: opening a FIFO that no process writes into never returns, and a
// device such as /dev/zero never ends.
//
//   CheckInputFile(platform_path);   // throws InputError "p: not a regular file (a FIFO)"
//   std::ifstream in(platform_path);
#ifndef ACCORDION_COMMON_INPUT_FILE_H_
#define ACCORDION_COMMON_INPUT_FILE_H_

#include <string>

namespace accordion {

// Why `path` cannot be read as a file: "no such file", "not a regular file
// (a FIFO)" (or a directory, a character device, ...); empty when it is a
// regular file (links followed). For callers with their own error type.
std::string InputFileProblem(const std::string& path);

// Throws InputError "<path>: <InputFileProblem>" unless `path` is a regular
// file.
void CheckInputFile(const std::string& path);

// The first 16 bytes of every SQLite database (the NUL included): what makes
// a file a trace, whatever its name.
inline constexpr char kSqliteHeader[16] = "SQLite format 3";

// Whether `path` is a regular file that starts with kSqliteHeader.
bool IsSqliteDatabase(const std::string& path);

}  // namespace accordion

#endif  // ACCORDION_COMMON_INPUT_FILE_H_
