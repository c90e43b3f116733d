// Fuzz target: the trace validator (traces/trace_validator.h).
//
// The input is written to a file as it is (seeds: the committed sample
// traces) and ValidateTrace() reads all of it: every row of every table,
// then the whole-trace checks (epochs without gaps, one row per layer and
// epoch, per-iteration rows inside recorded epochs, floats that add up). A
// TraceError is the expected answer to a bad trace; anything else is a
// finding.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "traces/trace_error.h"
#include "traces/trace_validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = accordion::fuzz::WriteInput("input.trace", data, size);
  try {
    const accordion::TraceSummary summary = accordion::ValidateTrace(path);
    (void)summary;
  } catch (const accordion::TraceError&) {
  }
  accordion::fuzz::RemoveWithSidecars(path);
  return 0;
}
