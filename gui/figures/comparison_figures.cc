// Comparison across runs: test accuracy, training loss or throughput against
// epoch or floats sent.
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "analysis/results_table.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/run_comparison.h"
#include "traces/policy_description.h"

namespace accordion::gui {

namespace {

// The runs' settings, as the results table groups them. When some setting
// has several runs (seeds), the figure draws one colour and one legend
// entry per setting; otherwise one per run, named by its file.
struct SettingGroups {
  std::vector<QString> labels;  // per setting, in order of first appearance
  std::vector<int> runs;        // per setting
  std::vector<int> of_run;      // per run: its setting (-1: no run data)
  bool grouped = false;
};

SettingGroups GroupBySetting(const std::vector<std::shared_ptr<const RunData>>& runs) {
  SettingGroups g;
  std::map<SettingKey, int> index;
  std::set<std::pair<std::string, std::string>> tasks;
  std::set<int> workers;
  std::vector<SettingKey> keys;
  for (const auto& run : runs) {
    if (!run) {
      g.of_run.push_back(-1);
      continue;
    }
    const RunInfo& r = run->view().run;
    tasks.insert({r.model, r.dataset});
    workers.insert(r.world_size);
    const SettingKey key = SettingKeyOf(run->view());
    auto [it, added] = index.emplace(key, static_cast<int>(keys.size()));
    if (added) {
      keys.push_back(key);
      g.labels.push_back(QString::fromStdString(SettingName(r.scheme, r.policy, r.level_low, r.level_high)));
      g.runs.push_back(0);
    }
    g.of_run.push_back(it->second);
    g.grouped = ++g.runs[static_cast<size_t>(it->second)] > 1 || g.grouped;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    // Runs of several models or datasets: say which one a setting is of.
    if (tasks.size() > 1) {
      g.labels[i] +=
          QString(" · %1 / %2")
              .arg(QString::fromStdString(keys[i].training.model), QString::fromStdString(keys[i].training.dataset));
    }
    // ... or of several worker counts: which one (never averaged together).
    if (workers.size() > 1) g.labels[i] += QString(" · %1 workers").arg(keys[i].training.workers);
    if (g.runs[i] > 1) g.labels[i] += QString(" (%1 runs)").arg(g.runs[i]);
  }
  return g;
}

// `metric` of one epoch as drawn (accuracy in %); NaN where not recorded.
double MetricOf(const RunInfo& run, const EpochRecord& e, CompareMetric metric) {
  switch (metric) {
    case CompareMetric::kTestAccuracy:
      return e.test_acc * 100;  // NaN stays NaN
    case CompareMetric::kTrainLoss:
      return e.train_loss;
    case CompareMetric::kThroughput:
      return run.train_samples > 0 && e.total_s > 0 ? run.train_samples / e.total_s : kNotRecorded;
  }
  return kNotRecorded;
}

}  // namespace

const char* ToString(CompareMetric metric) {
  switch (metric) {
    case CompareMetric::kTestAccuracy:
      return "test accuracy";
    case CompareMetric::kTrainLoss:
      return "training loss";
    case CompareMetric::kThroughput:
      return "throughput";
  }
  return "";
}

bool AnyRecorded(const std::vector<std::shared_ptr<const RunData>>& runs, CompareMetric metric) {
  for (const auto& run : runs) {
    if (!run) continue;
    for (const EpochRecord& e : run->view().epochs) {
      if (Recorded(MetricOf(run->view().run, e, metric))) return true;
    }
  }
  return false;
}

void DrawAccuracyComparison(QCustomPlot* plot, const std::vector<std::shared_ptr<const RunData>>& runs,
                            CompareAxis axis, const std::vector<int>& colours, CompareMetric metric) {
  using namespace style;
  const bool floats = axis == CompareAxis::kFloats;
  const SettingGroups groups = GroupBySetting(runs);
  const QString lines = groups.grouped ? "one colour per setting; Accordion solid, static dashed"
                                       : "Accordion runs solid, static and other policies dashed";
  QString what = ToString(metric);
  what[0] = what[0].toUpper();
  const bool accuracy = metric == CompareMetric::kTestAccuracy;
  ResetPlot(plot, what + (floats ? " against data sent" : " against epoch"),
            floats ? QString("floats each worker sent so far (log scale); further left is cheaper for the same ") +
                         (accuracy                              ? "accuracy"
                          : metric == CompareMetric::kTrainLoss ? "loss"
                                                                : "throughput") +
                         (groups.grouped ? "; one colour per setting" : "")
                   : lines);
  StyleAxis(plot->xAxis, floats ? "floats sent per worker (cumulative)" : "epoch");
  if (!floats) MakeWholeNumberAxis(plot->xAxis);
  StyleAxis(plot->yAxis, accuracy                              ? "test accuracy (%)"
                         : metric == CompareMetric::kTrainLoss ? "training loss"
                                                               : "throughput (samples/s)");
  if (floats) MakeLogAxis(plot->xAxis);

  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  std::vector<QPen> setting_pens(groups.labels.size());
  const std::vector<int> palette = colours.size() >= runs.size() ? colours : RunColours(runs);
  bool any_epoch = false;  // a run with epochs, recorded accuracy or not
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto& run = runs[r];
    if (!run) continue;
    const TraceView& view = run->view();
    // Named by its file even where the legend names its setting: the
    // figure's data export keeps each run apart.
    QCPGraph* g = plot->addGraph(plot->xAxis, plot->yAxis);
    g->setName(QString::fromStdString(run->summary.name));
    const bool accordion = DescriptionOf(view.run.policy).critical_regimes;
    const int setting = groups.of_run[r];
    const QPen pen(PaletteColor(palette[r]), accordion ? 2.2 : 1.6, accordion ? Qt::SolidLine : Qt::DashLine);
    g->setPen(pen);
    if (groups.grouped) {
      g->removeFromLegend();
      setting_pens[static_cast<size_t>(setting)] = pen;
    }
    QVector<double> x, y;
    double cumulative = 0;
    for (const EpochRecord& e : view.epochs) {
      cumulative += e.floats_sent;
      const double key = floats ? cumulative : e.epoch;
      if (floats && !(key > 0)) continue;
      any_epoch = true;
      const double value = MetricOf(view.run, e, metric);
      if (!Recorded(value)) continue;  // not recorded: no point, never 0 %
      x.push_back(key);
      y.push_back(value);
    }
    g->setData(x, y, true);
    for (int i = 0; i < x.size(); ++i) {
      xlo = std::min(xlo, x[i]);
      xhi = std::max(xhi, x[i]);
    }
    // The tail of training decides the y range: the first epochs often sit
    // far below and would squash the differences that matter. A short run
    // has no tail to speak of: every point is in range.
    const int n = static_cast<int>(y.size());
    const int from = n < 8 ? 0 : n - std::max(3, n * 3 / 4);
    for (int i = from; i < y.size(); ++i) {
      ylo = std::min(ylo, y[i]);
      yhi = std::max(yhi, y[i]);
    }
  }
  if (groups.grouped) {
    for (size_t s = 0; s < groups.labels.size(); ++s) {
      AddLegendLine(plot, groups.labels[s], setting_pens[s].color(), setting_pens[s].style(), setting_pens[s].widthF());
    }
  }
  if (!(xhi >= xlo)) {
    AddMessage(plot, any_epoch ? "No run recorded a " + QString(ToString(metric)) : QString("No runs to compare"));
    plot->xAxis->setRange(floats ? 1 : 0, floats ? 10 : 1);
    plot->yAxis->setRange(0, accuracy ? 100 : 1);
    return;
  }
  if (floats) {
    plot->xAxis->setRange(xlo / 1.5, xhi * 1.5);
  } else {
    plot->xAxis->setRange(xlo - 0.5, xhi + 0.5);
  }
  const double pad = std::max(accuracy ? 0.5 : 1e-9, (yhi - ylo) * 0.08);
  plot->yAxis->setRange(std::max(0.0, ylo - pad * 3), accuracy ? std::min(100.0, yhi + pad) : yhi + pad);
  // Above the plot: inside, it sat on the curves.
  PlaceLegendTop(plot, 3);
}

}  // namespace accordion::gui
