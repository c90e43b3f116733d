// CommunicationModel: how long an iteration's collectives take on a cluster.
//
// SimulatedCommunication runs each pattern through SimGrid, every pattern in
// a fresh child process (child_process.h says why); AnalyticCommunication
// prices it with the alpha-beta formulas. Both put collectives one after
// another in issue order, each starting when its bucket is ready.
#ifndef ACCORDION_SIMULATOR_COMMUNICATION_MODEL_H_
#define ACCORDION_SIMULATOR_COMMUNICATION_MODEL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "simulator/alpha_beta_model.h"
#include "simulator/collectives.h"
#include "simulator/iteration_pattern.h"
#include "simulator/network_simulation.h"
#include "simulator/platform.h"

namespace accordion::sim {

enum class ModelKind { kSimulate, kAnalytic };
const char* ToString(ModelKind kind);
std::optional<ModelKind> ParseModelKind(const std::string& name);

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
// platform is probed afresh when its file changes.
struct PlatformProbe {
  int ranks = 0;
  RouteSummary ring_route;  // between ring neighbours
};
PlatformProbe ProbePlatform(const PlatformSpec& spec, int ranks);

// The analytic model for a probed platform: alpha and B of its ring
// routes, shaped per message size by the spec's calibrated segments.
AlphaBetaModel AlphaBetaModelFor(const PlatformSpec& spec, const PlatformProbe& probe);

class AnalyticCommunication : public CommunicationModel {
 public:
  AnalyticCommunication(AlphaBetaModel model, AllReduceAlgorithm algorithm, int ranks);
  std::vector<IterationTiming> Time(const std::vector<IterationPattern>& patterns,
                                    const std::function<void(int)>& progress) override;
  std::string Describe() const override;

 private:
  AlphaBetaModel model_;
  AllReduceAlgorithm algorithm_;
  int ranks_;
};

class SimulatedCommunication : public CommunicationModel {
 public:
  SimulatedCommunication(PlatformSpec spec, int ranks, AllReduceAlgorithm algorithm, Fidelity fidelity,
                         int jobs = 1, const std::atomic<bool>* cancel = nullptr);
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
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_COMMUNICATION_MODEL_H_
