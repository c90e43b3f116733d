// Timelines of one iteration in the Chrome / Perfetto trace-event format
// ({"traceEvents": [...]}, times in microseconds): the replayed iteration of
// an epoch under Accordion's schedule next to an iteration the trace
// measured, as two processes with a compute and a collectives track each.
// Open in chrome://tracing or ui.perfetto.dev.
#ifndef ACCORDION_SIMULATOR_TIMELINE_H_
#define ACCORDION_SIMULATOR_TIMELINE_H_

#include <nlohmann/json_fwd.hpp>

#include "simulator/replay_engine.h"
#include "simulator/replay_input.h"

namespace accordion::sim {

// `measured` may be null (only the replayed iteration is drawn).
nlohmann::json IterationTimeline(const ReplayResult& result, int epoch, const MeasuredIteration* measured);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_TIMELINE_H_
