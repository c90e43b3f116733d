// accordion-gui-bench: how fast the explorer answers on a 300-epoch x
// 62-layer ResNet-18-shaped trace (the targets: moving the eta
// slider re-derives and redraws every view in < 50 ms, opening the trace
// < 300 ms, the alpha-beta what-if < 20 ms), each beside a baseline run in
// the same process:
//   open      RunData (everything the views need) vs the epoch tables alone;
//   eta       the document's re-derivation plus a redraw of every figure vs
//             what `accordion-analyze schedule --eta X` does per change
//             (read the trace, derive, cost);
//   what-if   the alpha-beta estimate (platform probe remembered, and the
//             first call that builds it) vs the SimGrid replay it stands in for;
//   sweep     the Sweep tab's eta x interval grid (in the background) vs the
//             same grid without its replays, and drawing it vs the level map.
// Median and p95 over the repetitions. Asserts nothing (docs/gui.md).
#include <QApplication>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <qcustomplot.h>
#include <string>
#include <vector>

#include "analysis/schedule_report.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"
#include "tests/support/synthetic_trace.h"

using namespace accordion;
using namespace accordion::gui;

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms = 0;
  double p95_ms = 0;
};

Stats Measure(int repetitions, const std::function<void(int)>& body) {
  std::vector<double> ms;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = Clock::now();
    body(i);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
  return {at(0.5), at(0.95)};
}

void Row(const char* what, const Stats& s, const char* baseline, const Stats& b, double target_ms) {
  std::printf("%-34s %9.2f %9.2f   %-34s %9.2f %9.2f   %7.2fx   %s (< %.0f ms)\n", what, s.median_ms, s.p95_ms,
              baseline, b.median_ms, b.p95_ms, b.median_ms / s.median_ms, s.p95_ms < target_ms ? "met" : "MISSED",
              target_ms);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int repetitions = argc > 1 ? std::max(3, std::atoi(argv[1])) : 40;

  const std::string trace = (std::filesystem::temp_directory_path() / "accordion-gui-bench.trace").string();
  synthetic::SyntheticTraceOptions o;
  o.model = "resnet18";
  o.epochs = 300;
  o.world_size = 4;
  o.decay_epochs = {150, 250};
  synthetic::WriteSyntheticTrace(trace, o);
  std::printf("trace: %s (SYNTHETIC, 300 epochs x 62 layers, %d repetitions)\n\n", trace.c_str(), repetitions);
  std::printf("%-34s %9s %9s   %-34s %9s %9s   %8s\n", "explorer", "median ms", "p95 ms", "baseline", "median ms",
              "p95 ms", "ratio");

  // --- open
  const Stats open = Measure(repetitions, [&](int) { LoadRunData(trace); });
  const Stats view_only = Measure(repetitions, [&](int) { LoadTraceView(trace); });
  Row("open: RunData", open, "epoch tables only", view_only, 300);

  // --- eta slider: re-derive and redraw every view
  ExplorerDocument doc;
  doc.open({QString::fromStdString(trace)});
  doc.waitForLoads();
  WhatIfSettings w;
  w.workers = 64;
  w.topology = sim::Topology::kFatTree;
  doc.setWhatIfSettings(w);
  doc.waitForIdle();
  std::vector<QCustomPlot*> plots;
  for (int i = 0; i < 9; ++i) {
    plots.push_back(new QCustomPlot());
    plots.back()->resize(1200, 600);
    plots.back()->show();
  }
  const RunData& run = *doc.currentRun();
  const std::vector<std::shared_ptr<const RunData>> runs = {doc.currentRun()};
  auto redraw_all = [&] {
    const RegimeAnalysis& a = *doc.regimes();
    DrawGradientNorms(plots[0], run, a, {}, false);
    DrawCheckRatios(plots[1], run, a, {});
    DrawLevelMap(plots[2], run, a);
    DrawProjection(plots[3], *doc.projection());
    DrawBandwidthSweep(plots[4], *doc.sweep(), w.bandwidth_gbps);
    DrawEpochBreakdown(plots[5], *doc.projection());
    DrawAccuracyComparison(plots[6], runs, CompareAxis::kEpoch);
    DrawAccuracyComparison(plots[7], runs, CompareAxis::kFloats);
    DrawIterationTimeline(plots[8], run, doc.projection().get(), 0);
    for (QCustomPlot* p : plots) RefreshFigure(p, true);
  };
  const Stats slider = Measure(repetitions, [&](int i) {
    ScheduleSettings s = doc.scheduleSettings();
    s.eta = 0.1 + 0.8 * (i % 17) / 16.0;
    doc.setScheduleSettings(s);
    redraw_all();
  });
  const Stats cli_route = Measure(repetitions, [&](int i) {
    const TraceView view = LoadTraceView(trace);
    const double eta = 0.1 + 0.8 * (i % 17) / 16.0;
    CompareSchedules(view, Scheme::kPowerSgd, AccordionOptions().eta(eta).level_low(2).level_high(1));
  });
  Row("eta: re-derive + redraw 9 views", slider, "read + derive (analyze schedule)", cli_route, 50);
  doc.waitForIdle();
  // What the app itself does on an eta step with the Regimes tab shown:
  // regimesChanged redraws the two regime plots (the level map waits until
  // its tab is shown; the what-if views redraw on estimateChanged, later).
  const Stats app_step = Measure(repetitions, [&](int i) {
    ScheduleSettings s = doc.scheduleSettings();
    s.eta = 0.1 + 0.8 * ((i + 5) % 17) / 16.0;
    doc.setScheduleSettings(s);
    const RegimeAnalysis& a = *doc.regimes();
    DrawGradientNorms(plots[0], run, a, {}, false);
    DrawCheckRatios(plots[1], run, a, {});
    RefreshFigure(plots[0], true);
    RefreshFigure(plots[1], true);
  });
  Row("eta: app, Regimes tab shown", app_step, "read + derive (analyze schedule)", cli_route, 50);
  doc.waitForIdle();

  // Where the redraw goes: each view drawn and painted on its own.
  const char* names[] = {"gradient norms",  "check ratios",   "level map",       "projection", "bandwidth sweep",
                         "epoch breakdown", "accuracy/epoch", "accuracy/floats", "timeline"};
  std::printf("\n%-34s %9s %9s\n", "one view: draw + replot", "median ms", "p95 ms");
  const Stats derive = Measure(repetitions, [&](int i) {
    ScheduleSettings s = doc.scheduleSettings();
    s.eta = 0.1 + 0.8 * ((i + 1) % 17) / 16.0;
    doc.setScheduleSettings(s);
  });
  std::printf("%-34s %9.2f %9.2f\n", "re-derive only (document)", derive.median_ms, derive.p95_ms);
  for (int v = 0; v < 9; ++v) {
    const Stats one = Measure(repetitions, [&](int) {
      const RegimeAnalysis& a = *doc.regimes();
      switch (v) {
        case 0:
          DrawGradientNorms(plots[0], run, a, {}, false);
          break;
        case 1:
          DrawCheckRatios(plots[1], run, a, {});
          break;
        case 2:
          DrawLevelMap(plots[2], run, a);
          break;
        case 3:
          DrawProjection(plots[3], *doc.projection());
          break;
        case 4:
          DrawBandwidthSweep(plots[4], *doc.sweep(), w.bandwidth_gbps);
          break;
        case 5:
          DrawEpochBreakdown(plots[5], *doc.projection());
          break;
        case 6:
          DrawAccuracyComparison(plots[6], runs, CompareAxis::kEpoch);
          break;
        case 7:
          DrawAccuracyComparison(plots[7], runs, CompareAxis::kFloats);
          break;
        default:
          DrawIterationTimeline(plots[8], run, doc.projection().get(), 0);
          break;
      }
      RefreshFigure(plots[v], true);
    });
    std::printf("%-34s %9.2f %9.2f\n", names[v], one.median_ms, one.p95_ms);
  }
  std::printf("\n");
  doc.waitForIdle();

  // --- what-if
  ScheduleSettings s = doc.scheduleSettings();
  int bandwidth_step = 0;
  const Stats cold = Measure(std::min(repetitions, 10), [&](int) {
    WhatIfSettings fresh = w;
    fresh.bandwidth_gbps = 1 + bandwidth_step++;  // a platform not probed yet
    ProjectWhatIf(run, s, fresh, sim::TimingSource::kAnalytic);
  });
  const Stats warm = Measure(repetitions, [&](int i) {
    s.eta = 0.1 + 0.8 * (i % 17) / 16.0;
    ProjectWhatIf(run, s, w, sim::TimingSource::kAnalytic);
  });
  const Stats simgrid = Measure(3, [&](int) { ProjectWhatIf(run, s, w, sim::TimingSource::kSimulate); });
  Row("what-if: alpha-beta (probe known)", warm, "SimGrid replay, same settings", simgrid, 20);
  Row("what-if: alpha-beta (new platform)", cold, "SimGrid replay, same settings", simgrid, 20);

  // --- the Sweep tab: the eta x interval grid, computed in the document's
  // pool (a schedule and an alpha-beta replay per cell), then drawn on the
  // UI thread. Baselines: the same grid without the replays; the level map.
  const EtaIntervalSweepOptions grid = SweepOptionsFor(run.view().run);
  const int cells = static_cast<int>(grid.etas().size() * grid.intervals().size());
  EtaIntervalSweep swept;
  const Stats grid_full = Measure(std::min(repetitions, 5), [&](int) { swept = SweepEtaInterval(run, s, w, grid); });
  const Stats grid_floats = Measure(std::min(repetitions, 5), [&](int) {
    SweepEtaInterval(run, s, w, EtaIntervalSweepOptions(grid).project_time(false));
  });
  std::printf("%-34s %9.2f %9.2f   %-34s %9.2f %9.2f   %7.2fx   %s\n",
              ("sweep: " + std::to_string(cells) + " cells, alpha-beta").c_str(), grid_full.median_ms, grid_full.p95_ms,
              "floats only (no replays)", grid_floats.median_ms, grid_floats.p95_ms,
              grid_floats.median_ms / grid_full.median_ms, "off the UI thread");
  EtaIntervalMarks marks;
  marks.recorded_eta = run.view().run.eta;
  marks.recorded_interval = run.view().run.interval;
  const Stats grid_draw = Measure(repetitions, [&](int i) {
    marks.current_eta = grid.etas()[static_cast<size_t>(i) % grid.etas().size()];
    DrawEtaIntervalSweep(plots[0], swept, i % 2 ? SweepMetric::kTime : SweepMetric::kFloats, marks);
    RefreshFigure(plots[0], true);
  });
  const Stats map_draw = Measure(repetitions, [&](int) {
    DrawLevelMap(plots[2], run, *doc.regimes());
    RefreshFigure(plots[2], true);
  });
  Row("sweep: draw the heat map", grid_draw, "level map: draw", map_draw, 50);
  for (QCustomPlot* p : plots) delete p;
  std::filesystem::remove(trace);
  return 0;
}
