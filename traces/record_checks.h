// Sanity rules for trace rows, shared by the writer (refuse to write them),
// the reader (refuse to hand them out) and the validator.
//
// Each check throws TraceError (kInvalidValue, kOutOfRange or kInconsistent)
// with a message naming the table, the row and the offending value.
//
// Thread-safe: pure functions of their arguments.
#ifndef ACCORDION_TRACES_RECORD_CHECKS_H_
#define ACCORDION_TRACES_RECORD_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion {

// Plausibility limits: what no real run produces, so a value beyond one is
// damage (or a hostile file) and is refused before a tool sizes memory or a
// simulation by it - a world_size of 10^9 was an allocation until memory ran
// out, a grad_ready offset of 1e300 s a replay of 1e303 s. One definition
// for the writer, every reader and `accordion-analyze validate`.
inline constexpr int64_t kMaxTraceRanks = 131072;                // run.world_size (the simulator's limit too)
inline constexpr int64_t kMaxTraceElements = int64_t{1} << 40;   // layers.numel
inline constexpr int64_t kMaxTraceIterations = 100000000;        // an epoch's iterations, an iteration index
inline constexpr int64_t kMaxTraceBytes = int64_t{1} << 50;      // one collective's bytes (1 PiB)
inline constexpr double kMaxTraceSeconds = 1e7;                  // a duration or offset (116 days)
inline constexpr int64_t kMaxTraceTextBytes = int64_t{1} << 20;  // run.config_json, run.versions_json

// What a column's value must satisfy whatever the rest of the trace says; each
// column of traces/trace_tables.cc names one. The Check* functions below add
// the rules that need the run or other fields (an epoch below epochs_planned,
// a level of the run's scheme, numel the product of shape).
enum class ValueCheck {
  kAny,
  kFinite,       // REAL: not NaN or infinite (may be negative)
  kNonNegative,  // REAL: finite and >= 0; INTEGER: >= 0
  kFraction,     // REAL: in [0, 1]
  kAtLeastOne,   // INTEGER: >= 1
  kNotEmpty,     // TEXT: not ""
  kRanks,        // INTEGER: 1..kMaxTraceRanks
  kElements,     // INTEGER: 1..kMaxTraceElements
  kIterations,   // INTEGER: 0..kMaxTraceIterations
  kBytes,        // INTEGER: 0..kMaxTraceBytes
  kSeconds,      // REAL: 0..kMaxTraceSeconds
  kShortText,    // TEXT: at most kMaxTraceTextBytes
  kJsonObject,   // TEXT: a JSON object of at most kMaxTraceTextBytes (readers parse it)
};

// Applies `check` to the value of column `name` of the row `where`, as it is
// stored (a bool as 0/1, an enum or a shape as its text). A check the stored
// type has no meaning for (kNotEmpty on a number) is a std::logic_error: a
// mistake in trace_tables.cc, not in the file.
void CheckValue(int64_t value, ValueCheck check, const std::string& where, const std::string& name);
void CheckValue(double value, ValueCheck check, const std::string& where, const std::string& name);
void CheckValue(const std::string& value, ValueCheck check, const std::string& where, const std::string& name);

void CheckRun(const RunInfo& run);
// `expected_id` is the layer's position in the layer list.
void CheckLayer(const LayerInfo& layer, int expected_id);
void CheckEpoch(const EpochRecord& epoch, const RunInfo& run);
void CheckEpochLayer(const EpochLayerRecord& row, const RunInfo& run, int num_layers);
void CheckIteration(const IterationRecord& row, const RunInfo& run);
void CheckGradReady(const GradReadyRecord& row, const RunInfo& run, int num_layers);
void CheckCollective(const CollectiveRecord& row, const RunInfo& run);
void CheckErrorProfile(const ErrorProfileRecord& row, const RunInfo& run, int num_layers);
void CheckHessian(const HessianRecord& row, const RunInfo& run);
void CheckNetworkProbe(const NetworkProbeRecord& row);

// Parses "64,3,3,3" (the layers.shape column); throws kInvalidValue.
std::vector<int64_t> ParseShape(const std::string& text);
std::string FormatShape(const std::vector<int64_t>& shape);

}  // namespace accordion

#endif  // ACCORDION_TRACES_RECORD_CHECKS_H_
