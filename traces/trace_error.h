// TraceError: why a trace file cannot be used, as a code tests can match and
// a one-line message people can act on.
//
// Thread safety: TraceError is an immutable exception value; ToString is pure.
#ifndef ACCORDION_TRACES_TRACE_ERROR_H_
#define ACCORDION_TRACES_TRACE_ERROR_H_

#include <string>

#include "common/errors.h"

namespace accordion {

enum class TraceErrorCode {
  kNotFound,        // no such file, or it cannot be opened
  kNotSqlite,       // the bytes are not an SQLite database
  kTruncated,       // shorter than its own header says
  kCorrupt,         // SQLite reports damaged pages
  kNotATrace,       // an SQLite file, but not an Accordion trace
  kNewerVersion,    // written by a newer toolkit with a schema we do not know
  kUnknownVersion,  // the schema version is missing or not a version at all
  kMissingTable,
  kMissingColumn,
  kMissingRow,    // a required row (the run row) is absent
  kInvalidValue,  // NaN, infinite, negative or unknown where impossible
  kOutOfRange,    // an epoch, layer or rank beyond what the trace declares
  kInconsistent,  // rows that disagree with each other
  kIo,            // the machine failed a read or write: a full disk, an I/O error
  kBusy,          // another process is writing the trace
  kNotWritable,   // the path takes no new trace: it exists (without overwrite), is
                  // not a regular file, or its directory or file system refuses it
};

const char* ToString(TraceErrorCode code);

class TraceError : public InputError {
 public:
  TraceError(TraceErrorCode code, const std::string& message) : InputError(message), code_(code) {}
  TraceErrorCode code() const { return code_; }
  // kIo is the machine's failure (common/errors.h's IoError), the rest the
  // input's.
  int exit_code() const noexcept override { return code_ == TraceErrorCode::kIo ? kExitIoFailure : kExitBadInput; }

 private:
  TraceErrorCode code_;
};

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_ERROR_H_
