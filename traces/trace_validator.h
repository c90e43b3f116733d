// ValidateTrace reads a whole trace and checks it row by row and as a whole.
//
// It goes further than TraceReader::Open(): every row of every table is read
// and checked, epochs must run 0..E-1 without gaps, each epoch must have one
// row per layer, per-iteration rows must belong to recorded epochs, levels
// must be the run's, and floats must add up. The first problem found is
// thrown as a TraceError; what is merely unusual comes back as warnings.
//
// Thread-safe: ValidateTrace opens a TraceReader of its own and keeps nothing
// between calls, so several threads may validate at once, the same file too.
#ifndef ACCORDION_TRACES_TRACE_VALIDATOR_H_
#define ACCORDION_TRACES_TRACE_VALIDATOR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

struct TraceSummary {
  int epochs = 0;
  int layers = 0;
  int64_t iteration_rows = 0;
  int64_t grad_ready_rows = 0;
  int64_t collective_rows = 0;
  int64_t hessian_rows = 0;
  int64_t error_profile_rows = 0;  // schema v4
  int64_t network_probe_rows = 0;
  int schema_version = 0;
  std::vector<std::string> warnings;
};

TraceSummary ValidateTrace(const std::string& path);

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_VALIDATOR_H_
