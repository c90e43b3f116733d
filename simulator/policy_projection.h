// PolicyProjection: every policy's schedule (analysis/policy_comparison.h)
// projected onto a cluster by the replay engine, and the level advisor that
// searches Accordion's settings with it.
//
//   ProjectPolicies: the comparison table with each row's time to train,
//     and (asked) the whole-gradient exchanges: dense, fp16 and bf16 casts.
//   AdviseLevels: for each eta and pair of the levels the trace profiled,
//     Accordion's schedule, its error proxy in the run's critical epochs
//     and its projected time; a pair is admissible when that error is at
//     most the reference low level's (the run's level_low) times
//     1 + tolerance, and the best compressed setting is the admissible pair
//     with the shortest projected time (the static reference where none is
//     faster). The advice is the most exact of that setting, dense and the
//     casts whose time is within 1 % of the fastest's: not compressing at
//     all is advice too. A projection from one run's gradients, not an
//     accuracy guarantee: docs/policies.md says what it leaves out.
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
#include "simulator/whole_gradient.h"

namespace accordion::sim {

struct ProjectedPolicies {
  PolicyComparison comparison;  // rows with projected_s set
  ReplayResult replay;          // the platform, notes and per-epoch projections
  // Each whole-gradient row's projection, in the order of
  // comparison.whole_gradient (empty with WholeGradientRows::kOmit).
  std::vector<ScheduleProjection> whole_gradient;
};

// Whether ProjectPolicies projects the whole-gradient rows too (three more
// replays): accordion-sim's commands, the explorer's Policies tab and the
// report do; kOmit is for callers that want the policies alone.
enum class WholeGradientRows { kOmit, kProject };

// `asked` empty: the policies that fit the trace's scheme and signals.
// `options` says the cluster and the settings (eta, interval, levels, MSDR
// factor); floats per worker are counted at the projected worker count.
// With kProject, a scheme without levels (a dense or cast trace) gives the
// whole-gradient rows alone and a note; with kOmit it throws InputError.
ProjectedPolicies ProjectPolicies(const ReplayInput& input, const ReplayOptions& options,
                                  const std::vector<Policy>& asked,
                                  WholeGradientRows whole_gradient = WholeGradientRows::kOmit);

// A less exact exchange is advised only this much faster, relative, than
// the more exact one: dense over a cast within 1 %, a cast over compression.
inline constexpr double kExactnessMargin = 0.01;

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
  /// The break-even link rate's search; empty: not searched. Default: the
  /// analytic α–β timing over 0.01 to 10000 Gb/s.
  ACCORDION_ARG(std::optional<BreakEvenOptions>, break_even) = BreakEvenOptions().timing(TimingSource::kAnalytic);
};

struct AdvisorCandidate {
  double eta = 0;
  double level_low = 0;
  double level_high = 0;
  double floats = 0;                  // per worker, over the run
  double error = 0;                   // mean over every epoch and layer
  double critical_error = 0;          // over the run's critical epochs
  std::optional<double> projected_s;  // admissible candidates only
  std::optional<TimeBand> band;       // its prediction band, with it
  bool admissible = false;
};

// One whole-gradient exchange on the advice's cluster.
struct WholeGradientTime {
  Scheme scheme = Scheme::kDense;
  double projected_s = 0;
  TimeBand band;             // its prediction band
  double payload_bytes = 0;  // one worker's on the wire, at the projected worker count
};

// What the advice is: an Accordion pair, staying at the static reference,
// or no compression (Advice::whole_gradient_scheme).
enum class AdviceKind { kAccordion, kStatic, kWholeGradient };
const char* ToString(AdviceKind kind);  // "accordion", "static", "whole-gradient"

struct Advice {
  Scheme scheme = Scheme::kDense;
  double reference = 0;                 // the reference low level
  double reference_critical_error = 0;  // static reference, critical epochs
  double reference_s = 0;               // static reference, projected
  TimeBand reference_band;              // and its prediction band
  double tolerance = 0;
  int critical_epochs = 0;
  std::string platform;  // as the replay describes it
  int workers = 0;
  std::vector<AdvisorCandidate> candidates;  // admissible first, fastest first
  // The fastest admissible candidate, where it is projected faster than the
  // static reference; otherwise empty, and the best compressed setting is
  // the reference.
  std::optional<AdvisorCandidate> best;
  // Dense, then the casts (WholeGradientSchemes), on the same cluster.
  std::vector<WholeGradientTime> whole_gradient;
  AdviceKind kind = AdviceKind::kStatic;
  Scheme whole_gradient_scheme = Scheme::kDense;  // kind kWholeGradient: the one advised
  // Where the best compressed setting and the fastest whole-gradient
  // exchange take the same time, at these workers; empty when not searched.
  std::optional<BreakEven> break_even;
  std::string break_even_problem;                 // why not searched, where it could not be (an XML platform)
  double bandwidth_gbps = 0;                      // the asked link rate
  TimingSource timing = TimingSource::kSimulate;  // what timed the projections

  // The best compressed setting's projected time: best's, else the reference's.
  double compressed_s() const { return best ? *best->projected_s : reference_s; }
  const TimeBand& compressed_band() const { return best ? *best->band : reference_band; }
  // The advised setting and the runner-up a user would weigh it against
  // (the advised whole-gradient exchange against the best compressed
  // setting; Accordion against its static reference; the reference against
  // the fastest whole-gradient exchange), and whether their prediction
  // bands keep them apart: where they overlap, the trace cannot tell them.
  struct Contest {
    std::string advised, runner_up;
    TimeBand advised_band, runner_up_band;
    bool distinguishable() const { return !advised_band.Overlaps(runner_up_band); }
  };
  std::optional<Contest> AdvisedAgainstRunnerUp() const;
  // "Accordion eta 0.7 rank 8 / rank 4" or "static rank 2".
  std::string CompressedLabel() const;
  // The fastest whole-gradient exchange (a tie: the more exact).
  const WholeGradientTime& FastestWholeGradient() const;
  // kind kWholeGradient: the advised one's time (whole_gradient_scheme's).
  const WholeGradientTime& AdvisedWholeGradient() const;
};

// Throws InputError when the trace has no error profile or its scheme no
// compression error (dense, batch, the casts).
Advice AdviseLevels(const ReplayInput& input, const ReplayOptions& options, const AdvisorOptions& advisor);

void WriteAdviceTable(const Advice& advice, std::ostream& out);
nlohmann::json AdviceJson(const Advice& advice);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_POLICY_PROJECTION_H_
