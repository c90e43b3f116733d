// What-if views: projected time to train, the bandwidth sweep and the
// per-epoch breakdown.
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/headlines.h"
#include "simulator/collectives.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

struct Component {
  const char* name;
  QColor color;
  double sim::EpochProjection::*field;
};

const std::vector<Component>& Components() {
  static const std::vector<Component> components = {
      {"compute", QColor(0x56, 0xB4, 0xE9), &sim::EpochProjection::compute_s},
      {"compression", QColor(0x00, 0x9E, 0x73), &sim::EpochProjection::compress_s},
      {"exposed communication", QColor(0xD5, 0x5E, 0x00), &sim::EpochProjection::exposed_comm_s},
      {"decompression + optimizer", QColor(0xAA, 0xAA, 0xAA), &sim::EpochProjection::other_s},
  };
  return components;
}

QString ModelWords(sim::TimingSource kind) {
  return kind == sim::TimingSource::kSimulate ? "SimGrid replay" : "α–β estimate";
}

QString ClusterLine(const sim::ReplayResult& r) {
  return QString("%1 workers on %2").arg(r.workers).arg(QString::fromStdString(r.platform));
}

// Stacked bars, one QCPBars per component, bottom to top; returns the bars.
std::vector<QCPBars*> StackedBars(QCustomPlot* plot, const QVector<double>& keys,
                                  const std::vector<QVector<double>>& values, double width) {
  std::vector<QCPBars*> bars;
  const auto& components = Components();
  for (size_t c = 0; c < components.size(); ++c) {
    auto* b = new QCPBars(plot->xAxis, plot->yAxis);
    b->setName(components[c].name);
    b->setWidth(width);
    b->setStackingGap(0);
    b->setBrush(QBrush(components[c].color));
    if (keys.size() > 60) {
      // Hundreds of thin bars: outlines would be all one sees of them, and
      // antialiasing them is most of the redraw.
      b->setPen(Qt::NoPen);
      b->setAntialiased(false);
    } else {
      b->setPen(QPen(components[c].color.darker(125), 0.8));
    }
    b->setData(keys, values[c], true);
    if (!bars.empty()) b->moveAbove(bars.back());
    bars.push_back(b);
  }
  return bars;
}

void AddLabel(QCustomPlot* plot, double key, double value, const QString& text, bool bold) {
  auto* label = new QCPItemText(plot);
  label->position->setAxes(plot->xAxis, plot->yAxis);
  label->position->setType(QCPItemPosition::ptPlotCoords);
  label->position->setCoords(key, value);
  label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  label->setTextAlignment(Qt::AlignCenter);
  label->setPadding(QMargins(2, 2, 2, 4));
  QFont f = style::LabelFont();
  f.setPointSizeF(10);
  f.setBold(bold);
  label->setFont(f);
  label->setText(text);
  label->setClipToAxisRect(false);
}

}  // namespace

void DrawProjection(QCustomPlot* plot, const WhatIfProjection& projection) {
  using namespace style;
  const sim::ReplayResult& r = projection.result;
  // The speedups head the subtitle: as labels over the Accordion bar they ran
  // into the neighbouring bars' labels at the app's widths. The title names
  // the model; the subtitle adds only the all-reduce to the cluster.
  const double accordion_s = r.accordion.total.time_s;
  // A scheme without levels (dense, a cast) has no schedule: its static and
  // "Accordion" projections are one and the same, so they are not drawn as
  // three bars "as fast as dense".
  const SchemeDescription& scheme = DescriptionOf(r.scheme);
  const bool schedule = scheme.has_levels();
  // Against dense only: with static low too the cluster line is cut off in
  // the app's plot (the table's tooltip has all three).
  const std::string against = schedule ? ProjectionHeadline(accordion_s, projection.dense.total.time_s, 0, 0)
                                       : "No schedule: " + std::string(scheme.title) + " has no levels to switch";
  // Within the prediction bands a ratio is no ranking: said beside it.
  const bool overlap = schedule && r.accordion.total.time_band().Overlaps(projection.dense.total.time_band());
  const QString speedups =
      against.empty() ? QString()
                      : QString::fromStdString(against) +
                            (overlap ? " — their bands overlap: not distinguishable on this trace" : "") + " — ";
  ResetPlot(
      plot, "Projected time to train — " + ModelWords(projection.timing),
      speedups + ClusterLine(r) + ", " + QString::fromStdString(sim::DescribeAllReduce(r.allreduce, r.collective)));
  StyleAxis(plot->xAxis, "schedule");
  StyleAxis(plot->yAxis, "time to train (s)");
  plot->xAxis->grid()->setVisible(false);

  std::vector<const sim::ScheduleProjection*> schedules = {&projection.dense, &r.static_low, &r.static_high,
                                                           &r.accordion};
  if (!schedule) {
    schedules = {&projection.dense};
    if (!scheme.dense_baseline) schedules.push_back(&r.static_low);  // the cast beside dense
  }
  QVector<double> keys;
  std::vector<QVector<double>> values(Components().size());
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double top = 0;
  for (size_t i = 0; i < schedules.size(); ++i) {
    const sim::ScheduleProjection& s = *schedules[i];
    const double key = static_cast<double>(i + 1);
    keys.push_back(key);
    for (size_t c = 0; c < Components().size(); ++c) values[c].push_back(s.total.*(Components()[c].field));
    const bool accordion = schedule && i + 1 == schedules.size();
    // Accordion's levels are the two static bars' labels and are in the
    // subtitles: "Accordion TopK 99% / TopK 10%" is wider than its slot.
    QString label = accordion ? QString("Accordion") : QString::fromStdString(s.label.empty() ? s.name : s.label);
    if (!schedule && i > 0) label = QString::fromUtf8(scheme.title);
    if (label.isEmpty()) label = i == 0 ? "dense" : "";
    // "static rank 2" over two lines ("static" / "rank 2"): one line runs
    // into the next bar's label in a narrow plot, and a last label wider
    // than its slot is not drawn at all.
    const int space = label.indexOf(' ');
    if (space > 0) label[space] = '\n';
    ticker->addTick(key, label);
    top = std::max(top, s.total.time_s);
  }
  StackedBars(plot, keys, values, 0.6);
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setSubTicks(false);
  plot->xAxis->setTickLength(0, 0);
  plot->xAxis->setRange(0.4, schedules.size() + 0.6);
  plot->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);

  // Each bar's prediction band as a whisker: the range that held 90 % of the
  // trace's recorded steps, carried through the model. The label sits above
  // it, where it cannot be read as the band's end.
  bool any_band = false;
  for (size_t i = 0; i < schedules.size(); ++i) {
    const sim::EpochProjection& total = schedules[i]->total;
    const double key = static_cast<double>(i + 1);
    const bool banded = total.time_high_s > total.time_low_s;
    if (banded) {
      auto* whisker = new QCPItemLine(plot);
      whisker->start->setCoords(key, total.time_low_s);
      whisker->end->setCoords(key, total.time_high_s);
      whisker->setPen(QPen(GuideColor(), 1.3));
      whisker->setHead(QCPLineEnding(QCPLineEnding::esBar, 10));
      whisker->setTail(QCPLineEnding(QCPLineEnding::esBar, 10));
      any_band = true;
      top = std::max(top, total.time_high_s);
    }
    const bool accordion = i + 1 == schedules.size();
    AddLabel(plot, key, banded ? std::max(total.time_s, total.time_high_s) : total.time_s, SecondsOnAxis(total.time_s),
             accordion);
  }
  plot->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
  if (any_band) AddLegendLine(plot, "band: 90 % of the recorded steps", GuideColor(), Qt::SolidLine, 1.3);
  PlaceLegendTop(plot, any_band ? 3 : 4);
}

void DrawBandwidthSweep(QCustomPlot* plot, const std::vector<SweepPointResult>& sweep, double current_gbps) {
  using namespace style;
  ResetPlot(plot, "Speedup against bandwidth (α–β estimate)", QString::fromStdString(SweepHeadline(sweep)));
  StyleAxis(plot->xAxis, "bandwidth (Gb/s)");
  StyleAxis(plot->yAxis, "speedup (×)");
  MakeLogAxis(plot->xAxis);

  struct Line {
    QString name;
    QColor color;
    Qt::PenStyle pen;
    double (*value)(const SweepPointResult&);
  };
  const std::vector<Line> lines = {
      // Static high first, underneath: it often lies on Accordion's curve.
      {"static high vs dense", PaletteColor(2), Qt::DashLine,
       [](const SweepPointResult& p) { return p.dense_s / p.static_high_s; }},
      {"Accordion vs dense", PaletteColor(0), Qt::SolidLine,
       [](const SweepPointResult& p) { return p.dense_s / p.accordion_s; }},
      {"Accordion vs static low", PaletteColor(1), Qt::SolidLine,
       [](const SweepPointResult& p) { return p.static_low_s / p.accordion_s; }},
  };
  double lo = 1, hi = 1;
  double xlo = std::numeric_limits<double>::infinity(), xhi = 0;
  for (const Line& line : lines) {
    QCPGraph* g = plot->addGraph(plot->xAxis, plot->yAxis);
    g->setName(line.name);
    const bool under = line.pen != Qt::SolidLine;
    g->setPen(QPen(line.color, under ? 2.6 : 1.8, line.pen));
    if (!under) SetDiscScatter(g, line.color, 4 + 1.8);
    QVector<double> x, y;
    for (const SweepPointResult& p : sweep) {
      const double v = line.value(p);
      if (!(p.bandwidth_gbps > 0) || !std::isfinite(v) || !(v > 0)) continue;
      x.push_back(p.bandwidth_gbps);
      y.push_back(v);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      xlo = std::min(xlo, p.bandwidth_gbps);
      xhi = std::max(xhi, p.bandwidth_gbps);
    }
    g->setData(x, y, true);
  }
  if (current_gbps > 0) {
    xlo = std::min(xlo, current_gbps);
    xhi = std::max(xhi, current_gbps);
  }
  if (!(xhi > 0)) {
    xlo = 0.1;
    xhi = 100;
    AddMessage(plot, "No sweep yet");
  }
  plot->xAxis->setRange(xlo / 1.3, xhi * 1.3);
  if (hi / lo > 8) {
    // The figures' log ticker: 1-2-5 labels on the decade or two a sweep spans.
    MakeLogAxis(plot->yAxis, "×");
    plot->yAxis->setRange(lo / 1.3, hi * 1.6);
  } else {
    const double pad = std::max(0.05, (hi - lo) * 0.1);
    plot->yAxis->setRange(std::max(0.0, lo - pad), hi + pad * 2.5);
  }
  // The 1× line and the current bandwidth labelled on the plot rather than
  // in the legend, which sits above the plot and costs its height.
  AddHorizontalLine(plot, 1, GuideColor(), Qt::DashLine, 1.2);
  if (current_gbps > 0) {
    const QColor current(0xCC, 0x79, 0xA7);
    AddVerticalLine(plot, current_gbps, current, Qt::DotLine, 2);
    auto* label = new QCPItemText(plot);
    label->setClipToAxisRect(true);
    label->position->setAxes(plot->xAxis, plot->yAxis);
    label->position->setAxisRect(plot->axisRect());
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(current_gbps, 0.0);
    const bool right_half = std::log(current_gbps / (xlo / 1.3)) > 0.5 * std::log((xhi * 1.3) / (xlo / 1.3));
    label->setPositionAlignment(Qt::AlignTop | (right_half ? Qt::AlignRight : Qt::AlignLeft));
    label->setPadding(QMargins(4, 3, 4, 1));
    label->setFont(LegendFont());
    label->setColor(current.darker(130));
    label->setText(QString("current: %1 Gb/s").arg(current_gbps, 0, 'g', 4));
  }
  // Above the plot: inside, it sat on the curves.
  PlaceLegendTop(plot, 3);
}

void DrawEpochBreakdown(QCustomPlot* plot, const WhatIfProjection& projection) {
  using namespace style;
  const sim::ReplayResult& r = projection.result;
  if (DescriptionOf(r.scheme).has_levels()) {
    ResetPlot(plot, "Accordion's projected epochs — " + ModelWords(projection.timing),
              ClusterLine(r) + "; " + QString::fromStdString(r.accordion.label) +
                  "; shaded: epochs whose low-level layers change the traffic");
  } else {
    ResetPlot(plot, "Projected epochs — " + ModelWords(projection.timing),
              ClusterLine(r) + "; " + DescriptionOf(r.scheme).title + ": no levels, no schedule");
  }
  StyleAxis(plot->xAxis, "epoch");
  MakeWholeNumberAxis(plot->xAxis);
  StyleAxis(plot->yAxis, "time per epoch (s)");
  plot->xAxis->grid()->setVisible(false);

  QVector<double> keys;
  std::vector<QVector<double>> values(Components().size());
  double top = 0;
  for (const sim::EpochProjection& e : r.accordion.epochs) {
    keys.push_back(e.epoch);
    for (size_t c = 0; c < Components().size(); ++c) values[c].push_back(e.*(Components()[c].field));
    top = std::max(top, e.time_s);
  }
  StackedBars(plot, keys, values, 0.8);
  // Shaded as the Regimes tab shades the same schedule: one meaning per colour.
  for (const Band& b : projection.low_level_bands) AddBand(plot, b.first - 0.5, b.last + 0.5, BandColor());
  for (const Band& b : projection.no_effect_bands) AddBand(plot, b.first - 0.5, b.last + 0.5, NoEffectBandColor());
  if (!projection.low_level_bands.empty()) AddLegendSwatch(plot, kLowLevelTerm, BandColor());
  if (!projection.no_effect_bands.empty()) AddLegendSwatch(plot, kNoEffectTerm, NoEffectBandColor());
  const double n = keys.isEmpty() ? 1 : keys.back() + 1;
  plot->xAxis->setRange(keys.isEmpty() ? -0.5 : keys.front() - 0.6, n - 0.4);
  plot->yAxis->setRange(0, top > 0 ? top * 1.08 : 1);
  if (keys.isEmpty()) AddMessage(plot, "No epochs projected");
  PlaceLegendTop(plot, 5);
}

QString PolicyBarLabel(const PolicyRow& row) {
  struct Short {
    const char* name;
    const char* shown;
    const char* prefix;  // of the label, dropped on the second line
  };
  static const Short kShort[] = {{"static-low", "static low", "static "},
                                 {"static-high", "static high", "static "},
                                 {"accordion", "Accordion", "Accordion "},
                                 {"adaqs", "AdaQS", "AdaQS "},
                                 {"smith", "Smith et al.", "Smith et al. "}};
  const QString label = QString::fromStdString(PolicyDisplayLabel(row));
  for (const Short& s : kShort) {
    if (row.name != s.name) continue;
    QString levels = label;
    if (levels.startsWith(s.prefix)) levels.remove(0, static_cast<int>(qstrlen(s.prefix)));
    return QString(s.shown) + "\n" + levels;
  }
  return label;
}

void DrawPolicyComparison(QCustomPlot* plot, const PolicyTable& table) {
  using namespace style;
  // The policies, then dense and the 16-bit casts where they were projected.
  std::vector<PolicyRow> rows;
  for (const PolicyRow* row : table.AllRows()) rows.push_back(*row);
  if (table.comparison.rows.empty()) {
    ResetPlot(plot, "Policies");
    AddMessage(plot, QString::fromStdString(table.problem.empty() ? "No policy to compare" : table.problem));
    return;
  }
  const bool projected = table.projected();
  const double base_s = rows.front().projected_s.value_or(0);
  const double base_floats = rows.front().cost.total_floats;
  if (projected) {
    ResetPlot(plot, "Policies: projected time to train — " + ModelWords(table.timing),
              ClusterLine(*table.replay) + "; above each bar its time and its speedup over static low");
    StyleAxis(plot->yAxis, "time to train (s)");
  } else {
    ResetPlot(plot, "Policies: floats each worker sends",
              "not projected: " + QString::fromStdString(table.projection_problem) +
                  "; above each bar how many times fewer floats than static low");
    StyleAxis(plot->yAxis, "floats sent per worker");
  }
  StyleAxis(plot->xAxis, "policy");
  plot->xAxis->grid()->setVisible(false);

  QVector<double> keys;
  std::vector<QVector<double>> values(Components().size());
  QVector<double> floats;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double top = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double key = static_cast<double>(i + 1);
    keys.push_back(key);
    ticker->addTick(key, PolicyBarLabel(rows[i]));
    if (projected) {
      const sim::ScheduleProjection* p = table.projectionOf(i);
      for (size_t c = 0; c < Components().size(); ++c) values[c].push_back(p ? p->total.*(Components()[c].field) : 0);
      top = std::max(top, rows[i].projected_s.value_or(0));
    } else {
      floats.push_back(rows[i].cost.total_floats);
      top = std::max(top, rows[i].cost.total_floats);
    }
  }
  if (projected) {
    StackedBars(plot, keys, values, 0.6);
    PlaceLegendTop(plot, 4);
  } else {
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setName("floats per worker");
    bars->setWidth(0.6);
    bars->setBrush(QBrush(PaletteColor(0)));
    bars->setPen(QPen(PaletteColor(0).darker(125), 0.8));
    bars->setData(keys, floats, true);
    bars->removeFromLegend();
    plot->legend->setVisible(false);
  }
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setSubTicks(false);
  plot->xAxis->setTickLength(0, 0);
  plot->xAxis->setRange(0.4, static_cast<double>(rows.size()) + 0.6);
  plot->yAxis->setRange(0, top > 0 ? top * 1.18 : 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool baseline = i == 0;
    if (projected) {
      const double t = rows[i].projected_s.value_or(0);
      const QString speedup = QString::fromStdString(PolicyRatioText(t > 0 ? base_s / t : 0));
      AddLabel(plot, keys[static_cast<int>(i)], t, SecondsOnAxis(t) + "\n" + speedup, !baseline && base_s / t > 1.005);
    } else {
      const double f = rows[i].cost.total_floats;
      AddLabel(plot, keys[static_cast<int>(i)], f,
               Sci(f) + "\n" + QString::fromStdString(PolicyRatioText(f > 0 ? base_floats / f : 0)), false);
    }
  }
}

}  // namespace accordion::gui
