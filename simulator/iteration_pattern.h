// What one optimizer step asks of the network, and what the network answers.
//
// An IterationPattern is the step's collectives in issue order, each with the
// earliest time it may start (its bucket's last gradient ready, measured from
// the start of backward). Every step of an epoch has the same pattern, and it
// changes only when the levels or the batch size do - the unit the replay
// memoises.
#ifndef ACCORDION_SIMULATOR_ITERATION_PATTERN_H_
#define ACCORDION_SIMULATOR_ITERATION_PATTERN_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion::sim {

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t bytes = 0;   // as PlannedCollective::bytes
  double ready_s = 0;  // earliest start, from the start of backward
  std::string tag;     // dense, powersgd-p, ...
  int bucket = 0;
};

struct IterationPattern {
  std::vector<CollectiveCall> calls;
  // Equal keys, equal timings: op, bytes and ready time of every call, exactly.
  std::string Key() const;
};

struct CollectiveSpan {
  double start_s = 0;  // first rank to start, from the start of backward
  double end_s = 0;    // last rank to finish
};

struct IterationTiming {
  std::vector<CollectiveSpan> spans;  // one per call
  double comm_end_s = 0;              // when the last collective ended (0: none)
};

nlohmann::json ToJson(const IterationPattern& pattern);
IterationPattern PatternFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const IterationTiming& timing);
IterationTiming TimingFromJson(const nlohmann::json& j);

// Collectives run one after another in issue order, each as soon as it is
// ready and the previous one is done; `durations` has one per call.
IterationTiming ComposeInIssueOrder(const IterationPattern& pattern, const std::vector<double>& durations);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_ITERATION_PATTERN_H_
