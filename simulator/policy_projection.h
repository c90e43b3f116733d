// PolicyProjection: every policy's schedule (analysis/policy_comparison.h)
// projected onto a cluster by the replay engine, and the level advisor that
// searches Accordion's settings with it.
//
//   ProjectPolicies: the comparison table with each row's time to train.
//   AdviseLevels: for each eta and pair of the levels the trace profiled,
//     Accordion's schedule, its error proxy in the run's critical epochs
//     and its projected time; a pair is admissible when that error is at
//     most the reference low level's (the run's level_low) times
//     1 + tolerance, and the advice is the admissible pair with the
//     shortest projected time. A projection from one run's gradients, not
//     an accuracy guarantee: docs/policies.md says what it leaves out.
//
// Thread safety: pure functions of their arguments; each runs replays of
// its own (ReplayEngine::Run is const).
#ifndef ACCORDION_SIMULATOR_POLICY_PROJECTION_H_
#define ACCORDION_SIMULATOR_POLICY_PROJECTION_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/policy_comparison.h"
#include "common/options.h"
#include "simulator/replay_engine.h"

namespace accordion::sim {

struct ProjectedPolicies {
  PolicyComparison comparison;  // rows with projected_s set
  ReplayResult replay;          // the platform, notes and per-epoch projections
};

// `asked` empty: the policies that fit the trace's scheme and signals.
// `options` says the cluster and the settings (eta, interval, levels, MSDR
// factor); floats per worker are counted at the projected worker count.
ProjectedPolicies ProjectPolicies(const ReplayInput& input, const ReplayOptions& options,
                                  const std::vector<Policy>& asked);

// How many thresholds one advice tries at most: each costs a replay per
// admissible pair (64 took about 7 s on the committed MLP trace).
inline constexpr size_t kMaxAdvisorEtas = 64;

class AdvisorOptions {
 public:
  /// The thresholds tried, 1 to kMaxAdvisorEtas of them, each above 0.
  /// Default: {0.3, 0.5, 0.7}.
  ACCORDION_ARG(std::vector<double>, etas) = std::vector<double>{0.3, 0.5, 0.7};
  /// How much more error than the reference's the critical epochs may have,
  /// relative. Default: 0.1.
  ACCORDION_ARG(double, tolerance) = 0.1;
  /// The accurate level the advice must match in critical regimes; empty:
  /// the run's level_low. Default: empty.
  ACCORDION_ARG(std::optional<double>, reference);
};

struct AdvisorCandidate {
  double eta = 0;
  double level_low = 0;
  double level_high = 0;
  double floats = 0;                  // per worker, over the run
  double error = 0;                   // mean over every epoch and layer
  double critical_error = 0;          // over the run's critical epochs
  std::optional<double> projected_s;  // admissible candidates only
  bool admissible = false;
};

struct Advice {
  Scheme scheme = Scheme::kDense;
  double reference = 0;                 // the reference low level
  double reference_critical_error = 0;  // static reference, critical epochs
  double reference_s = 0;               // static reference, projected
  double tolerance = 0;
  int critical_epochs = 0;
  std::string platform;  // as the replay describes it
  int workers = 0;
  std::vector<AdvisorCandidate> candidates;  // admissible first, fastest first
  // The fastest admissible candidate, where it is projected faster than the
  // static reference; otherwise empty, and the advice is to stay there.
  std::optional<AdvisorCandidate> best;
};

// Throws InputError when the trace has no error profile or its scheme no
// compression error (dense, batch).
Advice AdviseLevels(const ReplayInput& input, const ReplayOptions& options, const AdvisorOptions& advisor);

void WriteAdviceTable(const Advice& advice, std::ostream& out);
nlohmann::json AdviceJson(const Advice& advice);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_POLICY_PROJECTION_H_
