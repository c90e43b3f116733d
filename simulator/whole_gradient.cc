#include "simulator/whole_gradient.h"

#include <cmath>
#include <vector>

#include "common/errors.h"
#include "common/number_format.h"
#include "simulator/sweep.h"
#include "traces/scheme_description.h"

namespace accordion::sim {

ScheduleProjection ProjectWholeGradient(const ReplayInput& input, const ReplayOptions& options, Scheme scheme) {
  ReplayOptions o = options;
  o.scheme(scheme).level_low(std::nullopt).level_high(std::nullopt).policies({});
  // Without levels the three schedules are one: static low is the projection.
  ScheduleProjection p = ReplayEngine(o).Run(input).static_low;
  p.name = DescriptionOf(scheme).name;
  p.label = DescriptionOf(scheme).title;
  return p;
}

namespace {

struct RateTimes {
  double compressed_s = 0;
  double whole_s = 0;
  Scheme whole_scheme = Scheme::kDense;
  int workers = 0;
  bool compression_faster() const { return compressed_s < whole_s; }
};

RateTimes TimesAt(const ReplayInput& input, const ReplayOptions& base, double gbps) {
  SweepPoint point;
  point.bandwidth_gbps = gbps;
  const ReplayOptions at = OptionsAt(base, point);
  RateTimes t;
  const ReplayResult compressed = ReplayEngine(ReplayOptions(at).policies({})).Run(input);
  t.compressed_s = compressed.accordion.total.time_s;
  t.workers = compressed.workers;
  bool first = true;
  for (Scheme s : WholeGradientSchemes()) {
    const double time_s = ProjectWholeGradient(input, at, s).total.time_s;
    // Strictly faster: a tie goes to the more exact (WholeGradientSchemes' order).
    if (first || time_s < t.whole_s) {
      t.whole_s = time_s;
      t.whole_scheme = s;
      first = false;
    }
  }
  return t;
}

}  // namespace

BreakEven BreakEvenBandwidth(const ReplayInput& input, const ReplayOptions& compressed,
                             const BreakEvenOptions& options) {
  if (!(options.min_gbps() > 0) || !(options.max_gbps() > options.min_gbps()) || !std::isfinite(options.max_gbps())) {
    throw InputError("the break-even scan needs 0 < min < max Gb/s, got " + FormatNumber(options.min_gbps()) + " to " +
                     FormatNumber(options.max_gbps()));
  }
  if (options.points_per_decade() < 1 || !(options.tolerance() > 0)) {
    throw InputError("the break-even scan needs at least one point a decade and a tolerance above 0");
  }
  ReplayOptions base = compressed;
  base.timing(options.timing().value_or(compressed.timing()));
  BreakEven b;
  b.min_gbps = options.min_gbps();
  b.max_gbps = options.max_gbps();
  b.timing = base.timing();

  const double decades = std::log10(b.max_gbps / b.min_gbps);
  const int n = static_cast<int>(std::ceil(decades * options.points_per_decade())) + 1;
  std::vector<double> rates(static_cast<size_t>(n));
  std::vector<RateTimes> times(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // The ends exactly as asked; log-spaced between.
    rates[i] = i == n - 1 ? b.max_gbps : b.min_gbps * std::pow(10.0, decades * i / (n - 1));
    times[i] = TimesAt(input, base, rates[i]);
  }
  b.workers = times.front().workers;
  // The highest crossing: above it the answer holds up to the fastest links
  // scanned, which is what a "compression pays below" rate promises.
  int crossing = -1;
  for (int i = n - 2; i >= 0; --i) {
    if (times[i].compression_faster() != times[i + 1].compression_faster()) {
      crossing = i;
      break;
    }
  }
  if (crossing < 0) {
    b.compression_below = times.front().compression_faster();
    return b;
  }
  b.compression_below = times[crossing].compression_faster();
  double lo = rates[crossing], hi = rates[crossing + 1];
  while (hi / lo > 1 + options.tolerance()) {
    const double mid = std::sqrt(lo * hi);
    if (TimesAt(input, base, mid).compression_faster() == b.compression_below) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  b.gbps = std::sqrt(lo * hi);
  const RateTimes at = TimesAt(input, base, *b.gbps);
  b.compressed_s = at.compressed_s;
  b.whole_s = at.whole_s;
  b.whole_scheme = at.whole_scheme;
  return b;
}

}  // namespace accordion::sim
