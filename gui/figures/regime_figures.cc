// Regime views: gradient norms, check ratios and the level map.
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "analysis/communication_accounting.h"
#include "analysis/schedule_report.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/figures/smoothing.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

// Layers in the legend before "+N more": 8, or 2 in a plot narrower than
// kWideLegendPlot, where a legend of 8 took two columns beside a plot
// narrower than itself (Regimes at 1280×720: with the bands, the strip, LR
// decay, the checks and the Hessian, 3 still spilled one entry into a second
// column); the layer list names them all.
constexpr int kWideLegendPlot = 900;

std::vector<int> ShownLayers(const RunData& run, const std::vector<int>& layers) {
  std::vector<int> shown;
  for (int l : layers) {
    if (l >= 0 && l < run.view().num_layers()) shown.push_back(l);
  }
  if (shown.empty()) {
    for (int l = 0; l < run.view().num_layers(); ++l) shown.push_back(l);
  }
  return shown;
}

QString RunName(const RunData& run) { return QString::fromStdString(run.summary.name); }

QString SettingsLine(const RegimeAnalysis& analysis) {
  return QString("η = %1, a check every %2 epoch%3")
      .arg(analysis.options.eta())
      .arg(analysis.options.interval())
      .arg(analysis.options.interval() == 1 ? "" : "s");
}

// Bands and recorded strip (on the "bands" layer), LR decays and check
// ticks (on the "regimes" layer) shared by the norm and ratio figures: what
// an incremental redraw swaps.
void DrawRegimeItems(QCustomPlot* plot, const RegimeAnalysis& analysis, const std::vector<Band>& bands,
                     const std::vector<Band>& no_effect, const std::vector<Band>& recorded) {
  using namespace style;
  // Made on the layer they go to: made on another and moved, they would
  // mark that layer's paint buffer for a redraw too.
  QCPLayer* previous = plot->currentLayer();
  plot->setCurrentLayer("bands");
  for (const Band& b : bands) AddBand(plot, b.first - 0.5, b.last + 0.5, BandColor());
  for (const Band& b : no_effect) AddBand(plot, b.first - 0.5, b.last + 0.5, NoEffectBandColor());
  for (const Band& b : recorded) AddBand(plot, b.first - 0.5, b.last + 0.5, RecordedStripColor(), 0.975, 1.0);
  plot->setCurrentLayer(kRegimesLayer);
  for (int e : analysis.lr_decay_epochs) AddVerticalLine(plot, e + 0.5, GuideColor(), Qt::DashLine, 1.2);
  // Check ticks along the top edge: one item for all of them.
  std::vector<double> checks(analysis.check_epochs.begin(), analysis.check_epochs.end());
  AddKeyTicks(plot, checks, 0.025, QPen(GuideColor(), 1.5));
  plot->setCurrentLayer(previous);
}

// The legend entries of DrawRegimeItems' items.
void AddRegimeLegend(QCustomPlot* plot, const RegimeAnalysis& analysis, const std::vector<Band>& no_effect,
                     const std::vector<Band>& recorded, bool check_legend) {
  using namespace style;
  // Shaded orange only where a layer runs a low level that changes its
  // traffic (regime_analysis.h's vocabulary); a critical epoch that changes
  // nothing is grey.
  if (analysis.schedulable) AddLegendSwatch(plot, kLowLevelTerm, BandColor());
  if (!no_effect.empty()) AddLegendSwatch(plot, kNoEffectTerm, NoEffectBandColor());
  if (!recorded.empty()) {
    AddLegendSwatch(
        plot, analysis.recorded_low_level.empty() ? "critical as recorded (strip)" : "low level as recorded (strip)",
        RecordedStripColor());
  }
  if (!analysis.lr_decay_epochs.empty()) AddLegendLine(plot, "LR decay", GuideColor(), Qt::DashLine, 1.2);
  if (check_legend && !analysis.check_epochs.empty())
    AddLegendLine(plot, "regime check (top ticks)", GuideColor(), Qt::SolidLine, 2);
}

// --- Incremental redraws (see RefreshFigure) ---
//
// A regime figure drawn again for the same run, layers, grouping, check
// interval and ratio source differs only in what eta (and the levels and
// bands it gives) moves: the bands, the regime items, the subtitle and, in
// the ratio figure, the eta line and its legend entry. Such a draw keeps the
// axis rect, legend and curves and swaps only those; the figure is then the
// one a fresh draw makes, item for item and in the same order.

constexpr const char* kEtaLegend = "accordion_eta_legend";
QColor EtaColor() { return QColor(0x11, 0x11, 0x11); }

// What a figure's layout, legend and curves depend on besides the series
// data (compared separately).
QString Signature(const char* figure, const RunData& run, const RegimeAnalysis& analysis, const std::vector<int>& shown,
                  bool grouped, const std::vector<Band>& no_effect, const std::vector<Band>& recorded) {
  QStringList parts;
  parts << figure << QString::number(no_effect.empty()) << QString::fromStdString(run.path)
        << QString::number(run.view().num_epochs()) << QString::number(run.view().num_layers())
        << QString::number(grouped) << QString::number(analysis.schedulable)
        << QString::number(analysis.options.interval()) << QString::number(recorded.empty())
        << QString::number(analysis.lr_decay_epochs.empty()) << QString::number(analysis.check_epochs.empty())
        << QString::number(run.hessian.size()) << RunName(run);
  QStringList layers;
  for (int l : shown) layers << QString::number(l);
  parts << layers.join(',');
  return parts.join('|');
}

// The first LegendLayers series in colour and antialiased; with more, the
// rest as thin aliased background lines (drawn first, so the named ones lie
// on top): antialiasing dozens of curves is what made a redraw slow.
void StyleSeries(QCPGraph* graph, int index, int count) {
  QColor color = style::PaletteColor(index);
  double width = 1.6;
  const int named = RegimeLegendLayers(graph->parentPlot());
  if (count > named && index >= named) {
    color.setAlpha(150);
    width = 1.0;
    graph->setAntialiased(false);
    graph->setAntialiasedScatters(false);
    style::SendBehindSeries(graph);
  }
  graph->setPen(QPen(color, width));
  // A few hundred points per curve: sampling costs more than it saves.
  graph->setAdaptiveSampling(false);
  // Norms and ratios are noisy: the plot's smoothing control applies.
  style::MarkSmoothable(graph);
}

// Log range around positive values with headroom for the ticks at the top
// and the strip at the bottom.
void SetLogRange(QCPAxis* axis, double lo, double hi) {
  if (!(lo > 0) || !(hi > 0) || !std::isfinite(lo) || !std::isfinite(hi)) {
    axis->setRange(1e-3, 1);
    return;
  }
  if (hi <= lo) hi = lo * 10;
  const double span = std::log10(hi / lo);
  const double pad = std::max(0.12, span * 0.08);
  axis->setRange(lo / std::pow(10, pad), hi * std::pow(10, pad * 1.3));
}

// The ratio axis: the ratios and the eta line; a decade either side of eta
// before any check has run (a range inside one decade crowds the log ticks).
void SetRatioRange(QCPAxis* axis, double lo, double hi, double eta) {
  if (!(hi > 0)) {
    SetLogRange(axis, eta / 10, eta * 10);
    return;
  }
  SetLogRange(axis, std::min(lo, eta), std::max(hi, eta));
}

// The graph of series `index` of `count`: in the legend only among the
// first RegimeLegendLayers (taking the rest out afterwards re-laid the legend
// out once per entry removed).
QCPGraph* AddLayerSeries(QCustomPlot* plot, int index, int count) {
  const int named = RegimeLegendLayers(plot);
  const bool in_legend = count <= named || index < named;
  plot->setAutoAddPlottableToLegend(in_legend);
  QCPGraph* graph = style::AddSeries(plot->xAxis, plot->yAxis);
  plot->setAutoAddPlottableToLegend(true);
  return graph;
}

// One series per layer, or one per group (root-sum-square of its layers'
// norms); `lo` and `hi` the range of their positive values.
std::vector<style::SeriesData> NormSeries(const TraceView& view, const std::vector<int>& shown, bool grouped,
                                          double* lo, double* hi) {
  std::vector<std::pair<QString, std::vector<int>>> series_layers;
  if (grouped) {
    std::map<std::string, size_t> index;
    for (int l : shown) {
      const std::string g = LayerGroup(view.layers[static_cast<size_t>(l)].name);
      auto it = index.find(g);
      if (it == index.end()) {
        index[g] = series_layers.size();
        series_layers.push_back({QString::fromStdString(g), {l}});
      } else {
        series_layers[it->second].second.push_back(l);
      }
    }
  } else {
    for (int l : shown) {
      series_layers.push_back({QString::fromStdString(view.layers[static_cast<size_t>(l)].name), {l}});
    }
  }
  std::vector<style::SeriesData> series(series_layers.size());
  for (size_t s = 0; s < series_layers.size(); ++s) {
    const auto& [name, members] = series_layers[s];
    style::SeriesData& d = series[s];
    d.name = name;
    for (int e = 0; e < view.num_epochs(); ++e) {
      double sq = 0;
      for (int l : members) {
        const double n = view.grad_norms[static_cast<size_t>(e)][static_cast<size_t>(l)];
        sq += n * n;
      }
      const double v = members.size() == 1 ? view.grad_norms[static_cast<size_t>(e)][static_cast<size_t>(members[0])]
                                           : std::sqrt(sq);
      if (!(v > 0) || !std::isfinite(v)) continue;
      d.x.push_back(e);
      d.y.push_back(v);
      *lo = std::min(*lo, v);
      *hi = std::max(*hi, v);
    }
  }
  return series;
}

// One series per layer, or per block (its layers' largest ratio): the
// re-derived schedule's ratios, else the recorded ones.
std::vector<style::SeriesData> RatioSeries(const RunData& run, const RegimeAnalysis& analysis,
                                           const std::vector<int>& shown, bool grouped, double* lo, double* hi) {
  const TraceView& view = run.view();
  const bool derived = analysis.schedulable;
  std::vector<LayerBlock> rows;
  if (grouped) {
    rows = LayerBlocks(run, shown);
  } else {
    for (int l : shown) rows.push_back({view.layers[static_cast<size_t>(l)].name, {l}});
  }
  auto ratio_of = [&](int e, int l) -> std::optional<double> {
    std::optional<double> r;
    if (derived) {
      r = analysis.comparison.accordion.ratios[static_cast<size_t>(e)][static_cast<size_t>(l)];
    } else if (static_cast<size_t>(e) < view.ratios.size() &&
               static_cast<size_t>(l) < view.ratios[static_cast<size_t>(e)].size()) {
      r = view.ratios[static_cast<size_t>(e)][static_cast<size_t>(l)];
    }
    if (!r || !(*r > 0) || !std::isfinite(*r)) return std::nullopt;
    return r;
  };
  std::vector<style::SeriesData> series(rows.size());
  for (size_t s = 0; s < rows.size(); ++s) {
    const LayerBlock& row = rows[s];
    style::SeriesData& d = series[s];
    d.name = QString::fromStdString(row.name);
    for (int e = 0; e < view.num_epochs(); ++e) {
      std::optional<double> r;
      for (int l : row.layers) {
        const std::optional<double> rl = ratio_of(e, l);
        if (rl && (!r || *rl > *r)) r = rl;
      }
      if (!r) continue;
      d.x.push_back(e);
      d.y.push_back(*r);
      *lo = std::min(*lo, *r);
      *hi = std::max(*hi, *r);
    }
  }
  return series;
}

// The layers' (or groups') curves, the first RegimeLegendLayers named and the
// rest counted in a legend note; `discs` marks the named ones' points (the
// background ones as lines only: hundreds of antialiased discs cost more
// than the rest of the figure). True when any curve has a point.
bool AddLayerCurves(QCustomPlot* plot, const std::vector<style::SeriesData>& series, bool grouped, bool discs) {
  const int count = static_cast<int>(series.size());
  const int named = RegimeLegendLayers(plot);
  bool any_data = false;
  for (int s = 0; s < count; ++s) {
    QCPGraph* graph = AddLayerSeries(plot, s, count);
    graph->setName(series[static_cast<size_t>(s)].name);
    StyleSeries(graph, s, count);
    if (discs) {
      const bool background = count > named && s >= named;
      if (background) {
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
      } else {
        style::SetDiscScatter(graph, graph->pen().color(), 5 + graph->pen().widthF());
      }
    }
    graph->setData(series[static_cast<size_t>(s)].x, series[static_cast<size_t>(s)].y, true);
    any_data = any_data || !series[static_cast<size_t>(s)].x.isEmpty();
  }
  if (count > named) {
    style::AddLegendNote(plot, QString("+%1 more %2").arg(count - named).arg(grouped ? "groups" : "layers"));
  }
  return any_data;
}

// The Hessian's top eigenvalue, whole model, on the right axis.
void AddHessianCurve(QCustomPlot* plot, const RunData& run) {
  QVector<double> hx, hy;
  for (const HessianRecord& h : run.hessian) {
    if (!h.block.empty() || !std::isfinite(h.eigenvalue)) continue;
    hx.push_back(h.epoch);
    hy.push_back(h.eigenvalue);
  }
  if (hx.isEmpty()) return;
  QCPGraph* hessian = plot->addGraph(plot->xAxis, plot->yAxis2);
  hessian->setName("Hessian λmax (right axis)");
  hessian->setPen(QPen(QColor(0x22, 0x22, 0x22), 1.4, Qt::DashDotLine));
  hessian->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
  hessian->setData(hx, hy, false);
  // Short enough not to be cut beside a short plot ("top Hessian ei…").
  style::StyleAxis(plot->yAxis2, "Hessian λmax");
  plot->yAxis2->setTickLabels(true);
  bool found = false;
  QCPRange r = hessian->getValueRange(found);
  if (found) {
    const double pad = std::max(1e-9, (r.upper - r.lower) * 0.1);
    plot->yAxis2->setRange(std::max(0.0, r.lower - pad), r.upper + pad * 2);
  }
}

// The eta line, on the regimes layer an in-place update swaps.
void AddEtaLine(QCustomPlot* plot, double eta) {
  QCPLayer* previous = plot->currentLayer();
  plot->setCurrentLayer(style::kRegimesLayer);
  style::AddHorizontalLine(plot, eta, EtaColor(), Qt::DashDotLine, 2);
  plot->setCurrentLayer(previous);
}

}  // namespace

int RegimeLegendLayers(const QCustomPlot* plot) {
  // A plot on screen only: one drawn off screen (a report's, an export's)
  // is drawn at the size it is saved at, whatever its widget's width.
  return plot != nullptr && plot->isVisible() && plot->width() < kWideLegendPlot ? 2 : 8;
}

void DrawGradientNorms(QCustomPlot* plot, const RunData& run, const RegimeAnalysis& analysis,
                       const std::vector<int>& layers, bool grouped) {
  using namespace style;
  const TraceView& view = run.view();
  const std::vector<int> shown = ShownLayers(run, layers);
  const QString subtitle =
      analysis.schedulable
          ? QString("%1 — low-level epochs re-derived at %2 (shaded) and as the run recorded them (strip)")
                .arg(RunName(run), SettingsLine(analysis))
          : QString("%1 — no regimes re-derived: %2").arg(RunName(run), QString::fromStdString(analysis.problem));

  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  const std::vector<style::SeriesData> series = NormSeries(view, shown, grouped, &lo, &hi);
  const int count = static_cast<int>(series.size());
  const std::vector<Band> bands = analysis.schedulable ? analysis.BandsFor(shown) : std::vector<Band>{};
  const std::vector<Band> no_effect = analysis.NoEffectBandsFor(shown);
  const std::vector<Band> recorded = analysis.RecordedBandsFor(shown);
  const QString signature = Signature("norms", run, analysis, shown, grouped, no_effect, recorded);

  if (style::CanUpdateInPlace(plot, signature, series)) {
    const style::InPlaceUpdate before = style::BeginInPlaceUpdate(plot, subtitle);
    DrawRegimeItems(plot, analysis, bands, no_effect, recorded);
    plot->xAxis->setRange(-0.5, std::max(0.5, view.num_epochs() - 0.5));
    SetLogRange(plot->yAxis, lo, hi);
    style::EndInPlaceUpdate(plot, before, {"bands", kRegimesLayer});
    return;
  }

  ResetPlot(plot, grouped ? "Accumulated gradient norm per layer group" : "Accumulated gradient norm per layer",
            subtitle);
  style::StartFullDraw(plot);
  StyleAxis(plot->xAxis, "epoch");
  MakeWholeNumberAxis(plot->xAxis);
  StyleAxis(plot->yAxis, "‖Δ‖ (accumulated gradient norm)");
  MakeLogAxis(plot->yAxis);

  AddLayerCurves(plot, series, grouped, false);

  DrawRegimeItems(plot, analysis, bands, no_effect, recorded);
  AddRegimeLegend(plot, analysis, no_effect, recorded, true);

  AddHessianCurve(plot, run);

  plot->xAxis->setRange(-0.5, std::max(0.5, view.num_epochs() - 0.5));
  SetLogRange(plot->yAxis, lo, hi);
  if (count == 0) AddMessage(plot, "No gradient norms in this trace");
  PlaceLegendRight(plot);
  style::SetFigureSignature(plot, signature);
}

void DrawCheckRatios(QCustomPlot* plot, const RunData& run, const RegimeAnalysis& analysis,
                     const std::vector<int>& layers, bool grouped) {
  using namespace style;
  const TraceView& view = run.view();
  const std::vector<int> shown = ShownLayers(run, layers);
  const bool derived = analysis.schedulable;
  const QString who =
      grouped ? "a group is critical while its largest layer ratio" : "a layer is critical while its ratio";
  const QString subtitle = derived ? QString("%1 — ratios of the re-derived schedule at %2; %3 ≥ η")
                                         .arg(RunName(run), SettingsLine(analysis), who)
                                   : QString("%1 — ratios as recorded (no schedule re-derived: %2)")
                                         .arg(RunName(run), QString::fromStdString(analysis.problem));

  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  const std::vector<style::SeriesData> series = RatioSeries(run, analysis, shown, grouped, &lo, &hi);
  const double eta = derived ? analysis.options.eta() : run.view().run.eta;
  const QString eta_name = QString("η = %1 (threshold)").arg(eta);
  const std::vector<Band> bands = derived ? analysis.BandsFor(shown) : std::vector<Band>{};
  const std::vector<Band> no_effect = analysis.NoEffectBandsFor(shown);
  const std::vector<Band> recorded = analysis.RecordedBandsFor(shown);
  const QString signature = Signature("ratios", run, analysis, shown, grouped, no_effect, recorded);

  if (style::CanUpdateInPlace(plot, signature, series)) {
    const style::InPlaceUpdate before = style::BeginInPlaceUpdate(plot, subtitle);
    QStringList changed = {"bands", kRegimesLayer};
    AddEtaLine(plot, eta);
    for (int i = 0; i < plot->plottableCount(); ++i) {
      QCPAbstractPlottable* p = plot->plottable(i);
      if (p->property(kEtaLegend).toBool() && p->name() != eta_name) {
        p->setName(eta_name);
        if (plot->legend != nullptr) changed << plot->legend->layer()->name();
      }
    }
    DrawRegimeItems(plot, analysis, bands, no_effect, recorded);
    plot->xAxis->setRange(-0.5, std::max(0.5, view.num_epochs() - 0.5));
    SetRatioRange(plot->yAxis, lo, hi, eta);
    style::EndInPlaceUpdate(plot, before, changed);
    return;
  }

  // The formula in the title: as the y label it was taller than the plot.
  ResetPlot(plot, "Relative change of the gradient norm at each check, |‖Δprev‖ − ‖Δcurr‖| / ‖Δprev‖", subtitle);
  style::StartFullDraw(plot);
  StyleAxis(plot->xAxis, "epoch");
  MakeWholeNumberAxis(plot->xAxis);
  StyleAxis(plot->yAxis, "relative change");
  MakeLogAxis(plot->yAxis);

  const bool any_data = AddLayerCurves(plot, series, grouped, true);
  AddEtaLine(plot, eta);
  AddLegendLine(plot, eta_name, EtaColor(), Qt::DashDotLine, 2)->setProperty(kEtaLegend, true);
  // No legend entry for the check ticks here: the discs are the checks, and
  // the legend must fit beside a short plot.
  DrawRegimeItems(plot, analysis, bands, no_effect, recorded);
  AddRegimeLegend(plot, analysis, no_effect, recorded, false);

  plot->xAxis->setRange(-0.5, std::max(0.5, view.num_epochs() - 0.5));
  SetRatioRange(plot->yAxis, lo, hi, eta);
  if (!any_data) AddMessage(plot, "No checks ran in this trace's epochs");
  PlaceLegendRight(plot);
  style::SetFigureSignature(plot, signature);
}

namespace {

// 0: low level, 1: high level, 0.5: the level makes no difference. A batch
// level always does: it changes the steps of an epoch, not a step's floats.
double CellValue(const TraceView& view, const Schedule& s, int epoch, int layer) {
  const auto& shape = view.layers[static_cast<size_t>(layer)].shape;
  if (DescriptionOf(s.scheme.scheme()).level_kind != LevelKind::kGlobalBatch &&
      FloatsPerStep(s.scheme, shape, s.level_low) == FloatsPerStep(s.scheme, shape, s.level_high)) {
    return 0.5;
  }
  return s.levels[static_cast<size_t>(epoch)][static_cast<size_t>(layer)] == s.level_low ? 0.0 : 1.0;
}

// The level map's rows: one per layer, or one per LayerBlock.
std::vector<LayerBlock> MapRows(const RunData& run, bool grouped) {
  if (grouped) return LayerBlocks(run);
  std::vector<LayerBlock> rows;
  for (int l = 0; l < run.view().num_layers(); ++l)
    rows.push_back({run.view().layers[static_cast<size_t>(l)].name, {l}});
  return rows;
}

// A row's cell: low where any of its layers whose level matters is low (the
// block then sends more than at the high level), high where they all are,
// no difference where none of its layers' levels matters.
double RowValue(const TraceView& view, const Schedule& s, int epoch, const LayerBlock& row) {
  bool any_high = false;
  for (int l : row.layers) {
    const double v = CellValue(view, s, epoch, l);
    if (v == 0.0) return 0.0;
    any_high = any_high || v == 1.0;
  }
  return any_high ? 1.0 : 0.5;
}

// The level map's colour values: equal blocks of flat colour, each kind of
// cell in the middle of its block, so the colour scale reads as a legend.
struct LevelKinds {
  bool any_neutral = false;
  int kinds = 2;
  double low = 0.25;
  double neutral = 0.5;
  double high = 0.75;
};

LevelKinds KindsOf(const TraceView& view, const Schedule& s, const std::vector<LayerBlock>& rows, bool cells) {
  LevelKinds k;
  const int epochs = view.num_epochs();
  if (cells) {
    for (int e = 0; e < epochs && !k.any_neutral; ++e) {
      for (const LayerBlock& row : rows) k.any_neutral = k.any_neutral || RowValue(view, s, e, row) == 0.5;
    }
  }
  k.kinds = k.any_neutral ? 3 : 2;
  auto centre = [&k](int i) { return (i + 0.5) / k.kinds; };
  k.low = centre(0);
  k.neutral = k.any_neutral ? centre(1) : 0.5;
  k.high = centre(k.kinds - 1);
  return k;
}

void SetLevelCells(QCPColorMapData* data, const TraceView& view, const Schedule& s, const std::vector<LayerBlock>& rows,
                   const LevelKinds& k) {
  for (int e = 0; e < view.num_epochs(); ++e) {
    for (int l = 0; l < static_cast<int>(rows.size()); ++l) {
      const double v = RowValue(view, s, e, rows[static_cast<size_t>(l)]);
      data->setCell(e, l, v == 0.5 ? k.neutral : (v == 0 ? k.low : k.high));
    }
  }
}

// Between eta steps only the cells and the subtitle change: everything
// else is a function of these.
QString LevelMapSignature(const RunData& run, const RegimeAnalysis& analysis, int layers, bool grouped,
                          bool any_neutral) {
  const Schedule& s = analysis.comparison.accordion;
  QStringList decays;
  for (int e : analysis.lr_decay_epochs) decays << QString::number(e);
  return QStringList{"levels",
                     QString::fromStdString(run.path),
                     QString::number(run.view().num_epochs()),
                     QString::number(layers),
                     QString::number(grouped),
                     RunName(run),
                     QString::number(any_neutral),
                     QString::number(static_cast<int>(s.scheme.scheme())),
                     QString::fromStdString(LevelName(s.scheme.scheme(), s.level_low)),
                     QString::fromStdString(LevelName(s.scheme.scheme(), s.level_high)),
                     decays.join(',')}
      .join('|');
}

// The map drawn before for the same signature and size: its cells change.
QCPColorMap* MapToUpdate(QCustomPlot* plot, const QString& signature, int epochs, int layers) {
  using namespace style;
  QCPColorMap* map = plot->plottableCount() == 1 ? qobject_cast<QCPColorMap*>(plot->plottable(0)) : nullptr;
  if (map != nullptr && FigureSignature(plot) == signature && plot->layer(kRegimesLayer) != nullptr &&
      map->layer() == plot->layer("bands") && BuffersCurrent(plot) && map->data()->keySize() == epochs &&
      map->data()->valueSize() == layers) {
    return map;
  }
  return nullptr;
}

// Epochs across, rows down with their names as ticks, thinned to what fits
// (about 14 px per label).
void SetUpLevelAxes(QCustomPlot* plot, const std::vector<LayerBlock>& rows, int epochs, bool grouped) {
  using namespace style;
  const int layers = static_cast<int>(rows.size());
  plot->legend->setVisible(false);
  StyleAxis(plot->xAxis, "epoch");
  MakeWholeNumberAxis(plot->xAxis);
  StyleAxis(plot->yAxis, grouped ? "layer group" : "layer");
  plot->xAxis->grid()->setVisible(false);
  plot->yAxis->grid()->setVisible(false);
  plot->xAxis->setRange(-0.5, std::max(0.5, epochs - 0.5));
  plot->yAxis->setRange(-0.5, std::max(0.5, layers - 0.5));
  plot->yAxis->setRangeReversed(true);
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  const int stride = std::max(1, (layers + 39) / 40);
  for (int l = 0; l < layers; l += stride) {
    names->addTick(l, QString::fromStdString(rows[static_cast<size_t>(l)].name));
  }
  plot->yAxis->setTicker(names);
  plot->yAxis->setSubTicks(false);
  QFont small = TickFont();
  if (layers > 24) small.setPointSizeF(8);
  plot->yAxis->setTickLabelFont(small);
}

QCPColorGradient LevelGradient(const LevelKinds& k) {
  using namespace style;
  QCPColorGradient gradient;
  gradient.clearColorStops();
  const std::vector<QColor> colors = k.any_neutral
                                         ? std::vector<QColor>{LevelLowColor(), LevelNeutralColor(), LevelHighColor()}
                                         : std::vector<QColor>{LevelLowColor(), LevelHighColor()};
  for (int i = 0; i < k.kinds; ++i) {
    gradient.setColorStopAt(static_cast<double>(i) / k.kinds + (i == 0 ? 0 : 1e-4), colors[static_cast<size_t>(i)]);
    gradient.setColorStopAt(static_cast<double>(i + 1) / k.kinds, colors[static_cast<size_t>(i)]);
  }
  gradient.setLevelCount(600);
  return gradient;
}

// The colour scale beside the map, its ticks naming the levels.
void AddLevelScale(QCustomPlot* plot, QCPColorMap* map, const Schedule& s, const LevelKinds& k) {
  using namespace style;
  QCPColorScale* scale = AddColorScale(plot, map, LevelGradient(k), 0, 1, 18);
  QSharedPointer<QCPAxisTickerText> meaning(new QCPAxisTickerText);
  meaning->addTick(k.low, QString("low level: %1\n(critical regime)")
                              .arg(QString::fromStdString(LevelName(s.scheme.scheme(), s.level_low))));
  if (k.any_neutral) meaning->addTick(k.neutral, "no difference\n(same floats at\neither level)");
  meaning->addTick(k.high,
                   QString("high level: %1").arg(QString::fromStdString(LevelName(s.scheme.scheme(), s.level_high))));
  scale->axis()->setTicker(meaning);
  scale->axis()->setSubTicks(false);
  scale->axis()->setTickLength(0, 0);
  scale->axis()->setSubTickLength(0, 0);
  scale->axis()->setTickLabelFont(TickFont());
}

}  // namespace

void DrawLevelMap(QCustomPlot* plot, const RunData& run, const RegimeAnalysis& analysis, bool grouped) {
  using namespace style;
  const TraceView& view = run.view();
  const int epochs = view.num_epochs();
  const std::vector<LayerBlock> rows = MapRows(run, grouped);
  const int layers = static_cast<int>(rows.size());
  const QString subtitle =
      analysis.schedulable
          ? QString("%1 — %2").arg(RunName(run), SettingsLine(analysis))
          : QString("%1 — no schedule: %2").arg(RunName(run), QString::fromStdString(analysis.problem));
  const bool cells = analysis.schedulable && epochs > 0 && layers > 0;
  const Schedule& s = analysis.comparison.accordion;
  const LevelKinds kinds = KindsOf(view, s, rows, cells);
  QString signature;
  if (cells) {
    signature = LevelMapSignature(run, analysis, layers, grouped, kinds.any_neutral);
    if (QCPColorMap* map = MapToUpdate(plot, signature, epochs, layers)) {
      const InPlaceUpdate before = BeginInPlaceUpdate(plot, subtitle);
      SetLevelCells(map->data(), view, s, rows, kinds);
      EndInPlaceUpdate(plot, before, {"bands", kRegimesLayer});
      return;
    }
  }
  ResetPlot(
      plot,
      grouped ? "Levels Accordion chooses per layer group and epoch" : "Levels Accordion chooses per layer and epoch",
      subtitle);
  StartFullDraw(plot);
  SetUpLevelAxes(plot, rows, epochs, grouped);
  if (!cells) {
    AddMessage(plot, "No levels to show: " + QString::fromStdString(analysis.problem.empty()
                                                                        ? std::string("the run has no epochs")
                                                                        : analysis.problem));
    return;
  }
  auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
  map->setName(QString("level (%1 low, %2 high%3)")
                   .arg(kinds.low, 0, 'g', 3)
                   .arg(kinds.high, 0, 'g', 3)
                   .arg(kinds.any_neutral ? QString(", %1 no difference").arg(kinds.neutral, 0, 'g', 3) : QString()));
  // Beneath the grid and the guide lines, on the buffered "bands" layer (it
  // holds nothing else here): a redraw for new cells re-renders just it.
  map->setLayer("bands");
  map->data()->setSize(epochs, layers);
  map->data()->setRange(QCPRange(0, epochs - 1), QCPRange(0, layers - 1));
  SetLevelCells(map->data(), view, s, rows, kinds);
  map->setInterpolate(false);
  map->setTightBoundary(false);
  AddLevelScale(plot, map, s, kinds);
  for (int e : analysis.lr_decay_epochs) AddVerticalLine(plot, e + 0.5, GuideColor(), Qt::DashLine, 1.5);
  SetFigureSignature(plot, signature);
}

bool LevelMapCellAt(const RunData& run, double x, double y, int* epoch, int* row, bool grouped) {
  if (!std::isfinite(x) || !std::isfinite(y)) return false;
  const int e = static_cast<int>(std::lround(x));
  const int l = static_cast<int>(std::lround(y));
  const int rows = grouped ? static_cast<int>(LayerBlocks(run).size()) : run.view().num_layers();
  if (e < 0 || e >= run.view().num_epochs() || l < 0 || l >= rows) return false;
  if (epoch) *epoch = e;
  if (row) *row = l;
  return true;
}

namespace {

QString BlockTooltip(const RunData& run, const RegimeAnalysis& analysis, int epoch, const LayerBlock& block) {
  const TraceView& view = run.view();
  QStringList lines;
  lines << QString("group %1: %2 layers").arg(QString::fromStdString(block.name)).arg(block.layers.size());
  lines << QString("epoch %1").arg(view.epochs[static_cast<size_t>(epoch)].epoch);
  double sq = 0;
  for (int l : block.layers) {
    const double n = view.grad_norms[static_cast<size_t>(epoch)][static_cast<size_t>(l)];
    sq += n * n;
  }
  lines << QString("‖Δ‖ = %1 (root-sum-square of its layers')").arg(style::Sci(std::sqrt(sq)));
  if (!analysis.schedulable) return lines.join("\n");
  const Schedule& s = analysis.comparison.accordion;
  std::optional<double> largest;
  int low = 0;
  int same = 0;
  for (int l : block.layers) {
    const auto& r = s.ratios[static_cast<size_t>(epoch)][static_cast<size_t>(l)];
    if (r && (!largest || *r > *largest)) largest = r;
    const double v = CellValue(view, s, epoch, l);
    low += v == 0.0;
    same += v == 0.5;
  }
  if (largest) {
    lines << QString("largest ratio at this check: %1 (η = %2)").arg(*largest, 0, 'g', 3).arg(analysis.options.eta());
  } else {
    lines << "no check at the end of this epoch";
  }
  lines << QString("%1 of %2 layers at the low level (%3)")
               .arg(low)
               .arg(block.layers.size())
               .arg(QString::fromStdString(LevelName(s.scheme.scheme(), s.level_low)));
  if (same > 0) lines << QString("%1 sent alike at either level").arg(same);
  return lines.join("\n");
}

}  // namespace

QString LevelMapTooltip(const RunData& run, const RegimeAnalysis& analysis, int epoch, int row, bool grouped) {
  if (grouped) {
    const std::vector<LayerBlock> blocks = LayerBlocks(run);
    if (epoch < 0 || epoch >= run.view().num_epochs() || row < 0 || row >= static_cast<int>(blocks.size())) return {};
    return BlockTooltip(run, analysis, epoch, blocks[static_cast<size_t>(row)]);
  }
  const int layer = row;
  const TraceView& view = run.view();
  if (epoch < 0 || epoch >= view.num_epochs() || layer < 0 || layer >= view.num_layers()) return {};
  const LayerInfo& info = view.layers[static_cast<size_t>(layer)];
  QStringList dims;
  for (int64_t d : info.shape) dims << QString::number(d);
  QStringList lines;
  lines << QString("layer %1: %2 (%3)").arg(layer).arg(QString::fromStdString(info.name), dims.join("×"));
  lines << QString("epoch %1").arg(view.epochs[static_cast<size_t>(epoch)].epoch);
  lines << QString("‖Δ‖ = %1").arg(style::Sci(view.grad_norms[static_cast<size_t>(epoch)][static_cast<size_t>(layer)]));
  std::optional<double> ratio;
  if (analysis.schedulable) {
    ratio = analysis.comparison.accordion.ratios[static_cast<size_t>(epoch)][static_cast<size_t>(layer)];
  }
  if (ratio) {
    lines << QString("ratio at this check: %1 (η = %2) → %3")
                 .arg(*ratio, 0, 'g', 3)
                 .arg(analysis.options.eta())
                 .arg(*ratio >= analysis.options.eta() ? "critical" : "not critical");
  } else {
    lines << "no check at the end of this epoch";
  }
  if (analysis.schedulable) {
    const Schedule& s = analysis.comparison.accordion;
    const double level = s.levels[static_cast<size_t>(epoch)][static_cast<size_t>(layer)];
    const double v = CellValue(view, s, epoch, layer);
    QString which = v == 0.5 ? "same floats at either level" : (level == s.level_low ? "low, critical" : "high");
    lines << QString("level: %1 (%2)").arg(QString::fromStdString(LevelName(s.scheme.scheme(), level)), which);
  } else {
    lines << QString("level as recorded: %1")
                 .arg(QString::fromStdString(
                     LevelName(view.run.scheme, view.levels[static_cast<size_t>(epoch)][static_cast<size_t>(layer)])));
  }
  return lines.join("\n");
}

}  // namespace accordion::gui
