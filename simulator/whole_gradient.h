// The exchanges compression has to beat - every gradient sent every step,
// dense or cast to 16 bits (SchemeSet::kWholeGradient) - projected by the
// replay engine, and the break-even link rate below which a compressed
// setting is faster than the fastest of them.
//
//   ProjectWholeGradient: one scheme's projection on the options' cluster.
//   BreakEvenBandwidth: a log-spaced scan of the link rate (everything else
//     as the options say) and a bisection of the highest crossing.
//
// Thread safety: pure functions of their arguments; each runs replays of
// its own (ReplayEngine::Run is const).
#ifndef ACCORDION_SIMULATOR_WHOLE_GRADIENT_H_
#define ACCORDION_SIMULATOR_WHOLE_GRADIENT_H_

#include <optional>
#include <string>

#include "common/options.h"
#include "simulator/replay_engine.h"

namespace accordion::sim {

// `scheme` (no levels) projected with the rest of `options` (platform,
// workers, timing): name the scheme's ("bf16"), label its title ("bf16
// cast"). payload_bytes counts the wire's bytes: a cast's are half of dense's.
ScheduleProjection ProjectWholeGradient(const ReplayInput& input, const ReplayOptions& options, Scheme scheme);

class BreakEvenOptions {
 public:
  /// The link rates scanned, Gb/s. Default: 0.01 to 10000.
  ACCORDION_ARG(double, min_gbps) = 0.01;
  ACCORDION_ARG(double, max_gbps) = 10000;
  /// Scan points per decade of the rate; a crossing between two is then
  /// bisected. Default: 4.
  ACCORDION_ARG(int, points_per_decade) = 4;
  /// The bisection stops when the bracket's rates are this close,
  /// relative. Default: 0.01.
  ACCORDION_ARG(double, tolerance) = 0.01;
  /// What times the collectives; empty: the options' own. A scan is about
  /// 30 x 4 replays, so advise asks for the analytic α–β model, which
  /// matches SimGrid under the recorded network's CM02 setting.
  ACCORDION_ARG(std::optional<TimingSource>, timing);
};

struct BreakEven {
  double min_gbps = 0, max_gbps = 0;  // the range scanned
  int workers = 0;
  TimingSource timing = TimingSource::kAnalytic;
  // Where the compressed setting's time equals the fastest whole-gradient
  // exchange's, to within the tolerance (the highest such rate); empty when
  // they do not cross in the range.
  std::optional<double> gbps;
  // With gbps: compression is the faster just below it (the usual way: a
  // slower link pays for fewer bytes). Without: compression was the faster
  // at every rate scanned (true) or at none (false).
  bool compression_below = false;
  double compressed_s = 0;  // at gbps, each side's time
  double whole_s = 0;
  Scheme whole_scheme = Scheme::kDense;  // the fastest whole-gradient exchange at gbps
};

// `compressed` says the compressed setting (scheme, eta, levels; a static
// level: low == high) and the cluster; its Accordion projection is timed
// against each whole-gradient scheme's at every rate, all else equal.
// Throws InputError where the rate cannot be changed (an XML platform) or
// the range is empty.
BreakEven BreakEvenBandwidth(const ReplayInput& input, const ReplayOptions& compressed,
                             const BreakEvenOptions& options = BreakEvenOptions());

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_WHOLE_GRADIENT_H_
