// Two detectors of critical learning regimes, and how far they agree - the
// comparison of the paper's Figure 3.
//
//   gradient norm (Accordion): the whole model's accumulated-gradient norm at
//     checks every `interval` epochs; the epochs (c_prev, c] are critical when
//     |n(c_prev) - n(c)| / n(c_prev) >= eta;
//   Hessian eigenvalue (Jastrzebski et al.): the top eigenvalue where the
//     trace measured it; the epochs (h_prev, h] are critical when
//     |l(h_prev) - l(h)| / |l(h_prev)| >= threshold.
// Both label the epochs over which the change was measured (not, as the
// controller does, the epochs after it), and epoch 0 is critical for both.
// Epochs a detector cannot label (before its second measurement) stay open.
//
// Thread-safe: pure functions; WriteRegimeComparison writes only to the stream
// it is given.
#ifndef ACCORDION_ANALYSIS_REGIME_DETECTORS_H_
#define ACCORDION_ANALYSIS_REGIME_DETECTORS_H_

#include <optional>
#include <ostream>
#include <vector>

#include "analysis/trace_view.h"
#include "traces/records.h"

namespace accordion {

struct RegimeSeries {
  std::vector<std::optional<bool>> critical;  // per epoch; empty optional: unlabelled
  std::vector<std::optional<double>> ratio;   // at the measurement that labelled the epoch
};

RegimeSeries DetectFromGradientNorms(const TraceView& view, double eta, int interval);
// Whole-model rows (block "") of `hessian`; other blocks are ignored.
RegimeSeries DetectFromHessian(const std::vector<HessianRecord>& hessian, int num_epochs, double threshold);

struct RegimeAgreement {
  int compared = 0;  // epochs both detectors labelled
  int both_critical = 0;
  int both_stable = 0;
  int only_first = 0;  // critical for the first series only
  int only_second = 0;
  double agreement() const { return compared ? double(both_critical + both_stable) / compared : 0; }
  // |critical in both| / |critical in either|, over the compared epochs.
  double jaccard() const {
    const int either = both_critical + only_first + only_second;
    return either ? double(both_critical) / either : 1.0;
  }
};

RegimeAgreement CompareRegimes(const RegimeSeries& first, const RegimeSeries& second);

// Per-epoch table of both detectors and the agreement summary.
void WriteRegimeComparison(const TraceView& view, const std::vector<HessianRecord>& hessian, const RegimeSeries& norm,
                           const RegimeSeries& eigen, std::ostream& out);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_REGIME_DETECTORS_H_
