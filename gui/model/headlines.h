// The sentences the what-if tab and the report write about projected
// times: one builder, so that every headline says "slower" when Accordion
// is slower, "as fast as" only within kSameTimeTolerance and "faster"
// otherwise, and a sweep's headline holds at every bandwidth it names.
// Plain strings, no Qt: unit-tested with exact expected wording.
#ifndef ACCORDION_GUI_MODEL_HEADLINES_H_
#define ACCORDION_GUI_MODEL_HEADLINES_H_

#include <string>
#include <vector>

#include "gui/model/eta_interval_sweep.h"
#include "gui/model/what_if.h"

namespace accordion::gui {

// Two times within this fraction of each other are "as fast as" (0.005:
// where their ratio rounds to 1.00×).
inline constexpr double kSameTimeTolerance = 0.005;
// The saving below which the sweep headline says "less than 5 %".
inline constexpr double kWorthwhileSaving = 0.05;

// Accordion's time against another schedule's: "1.72× faster than dense",
// "1.72× slower than dense", "as fast as dense (within 0.5 %)"; without
// "than …" for an empty `other` ("1.72× slower", "as fast (within 0.5 %)");
// empty when either time is not a positive finite number.
std::string CompareTimes(double accordion_s, double other_s, const std::string& other);

// "Accordion: 1.72× slower than dense, 1.10× faster than static low and as
// fast as static high (within 0.5 %)". Skips a comparison CompareTimes
// leaves empty; empty when all are.
std::string ProjectionHeadline(double accordion_s, double dense_s, double static_low_s, double static_high_s);

// One sentence, no final period, true at every swept bandwidth: the sweep
// cut into runs of neighbouring bandwidths where Accordion saves at least
// `worthwhile` of dense's time, saves less, is as fast, or is slower, e.g.
// "Accordion saves 12–40 % of dense's time from 0.1 to 3.16 Gb/s, less
// than 5 % from 5.62 to 10 Gb/s and is slower than dense (up to 1.72× its
// time) from 17.8 to 100 Gb/s". More than three runs are summed up instead.
// Empty for an empty sweep. Bandwidths in increasing order.
std::string SweepHeadline(const std::vector<SweepPointResult>& sweep, double worthwhile = kWorthwhileSaving);

// The Sweep tab's sentence, no final period, true of the grid's cells: the
// setting that saves the most of static low's floats (or time) and what the
// run's recorded η and interval save, e.g. "η 0.9, interval 20 saves the
// most: 41 % of static low's floats, 12 of 300 epochs critical; the
// recorded η 0.5, interval 10 saves 38 %, 30 critical". Ties go to the
// recorded setting, else to the smallest η (the most cautious detector),
// then the shortest interval, and are counted. A cell costing more says
// "more floats than" / "longer than"; times within kSameTimeTolerance, and
// floats exactly equal, say "as …". Empty without a cell that has the metric.
std::string EtaIntervalHeadline(const EtaIntervalSweep& sweep, SweepMetric metric, double recorded_eta,
                                int recorded_interval);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_HEADLINES_H_
