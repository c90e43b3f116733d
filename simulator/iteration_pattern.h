// What one optimizer step asks of the network, and what the network answers.
//
// An IterationPattern is the step's collectives in issue order (the step
// plan's, analysis/communication_plan.h), each with the earliest time it may
// start (its bucket's last gradient ready, measured from the start of
// backward) and what else it waits for: the end of backward, a collective
// whose result it needs and the computation in between (PowerSGD's Q waits
// for backward and for its bucket's P, then for Q = G^T P to be computed).
// Every step of an epoch has the same pattern, and it changes only when the
// levels or the batch size do - the unit the replay memoises.
//
// Thread-safe: plain values, and functions that touch only their arguments.
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
  int after = -1;               // index of a call whose result it needs
  bool after_backward = false;  // issued from the host only once backward has ended
  // Host computation between what it waits for and its issue (compressing
  // with the result of `after`). Issues after backward happen one at a time.
  double gap_s = 0;
  // What this collective cost the hosts in the trace beyond what the model
  // of the recorded network gives it. The network models time the network
  // alone; the replay adds this to their time when it composes a step.
  double host_s = 0;
  // Where that model overprices the trace's communication as a whole, the
  // fraction of its time the collectives took (in (0, 1)): the overpricing
  // is the model's, so it scales with the transfer rather than staying a
  // fixed amount that a faster network would turn into a negative time.
  double network_scale = 1;
  // What the anchoring called network time on the recorded network (the
  // rest of what the trace measured being host_s; 0: unknown), and the
  // recorded rate's relative uncertainty (the probe fit's). The prediction
  // band moves host_s as if it were network time and the network time by
  // that uncertainty: nothing on the recorded network, more the further a
  // what-if moves from it.
  double recorded_network_s = 0;
  double attribution = 0;
  // This call's time when the network model gives it `network_s`.
  double Modelled(double network_s) const { return network_s * network_scale + host_s; }
};

struct IterationPattern {
  std::vector<CollectiveCall> calls;
  double backward_s = 0;  // when backward ends, from its start
  // Equal keys, equal timings: every field that affects the timing, exactly.
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
// ready, what it waits for is done and the previous one is done; `durations`
// has one per call, each collective on an otherwise idle network.
IterationTiming ComposeIteration(const IterationPattern& pattern, const std::vector<double>& durations);

// A step's collectives run one after another, so what the step pays is
// their sum. Durations made of a measured time and a what-if's change can
// go below zero where the measured split was off (the trainer had two in
// flight at once, and the first took part of the second's transfer): such a
// deficit is taken from the durations after it, then from those before it,
// so the sum stays as it was (and never below zero).
void SettleNegativeDurations(std::vector<double>& durations);

// When call `i` may be issued given when the calls it waits for ended:
// max(ready, end of backward, end[after]) plus its gap, and never before the
// previous after-backward issue (`host_s`, updated) - the host issues those
// one at a time. Shared by ComposeIteration and the SimGrid actors.
double IssueTime(const IterationPattern& pattern, size_t i, const std::vector<double>& end, double& host_s);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_ITERATION_PATTERN_H_
