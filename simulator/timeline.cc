#include "simulator/timeline.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace accordion::sim {

namespace {

constexpr int kMeasuredPid = 1;
constexpr int kReplayedPid = 2;
constexpr int kComputeTid = 1;
constexpr int kCollectivesTid = 2;

class Events {
 public:
  void Name(int pid, const std::string& process) {
    events_.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", process}}}});
    events_.push_back(
        {{"ph", "M"}, {"pid", pid}, {"tid", kComputeTid}, {"name", "thread_name"}, {"args", {{"name", "compute"}}}});
    events_.push_back({{"ph", "M"},
                       {"pid", pid},
                       {"tid", kCollectivesTid},
                       {"name", "thread_name"},
                       {"args", {{"name", "collectives"}}}});
  }
  // A span from `start_s` lasting `duration_s`; spans shorter than SimGrid's
  // 1 ns timing precision are rounding and left out.
  void Span(int pid, int tid, const std::string& name, double start_s, double duration_s,
            nlohmann::json args = nlohmann::json::object()) {
    if (duration_s < 1e-9) return;
    events_.push_back({{"ph", "X"},
                       {"pid", pid},
                       {"tid", tid},
                       {"name", name},
                       {"ts", start_s * 1e6},
                       {"dur", duration_s * 1e6},
                       {"args", std::move(args)}});
  }
  void Instant(int pid, int tid, const std::string& name, double at_s) {
    events_.push_back({{"ph", "i"}, {"s", "t"}, {"pid", pid}, {"tid", tid}, {"name", name}, {"ts", at_s * 1e6}});
  }
  // Forward, backward, the wait for communication, compression and the
  // rest, back to back: the wait right after backward lines up with the
  // collectives still running then.
  void Phases(int pid, double forward, double backward, double compress, double wait, double other,
              const std::string& wait_name) {
    double t = 0;
    for (const auto& [name, d] : {std::pair<std::string, double>{"forward", forward},
                                  {"backward", backward},
                                  {wait_name, wait},
                                  {"compression", compress},
                                  {"other", other}}) {
      Span(pid, kComputeTid, name, t, d);
      t += d;
    }
  }
  nlohmann::json Done() { return {{"traceEvents", std::move(events_)}, {"displayTimeUnit", "ms"}}; }

 private:
  nlohmann::json events_ = nlohmann::json::array();
};

}  // namespace

nlohmann::json IterationTimeline(const ReplayResult& r, int epoch, const MeasuredIteration* measured) {
  if (epoch < 0 || epoch >= static_cast<int>(r.accordion.epochs.size())) {
    throw InputError("epoch " + std::to_string(epoch) + " is not in the trace (0.." +
                     std::to_string(r.accordion.epochs.size() - 1) + ")");
  }
  Events ev;
  if (measured) {
    const IterationRecord& it = measured->record;
    ev.Name(kMeasuredPid, "measured: " + r.trace + ", rank 0, epoch " + std::to_string(it.epoch) + " iteration " +
                              std::to_string(it.iteration));
    const double other = std::max(0.0, it.total_s - it.forward_s - it.backward_s - it.compress_s - it.comm_s);
    ev.Phases(kMeasuredPid, it.forward_s, it.backward_s, it.compress_s, it.comm_s, other, "blocked on communication");
    for (const CollectiveRecord& c : measured->collectives) {
      ev.Span(kMeasuredPid, kCollectivesTid, c.tag + " bucket " + std::to_string(c.bucket), c.start_s, c.duration_s,
              {{"op", ToString(c.op)}, {"bytes", c.bytes}});
    }
    for (const GradReadyRecord& g : measured->grad_ready) {
      ev.Instant(kMeasuredPid, kComputeTid, "gradient ready: layer " + std::to_string(g.layer_id),
                 it.forward_s + g.offset_s);
    }
  }
  const EpochProjection& e = r.accordion.epochs[epoch];
  const double forward = e.step_forward_s;
  const double backward = e.step_backward_s;
  const auto n = static_cast<double>(e.steps);
  ev.Name(kReplayedPid, "replayed: " + std::to_string(r.workers) + " workers on " + r.platform + ", epoch " +
                            std::to_string(epoch) + " (" + r.accordion.label + ")");
  ev.Phases(kReplayedPid, forward, backward, e.compress_s / n, e.exposed_comm_s / n, e.other_s / n,
            "exposed communication");
  const IterationPattern& pattern = r.patterns[e.pattern];
  const IterationTiming& timing = r.timings[e.pattern];
  int last_bucket = -1;
  for (size_t i = 0; i < pattern.calls.size(); ++i) {
    const CollectiveCall& c = pattern.calls[i];
    if (c.bucket != last_bucket) {
      ev.Instant(kReplayedPid, kCollectivesTid, "bucket " + std::to_string(c.bucket) + " ready", forward + c.ready_s);
      last_bucket = c.bucket;
    }
    ev.Span(kReplayedPid, kCollectivesTid, c.tag + " bucket " + std::to_string(c.bucket),
            forward + timing.spans[i].start_s, timing.spans[i].end_s - timing.spans[i].start_s,
            {{"op", ToString(c.op)}, {"bytes", c.bytes}});
  }
  return ev.Done();
}

}  // namespace accordion::sim
