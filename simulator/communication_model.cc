#include "simulator/communication_model.h"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "simulator/child_process.h"
#include "simulator/platform_builder.h"
#include "simulator/topology_description.h"

namespace accordion::sim {

const char* ToString(TimingSource kind) {
  switch (kind) {
    case TimingSource::kSimulate:
      return "simulate";
    case TimingSource::kAnalytic:
      return "analytic";
    case TimingSource::kRecorded:
      return "recorded";
  }
  return "?";
}

std::optional<TimingSource> ParseTimingSource(const std::string& name) {
  for (TimingSource k : {TimingSource::kSimulate, TimingSource::kAnalytic, TimingSource::kRecorded}) {
    if (name == ToString(k)) return k;
  }
  return std::nullopt;
}

namespace {

// Identifies a probe: the spec as JSON, the ranks, and for XML platforms the
// file's size and modification time.
std::string ProbeKey(const PlatformSpec& spec, int ranks) {
  std::string key = spec.ToJson().dump() + "#" + std::to_string(ranks);
  if (spec.source == PlatformSource::kXmlFile) {
    struct stat st {};
    if (::stat(spec.xml_path.c_str(), &st) == 0) {
      key += "#" + std::to_string(st.st_size) + "#" + std::to_string(st.st_mtim.tv_sec) + "." +
             std::to_string(st.st_mtim.tv_nsec);
    }
  }
  return key;
}

}  // namespace

PlatformProbe ProbePlatform(const PlatformSpec& spec, int ranks, const std::atomic<bool>* cancel, double timeout_s) {
  spec.Validate();
  static std::mutex mutex;
  static std::map<std::string, PlatformProbe> known;
  const std::string key = ProbeKey(spec, ranks);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  const ChildWork work = [&spec, ranks] {
    NetworkSimulation sim(spec, ranks);
    const RouteSummary r = SummariseRingRoutes(sim.hosts());
    return nlohmann::json{{"latency_s", r.latency_s}, {"bandwidth_Bps", r.bandwidth_Bps}}.dump();
  };
  const nlohmann::json j = nlohmann::json::parse(RunInChildProcesses({work}, 1, {}, cancel, timeout_s).front());
  PlatformProbe probe;
  probe.ranks = ranks;
  probe.ring_route.latency_s = j.at("latency_s").get<double>();
  probe.ring_route.bandwidth_Bps = j.at("bandwidth_Bps").get<double>();
  std::lock_guard<std::mutex> lock(mutex);
  known.emplace(key, probe);
  return probe;
}

AlphaBetaModel AlphaBetaModelFor(const PlatformSpec& spec, const PlatformProbe& probe) {
  const RouteSummary& route = probe.ring_route;
  // One rank never talks to anyone: any positive bandwidth will do.
  const double bandwidth = route.bandwidth_Bps > 0 ? route.bandwidth_Bps : 1.0;
  std::vector<MessageSegment> segments = spec.segments;
  if (segments.empty()) segments.push_back({0, 1, 1});
  for (MessageSegment& s : segments) {
    s.latency_s = route.latency_s * spec.LatencyFactor(s.min_message_bytes);
    s.bandwidth_Bps = bandwidth * spec.BandwidthFactor(s.min_message_bytes);
  }
  AlphaBetaModel model(segments);
  const NodeLinks nodes = NodesOf(spec);
  if (nodes.ranks_per_node > 1) model.nodes(nodes.ranks_per_node, nodes.latency_s, nodes.bandwidth_Bps);
  return model;
}

AnalyticCommunication::AnalyticCommunication(AlphaBetaModel model, AllReduceAlgorithm algorithm, int ranks,
                                             double overhead_s, CollectiveOptions collective)
    : model_(std::move(model)),
      algorithm_(algorithm),
      ranks_(ranks),
      overhead_s_(overhead_s),
      collective_(std::move(collective)) {
  collective_.Validate();
}

std::vector<IterationTiming> AnalyticCommunication::Time(const std::vector<IterationPattern>& patterns,
                                                         const std::function<void(int)>& progress) {
  std::vector<IterationTiming> out;
  for (const IterationPattern& p : patterns) {
    std::vector<double> durations;
    for (const CollectiveCall& c : p.calls) {
      durations.push_back(overhead_s_ +
                          model_.Time(CollectiveRounds(c.op, algorithm_, c.bytes, ranks_, collective_), ranks_));
    }
    out.push_back(ComposeIteration(p, durations));
    if (progress) progress(static_cast<int>(out.size()));
  }
  return out;
}

std::string AnalyticCommunication::Describe() const {
  return "analytic alpha-beta model, " + DescribeAllReduce(algorithm_, collective_);
}

RecordedCommunication::RecordedCommunication(const ReplayInput& input)
    : recorded_(input.collective_s), line_(input.collective_line) {}

double RecordedCommunication::Seconds(const CollectiveCall& call) const {
  auto it = recorded_.find({call.op, call.tag, call.bucket, call.bytes});
  if (it != recorded_.end()) return it->second;
  auto line = line_.find(call.op);
  if (line == line_.end()) {
    throw InputError(std::string("the trace recorded no ") + ToString(call.op) +
                     " to time this step's collectives with (--timing recorded)");
  }
  return line->second.fixed_s + line->second.per_byte_s * static_cast<double>(call.bytes);
}

std::vector<IterationTiming> RecordedCommunication::Time(const std::vector<IterationPattern>& patterns,
                                                         const std::function<void(int)>& progress) {
  std::vector<IterationTiming> out;
  for (const IterationPattern& p : patterns) {
    std::vector<double> durations;
    for (const CollectiveCall& c : p.calls) durations.push_back(Seconds(c));
    out.push_back(ComposeIteration(p, durations));
    if (progress) progress(static_cast<int>(out.size()));
  }
  return out;
}

std::string RecordedCommunication::Describe() const {
  return "collectives as the trace recorded them (" + std::to_string(recorded_.size()) + " measured)";
}

SimulatedCommunication::SimulatedCommunication(PlatformSpec spec, int ranks, AllReduceAlgorithm algorithm,
                                               Fidelity fidelity, int jobs, const std::atomic<bool>* cancel,
                                               double timeout_s, CollectiveOptions collective)
    : spec_(std::move(spec)),
      ranks_(ranks),
      algorithm_(algorithm),
      fidelity_(ResolveFidelity(fidelity, ranks)),
      jobs_(jobs),
      cancel_(cancel),
      timeout_s_(timeout_s),
      collective_(std::move(collective)) {
  collective_.Validate();
}

std::vector<IterationTiming> SimulatedCommunication::Time(const std::vector<IterationPattern>& patterns,
                                                          const std::function<void(int)>& progress) {
  std::vector<ChildWork> work;
  for (const IterationPattern& p : patterns) {
    work.push_back([this, &p] {
      NetworkSimulation sim(spec_, ranks_, collective_);
      return ToJson(sim.RunIteration(p, algorithm_, fidelity_)).dump();
    });
  }
  std::vector<IterationTiming> out;
  for (const std::string& text : RunInChildProcesses(work, jobs_, progress, cancel_, timeout_s_)) {
    out.push_back(TimingFromJson(nlohmann::json::parse(text)));
  }
  return out;
}

std::string SimulatedCommunication::Describe() const {
  return "SimGrid simulation, " + DescribeAllReduce(algorithm_, collective_) + ", " + ToString(fidelity_) + " fidelity";
}

}  // namespace accordion::sim
