// CommunicationModel: how long an iteration's collectives take on a cluster.
//
// SimulatedCommunication runs each pattern through SimGrid, every pattern in
// a fresh child process (child_process.h says why); AnalyticCommunication
// prices it with the alpha-beta formulas. Both put collectives one after
// another in issue order, each starting when its bucket is ready and what it
// waits for is done (ComposeIteration).
//
// Thread safety: a CommunicationModel is one thread's (ReplayEngine::Run makes
// its own). ProbePlatform may run in any thread: its process-wide cache is
// behind a static mutex, not held while probing, so racing first calls each probe.
#ifndef ACCORDION_SIMULATOR_COMMUNICATION_MODEL_H_
#define ACCORDION_SIMULATOR_COMMUNICATION_MODEL_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simulator/alpha_beta_model.h"
#include "simulator/collectives.h"
#include "simulator/iteration_pattern.h"
#include "simulator/network_simulation.h"
#include "simulator/platform.h"
#include "simulator/platform_builder.h"
#include "simulator/replay_input.h"

namespace accordion::sim {

enum class TimingSource { kSimulate, kAnalytic, kRecorded };
const char* ToString(TimingSource kind);
std::optional<TimingSource> ParseTimingSource(const std::string& name);

class CommunicationModel {
 public:
  virtual ~CommunicationModel() = default;
  // Timings in the order of `patterns`; `progress(done)` after each.
  virtual std::vector<IterationTiming> Time(const std::vector<IterationPattern>& patterns,
                                            const std::function<void(int)>& progress) = 0;
  virtual std::string Describe() const = 0;
};

// What a built platform looks like to the analytic model, found by building
// it in a child process (which also checks that it can hold the ranks).
// Answers are remembered per (spec, ranks) for the life of the process, so
// an interactive what-if pays the child process once per platform; an XML
// platform is probed afresh when its file changes. `cancel` and
// `timeout_s` stop the child as RunInChildProcesses does (child_process.h):
// a caller that can be cancelled must not wait on a probe it cannot stop.
struct PlatformProbe {
  int ranks = 0;
  RouteSummary ring_route;  // between ring neighbours
};
PlatformProbe ProbePlatform(const PlatformSpec& spec, int ranks, const std::atomic<bool>* cancel = nullptr,
                            double timeout_s = 0);

// The analytic model for a probed platform: alpha and B of its ring
// routes, shaped per message size by the spec's calibrated segments; on the
// hierarchical platform messages inside a node take the device links.
AlphaBetaModel AlphaBetaModelFor(const PlatformSpec& spec, const PlatformProbe& probe);

class AnalyticCommunication : public CommunicationModel {
 public:
  // `overhead_s`: added to every collective (PlatformSpec::collective_overhead_s).
  AnalyticCommunication(AlphaBetaModel model, AllReduceAlgorithm algorithm, int ranks, double overhead_s = 0,
                        CollectiveOptions collective = CollectiveOptions());
  std::vector<IterationTiming> Time(const std::vector<IterationPattern>& patterns,
                                    const std::function<void(int)>& progress) override;
  std::string Describe() const override;

 private:
  AlphaBetaModel model_;
  AllReduceAlgorithm algorithm_;
  int ranks_;
  double overhead_s_;
  CollectiveOptions collective_;
};

// Each collective takes what the trace measured for it (ReplayInput's
// collective_s): the replay of a trace on its own setting, which checks the
// step model apart from the network's. A collective the trace did not run
// (other levels) gets its op's line (ReplayInput::collective_line). Only
// meaningful at the trace's own worker count and network.
class RecordedCommunication : public CommunicationModel {
 public:
  explicit RecordedCommunication(const ReplayInput& input);
  std::vector<IterationTiming> Time(const std::vector<IterationPattern>& patterns,
                                    const std::function<void(int)>& progress) override;
  std::string Describe() const override;
  double Seconds(const CollectiveCall& call) const;

 private:
  std::map<RecordedCollectiveKey, double> recorded_;
  std::map<CollectiveOp, ReplayInput::CollectiveLine> line_;
};

class SimulatedCommunication : public CommunicationModel {
 public:
  // `timeout_s`: the most one pattern's simulation may take (0: no limit).
  SimulatedCommunication(PlatformSpec spec, int ranks, AllReduceAlgorithm algorithm, Fidelity fidelity, int jobs = 1,
                         const std::atomic<bool>* cancel = nullptr, double timeout_s = 0,
                         CollectiveOptions collective = CollectiveOptions());
  std::vector<IterationTiming> Time(const std::vector<IterationPattern>& patterns,
                                    const std::function<void(int)>& progress) override;
  std::string Describe() const override;

 private:
  PlatformSpec spec_;
  int ranks_;
  AllReduceAlgorithm algorithm_;
  Fidelity fidelity_;
  int jobs_;
  const std::atomic<bool>* cancel_;
  double timeout_s_;
  CollectiveOptions collective_;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_COMMUNICATION_MODEL_H_
