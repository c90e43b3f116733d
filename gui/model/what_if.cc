#include "gui/model/what_if.h"

#include <cmath>

#include "common/errors.h"
#include "simulator/child_process.h"
#include "simulator/sweep.h"
#include "simulator/whole_gradient.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

WhatIfProjection Project(const RunData& run, const sim::ReplayOptions& options,
                         const std::function<void(int, int)>& progress) {
  if (!run.replayable) throw InputError(run.replay_problem);
  WhatIfProjection p;
  p.timing = options.timing();
  p.result = sim::ReplayEngine(options).Run(run.input, progress);
  // Every layer dense on the same cluster: the baseline compression is
  // judged by, as compare-policies' dense row. A dense run is that already
  // (another scheme without levels is not): no second replay.
  const SchemeDescription& dense = DescriptionOf(DenseBaselineScheme());
  if (DescriptionOf(p.result.scheme).dense_baseline) {
    p.dense = p.result.static_low;  // all three schedules are dense already
    p.dense.name = dense.name;
    p.dense.label = dense.title;
  } else {
    p.dense = sim::ProjectWholeGradient(run.input, options, DenseBaselineScheme());
  }
  return p;
}

}  // namespace

sim::PlatformSpec BasePlatformOf(const RunData& run, const WhatIfSettings& w) {
  if (!w.platform_file.empty() || !run.replayable) return sim::PlatformSpec();
  return sim::WhatIfBasePlatform(run.input, sim::ReplayOptions().recorded_bandwidth_gbps(w.recorded_bandwidth_gbps));
}

WhatIfProjection ProjectWhatIf(const RunData& run, const ScheduleSettings& s, const WhatIfSettings& w,
                               sim::TimingSource model, const std::atomic<bool>* cancel,
                               const std::function<void(int, int)>& progress) {
  WhatIfProjection p = Project(run, ReplayOptionsOf(s, w, model, BasePlatformOf(run, w)).cancel(cancel), progress);
  const RegimeAnalysis regimes = AnalyseRegimes(run, s);
  if (regimes.schedulable) {
    p.low_level_bands = regimes.BandsFor({});
    p.no_effect_bands = regimes.NoEffectBandsFor({});
  }
  return p;
}

std::vector<double> LogSpaced(double lo, double hi, int points) {
  std::vector<double> out;
  if (points < 1 || !(lo > 0) || !(hi >= lo)) return out;
  if (points == 1) return {lo};
  const double step = std::log(hi / lo) / (points - 1);
  for (int i = 0; i < points; ++i) out.push_back(lo * std::exp(step * i));
  return out;
}

std::vector<SweepPointResult> SweepBandwidth(const RunData& run, const ScheduleSettings& s, const WhatIfSettings& w,
                                             const std::vector<double>& bandwidths, const std::atomic<bool>* cancel) {
  const sim::ReplayOptions base =
      ReplayOptionsOf(s, w, sim::TimingSource::kAnalytic, BasePlatformOf(run, w)).cancel(cancel);
  std::vector<SweepPointResult> out;
  for (double bw : bandwidths) {
    if (cancel != nullptr && cancel->load()) throw sim::Cancelled();
    sim::SweepPoint point;
    point.bandwidth_gbps = bw;
    const WhatIfProjection p = Project(run, sim::OptionsAt(base, point), {});
    out.push_back({bw, p.result.accordion.total.time_s, p.result.static_low.total.time_s,
                   p.result.static_high.total.time_s, p.dense.total.time_s});
  }
  return out;
}

}  // namespace accordion::gui
