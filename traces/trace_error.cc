#include "traces/trace_error.h"

namespace accordion {

const char* ToString(TraceErrorCode code) {
  switch (code) {
    case TraceErrorCode::kNotFound:
      return "not-found";
    case TraceErrorCode::kNotSqlite:
      return "not-sqlite";
    case TraceErrorCode::kTruncated:
      return "truncated";
    case TraceErrorCode::kCorrupt:
      return "corrupt";
    case TraceErrorCode::kNotATrace:
      return "not-a-trace";
    case TraceErrorCode::kNewerVersion:
      return "newer-version";
    case TraceErrorCode::kUnknownVersion:
      return "unknown-version";
    case TraceErrorCode::kMissingTable:
      return "missing-table";
    case TraceErrorCode::kMissingColumn:
      return "missing-column";
    case TraceErrorCode::kMissingRow:
      return "missing-row";
    case TraceErrorCode::kInvalidValue:
      return "invalid-value";
    case TraceErrorCode::kOutOfRange:
      return "out-of-range";
    case TraceErrorCode::kInconsistent:
      return "inconsistent";
    case TraceErrorCode::kIo:
      return "io";
    case TraceErrorCode::kBusy:
      return "busy";
    case TraceErrorCode::kNotWritable:
      return "not-writable";
  }
  return "unknown";
}

}  // namespace accordion
