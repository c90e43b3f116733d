// TimeBand: the range a projected time can stand behind (the replay's
// prediction band: 90 % of the trace's recorded steps carried through the
// model, simulator/replay_engine.h). Two projections whose bands overlap are
// not distinguishable on the trace they came from.
#ifndef ACCORDION_ANALYSIS_TIME_BAND_H_
#define ACCORDION_ANALYSIS_TIME_BAND_H_

#include <string>

namespace accordion {

struct TimeBand {
  double low_s = 0;
  double high_s = 0;
  bool Overlaps(const TimeBand& other) const { return low_s <= other.high_s && other.low_s <= high_s; }
  // "12.1-13.4", three significant figures, seconds.
  std::string Text() const;
};

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_TIME_BAND_H_
