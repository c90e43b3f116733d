// The η × interval sweep as a heat map: what Accordion saves against static
// low in each cell, written in the cell, with the recorded and the explored
// settings outlined.
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "analysis/schedule_report.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/headlines.h"

namespace accordion::gui {

namespace {

QString Eta(double eta) { return QString::number(eta, 'g', 3); }

// "41 %", "−3 %", "0.4 %": the cell's label, as precise as its size allows.
QString Percent(double fraction) {
  const double p = fraction * 100;
  const QString digits = QString::number(std::fabs(p), 'f', std::fabs(p) < 1 && p != 0 ? 1 : 0);
  return (p < 0 && digits.toDouble() != 0 ? QString("−") : QString()) + digits + " %";
}

QString LevelPair(const EtaIntervalSweep& sweep) {
  const Scheme scheme = sweep.resolved.scheme;
  return QString("%1 / %2").arg(QString::fromStdString(LevelName(scheme, sweep.resolved.level_low)),
                                QString::fromStdString(LevelName(scheme, sweep.resolved.level_high)));
}

// "41 % fewer than static low", "as many as dense", "12 % more than static high".
QString FloatsAgainst(double floats, double other, const QString& name) {
  if (!(other > 0)) return {};
  if (floats == other) return "as many as " + name;
  const double change = floats / other - 1;
  return QString("%1 %2 than %3").arg(Percent(std::fabs(change)), change < 0 ? "fewer" : "more", name);
}

void Outline(QCustomPlot* plot, int x, int y, const QPen& pen) {
  auto* rect = new QCPItemRect(plot);
  // On the cell's edges, clear of the numbers inside.
  rect->topLeft->setCoords(x - 0.5, y + 0.5);
  rect->bottomRight->setCoords(x + 0.5, y - 0.5);
  rect->setPen(pen);
  rect->setBrush(Qt::NoBrush);
  rect->setClipToAxisRect(true);
}

int IndexOf(const std::vector<double>& values, double v) {
  const auto it = std::find(values.begin(), values.end(), v);
  return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

int IndexOf(const std::vector<int>& values, int v) {
  const auto it = std::find(values.begin(), values.end(), v);
  return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

// η across, the check interval up, each cell's value at its tick.
void SetUpSweepAxes(QCustomPlot* plot, const EtaIntervalSweep& sweep) {
  using namespace style;
  plot->legend->setVisible(false);
  StyleAxis(plot->xAxis, "η: relative change of ‖Δ‖ that counts as critical");
  StyleAxis(plot->yAxis, "check interval (epochs)");
  plot->xAxis->grid()->setVisible(false);
  plot->yAxis->grid()->setVisible(false);
  const int nx = static_cast<int>(sweep.etas.size());
  const int ny = static_cast<int>(sweep.intervals.size());
  plot->xAxis->setRange(-0.5, std::max(0.5, nx - 0.5));
  plot->yAxis->setRange(-0.5, std::max(0.5, ny - 0.5));
  QSharedPointer<QCPAxisTickerText> etas(new QCPAxisTickerText);
  for (int i = 0; i < nx; ++i) etas->addTick(i, Eta(sweep.etas[static_cast<size_t>(i)]));
  QSharedPointer<QCPAxisTickerText> intervals(new QCPAxisTickerText);
  for (int j = 0; j < ny; ++j) intervals->addTick(j, QString::number(sweep.intervals[static_cast<size_t>(j)]));
  plot->xAxis->setTicker(etas);
  plot->yAxis->setTicker(intervals);
  plot->xAxis->setSubTicks(false);
  plot->yAxis->setSubTicks(false);
}

// Saved fractions in percent; the scale spans zero so that white means
// "saves nothing", blue saving (the high level's colour: what Accordion
// saves comes from compressing hard) and orange costing more.
QCPColorGradient SavedGradient(double lo, double hi) {
  using namespace style;
  QCPColorGradient gradient;
  gradient.clearColorStops();
  const double zero = (0 - lo) / (hi - lo);
  if (zero > 0) gradient.setColorStopAt(0, LevelLowColor());
  gradient.setColorStopAt(zero, BackgroundColor());
  if (zero < 1) gradient.setColorStopAt(1, LevelHighColor());
  gradient.setNanHandling(QCPColorGradient::nhTransparent);
  gradient.setLevelCount(350);
  return gradient;
}

// Each cell's number in it, dark or light by what lies beneath, and its
// critical epochs under it. `gradient` by value: QCPColorGradient::color
// is not const.
void LabelCells(QCustomPlot* plot, const EtaIntervalSweep& sweep, SweepMetric metric, QCPColorGradient gradient,
                const QCPRange& range) {
  using namespace style;
  QFont number = TickFont();
  number.setBold(true);
  QFont detail = TickFont();
  detail.setPointSizeF(std::max(7.0, detail.pointSizeF() - 1));
  for (int j = 0; j < static_cast<int>(sweep.intervals.size()); ++j) {
    for (int i = 0; i < static_cast<int>(sweep.etas.size()); ++i) {
      const SweepCell& c = sweep.at(i, j);
      const double v = sweep.Saved(c, metric);
      auto* label = new QCPItemText(plot);
      label->setClipToAxisRect(true);
      label->position->setCoords(i, j);
      label->setPositionAlignment(Qt::AlignCenter);
      label->setTextAlignment(Qt::AlignCenter);
      label->setFont(number);
      const QColor under = std::isfinite(v) ? QColor(gradient.color(v * 100, range)) : BackgroundColor();
      label->setColor(under.lightnessF() < 0.62 ? QColor(Qt::white) : QColor(0x22, 0x22, 0x22));
      label->setText(std::isfinite(v) ? Percent(v) : QString("–"));
      auto* sub = new QCPItemText(plot);
      sub->setClipToAxisRect(true);
      sub->position->setParentAnchor(label->bottom);
      sub->position->setType(QCPItemPosition::ptAbsolute);
      sub->position->setCoords(0, 0);
      sub->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
      sub->setFont(detail);
      sub->setColor(label->color());
      sub->setText(QString("%1 low").arg(c.low_level_epochs));
    }
  }
}

// The recorded setting outlined solid, the explored one dashed, each with
// its legend line.
void OutlineSettings(QCustomPlot* plot, const EtaIntervalSweep& sweep, const EtaIntervalMarks& marks) {
  using namespace style;
  const int rx = IndexOf(sweep.etas, marks.recorded_eta);
  const int ry = IndexOf(sweep.intervals, marks.recorded_interval);
  const int cx = IndexOf(sweep.etas, marks.current_eta);
  const int cy = IndexOf(sweep.intervals, marks.current_interval);
  const bool recorded = rx >= 0 && ry >= 0;
  const bool current = cx >= 0 && cy >= 0 && !(cx == rx && cy == ry);
  const QPen recorded_pen(GuideColor(), 3);
  QPen current_pen(GuideColor(), 2, Qt::DashLine);
  if (recorded) {
    Outline(plot, rx, ry, recorded_pen);
    AddLegendLine(plot,
                  QString("as recorded: η %1, interval %2").arg(Eta(marks.recorded_eta)).arg(marks.recorded_interval),
                  GuideColor(), Qt::SolidLine, 3);
  }
  if (current) {
    Outline(plot, cx, cy, current_pen);
    AddLegendLine(plot, QString("explored: η %1, interval %2").arg(Eta(marks.current_eta)).arg(marks.current_interval),
                  GuideColor(), Qt::DashLine, 2);
  }
}

}  // namespace

void DrawEtaIntervalSweep(QCustomPlot* plot, const EtaIntervalSweep& sweep, SweepMetric metric,
                          const EtaIntervalMarks& marks) {
  using namespace style;
  const bool time = metric == SweepMetric::kTime;
  const QString what = time ? "Time" : "Floats";
  const QString title = sweep.schedulable
                            ? QString("%1 Accordion (%2) saves against static low").arg(what, LevelPair(sweep))
                            : QString("%1 saved by η and check interval").arg(what);
  const QString headline =
      QString::fromStdString(EtaIntervalHeadline(sweep, metric, marks.recorded_eta, marks.recorded_interval));
  ResetPlot(plot, title, headline.isEmpty() ? QString() : headline + ".");
  SetUpSweepAxes(plot, sweep);
  if (!sweep.schedulable) {
    AddMessage(plot, "Nothing to sweep: " + QString::fromStdString(sweep.problem));
    return;
  }
  if (time && !sweep.has_time) {
    AddMessage(plot, "No projected time: " + QString::fromStdString(sweep.time_problem));
    return;
  }

  double lo = 0, hi = 0;
  for (const SweepCell& c : sweep.cells) {
    const double v = sweep.Saved(c, metric);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v * 100);
    hi = std::max(hi, v * 100);
  }
  if (hi - lo < 1e-9) hi = lo + 1;
  const QCPColorGradient gradient = SavedGradient(lo, hi);
  const int nx = static_cast<int>(sweep.etas.size());
  const int ny = static_cast<int>(sweep.intervals.size());
  auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
  map->setName(time ? "time saved against static low (%)" : "floats saved against static low (%)");
  map->data()->setSize(nx, ny);
  map->data()->setRange(QCPRange(0, std::max(1, nx - 1)), QCPRange(0, std::max(1, ny - 1)));
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      map->data()->setCell(i, j, sweep.Saved(sweep.at(i, j), metric) * 100);
    }
  }
  map->setInterpolate(false);
  map->setTightBoundary(false);
  QCPColorScale* scale = AddColorScale(plot, map, gradient, lo, hi, 16);
  StyleAxis(scale->axis(), time ? "time saved vs static low (%)" : "floats saved vs static low (%)");

  LabelCells(plot, sweep, metric, gradient, QCPRange(lo, hi));
  OutlineSettings(plot, sweep, marks);
  // The colour map has its own scale, not a legend entry.
  plot->legend->removeItem(plot->legend->itemWithPlottable(map));
  if (plot->legend->itemCount() > 0) {
    plot->legend->setVisible(true);
    PlaceLegendTop(plot, 2);
  }
}

bool EtaIntervalCellAt(const EtaIntervalSweep& sweep, double x, double y, int* eta_index, int* interval_index) {
  if (!std::isfinite(x) || !std::isfinite(y)) return false;
  const long i = std::lround(x);
  const long j = std::lround(y);
  if (i < 0 || j < 0 || i >= static_cast<long>(sweep.etas.size()) || j >= static_cast<long>(sweep.intervals.size())) {
    return false;
  }
  if (eta_index) *eta_index = static_cast<int>(i);
  if (interval_index) *interval_index = static_cast<int>(j);
  return !sweep.cells.empty();
}

QString EtaIntervalTooltip(const EtaIntervalSweep& sweep, const SweepCell& cell) {
  QStringList lines;
  lines << QString("η %1, a check every %2 epoch%3")
               .arg(Eta(cell.eta))
               .arg(cell.interval)
               .arg(cell.interval == 1 ? "" : "s");
  lines << QString("%1: %2 of %3 epochs").arg(kLowLevelTerm).arg(cell.low_level_epochs).arg(sweep.epochs);
  const Scheme scheme = sweep.resolved.scheme;
  const QString low = "static low (" + QString::fromStdString(LevelName(scheme, sweep.resolved.level_low)) + ")";
  const QString high = "static high (" + QString::fromStdString(LevelName(scheme, sweep.resolved.level_high)) + ")";
  QStringList floats;
  for (const QString& s :
       {FloatsAgainst(cell.floats, sweep.low_floats, low), FloatsAgainst(cell.floats, sweep.high_floats, high),
        FloatsAgainst(cell.floats, sweep.dense_floats, "dense")}) {
    if (!s.isEmpty()) floats << s;
  }
  lines << QString("floats per worker: %1%2")
               .arg(style::Sci(cell.floats), floats.isEmpty() ? "" : ", " + floats.join(", "));
  if (sweep.has_time && std::isfinite(cell.time_s)) {
    QStringList times;
    for (const std::string& s : {CompareTimes(cell.time_s, sweep.low_time_s, "static low"),
                                 CompareTimes(cell.time_s, sweep.high_time_s, "static high"),
                                 CompareTimes(cell.time_s, sweep.dense_time_s, "dense")}) {
      if (!s.empty()) times << QString::fromStdString(s);
    }
    lines << QString("time to train (α–β estimate): %1%2")
                 .arg(style::Seconds(cell.time_s), times.isEmpty() ? "" : ", " + times.join(", "));
  } else if (!sweep.time_problem.empty()) {
    lines << "no projected time: " + QString::fromStdString(sweep.time_problem);
  }
  return lines.join("\n");
}

}  // namespace accordion::gui
