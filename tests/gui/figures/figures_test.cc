// Figure builders: what they draw, probed in rendered pixels and in the
// CSV of their data, and what they write to disk.
#include <qcustomplot.h>

#include <QFile>
#include <QPointer>
#include <QtTest>
#include <functional>
#include <map>

#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/headlines.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion;
using namespace accordion::gui;
namespace st = accordion::gui::style;

namespace {

QString TitleOf(QCustomPlot* plot) {
  auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
  return title ? title->text() : QString();
}

bool Near(const QColor& a, const QColor& b, int tolerance = 6) {
  return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance &&
         std::abs(a.blue() - b.blue()) <= tolerance;
}

// The most frequent colour down the column at `x` pixels, over the middle of
// the axis rect (leaving out the check ticks at the top and the recorded
// strip at the bottom).
QColor ColumnMode(const QImage& image, QCPAxisRect* rect, int x) {
  std::map<QRgb, int> counts;
  const int top = rect->top() + rect->height() / 10;
  const int bottom = rect->bottom() - rect->height() / 10;
  for (int y = top; y < bottom; ++y) counts[image.pixel(x, y) | 0xff000000u]++;
  QRgb best = 0;
  int n = -1;
  for (const auto& [rgb, count] : counts) {
    if (count > n) {
      best = rgb;
      n = count;
    }
  }
  return QColor::fromRgb(best);
}

int Sections(const QString& csv, const QString& kind) { return csv.count("# " + kind + ":"); }

}  // namespace

class FiguresTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    run_ = std::make_shared<RunData>(
        LoadRunData(test_support::SampleTrace("fmnist-mlp-powersgd-accordion.trace").toStdString()));
    settings_.interval = 2;  // as the sample was recorded
    analysis_ = AnalyseRegimes(*run_, settings_);
    QVERIFY2(analysis_.schedulable, analysis_.problem.c_str());
    QVERIFY(!analysis_.model_bands.empty());
    scratch_ = test_support::ScratchDir("figures");
  }

  void savesPngAndPdf() {
    QCustomPlot plot;
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    QString error;
    const QString png = scratch_ + "/regimes.png";
    const QString pdf = scratch_ + "/regimes.pdf";
    QVERIFY2(SaveFigure(&plot, png, &error, 1200, 700), qPrintable(error));
    QVERIFY2(SaveFigure(&plot, pdf, &error, 1200, 700), qPrintable(error));
    QVERIFY(QFileInfo(png).size() > 20000);
    QVERIFY(QFileInfo(pdf).size() > 5000);
    QFile file(pdf);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.read(4), QByteArray("%PDF"));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1200, 700));
    QVERIFY(!SaveFigure(&plot, scratch_ + "/regimes.svg", &error));
    QVERIFY(error.contains(".png"));
    QVERIFY(!SaveFigure(&plot, scratch_ + "/no/such/dir/x.png", &error));
    QVERIFY(!QFileInfo::exists(scratch_ + "/no"));
  }

  void bandsShowInPixels() {
    QCustomPlot plot;
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    const QImage image = st::RenderFigure(&plot, 1200, 700);
    QCPAxisRect* rect = plot.axisRect();
    const Band band = analysis_.model_bands.front();
    const double inside = (band.first + band.last) / 2.0 + 0.25;
    const QColor in = ColumnMode(image, rect, static_cast<int>(plot.xAxis->coordToPixel(inside)));
    const QColor band_color = st::BlendOver(st::BandColor(), st::BackgroundColor());
    QVERIFY2(
        Near(in, band_color),
        qPrintable(QString("inside band at epoch %1: %2, expected %3").arg(inside).arg(in.name(), band_color.name())));
    // An epoch in no band, away from the LR decay lines.
    int outside = -1;
    for (int e = 0; e < run_->view().num_epochs(); ++e) {
      bool free = true;
      for (const Band& b : analysis_.model_bands) free = free && (e < b.first - 1 || e > b.last + 1);
      for (int d : analysis_.lr_decay_epochs) free = free && std::abs(e - d) > 1;
      if (free) {
        outside = e;
        break;
      }
    }
    QVERIFY(outside >= 0);
    const QColor out = ColumnMode(image, rect, static_cast<int>(plot.xAxis->coordToPixel(outside + 0.25)));
    QVERIFY2(Near(out, st::BackgroundColor()),
             qPrintable(QString("outside at epoch %1: %2").arg(outside).arg(out.name())));
    QVERIFY(plot.yAxis->scaleType() == QCPAxis::stLogarithmic);
    // The Hessian's eigenvalue on the right axis (the sample has "" rows).
    QVERIFY(plot.yAxis2->visible());
  }

  void csvHoldsEveryCurve() {
    QCustomPlot plot;
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    const QString csv = FigureCsv(&plot);
    const int layers = run_->view().num_layers();
    QCOMPARE(Sections(csv, "graph"), layers + 1);  // + the Hessian
    QVERIFY(!csv.contains("LR decay"));            // legend-only entries are not data
    QVERIFY(csv.contains("# graph: " + QString::fromStdString(run_->view().layers[0].name) + "\n"));
    QVERIFY(csv.contains("epoch,‖Δ‖ (accumulated gradient norm)\n"));
    // One row per epoch for the first layer.
    const QStringList blocks = csv.split("\n\n");
    const QStringList lines = blocks.first().split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2 + run_->view().num_epochs());
    QCOMPARE(lines[2].split(',').first(), QString("0"));
  }

  void redrawReplaces() {
    QCustomPlot plot;
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    const int plottables = plot.plottableCount();
    const int items = plot.itemCount();
    DrawLevelMap(&plot, *run_, analysis_);
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    QCOMPARE(plot.plottableCount(), plottables);
    QCOMPARE(plot.itemCount(), items);
    QCOMPARE(plot.axisRectCount(), 1);
    // Grouped: one line per group (fc1, fc2, fc3) + the Hessian.
    DrawGradientNorms(&plot, *run_, analysis_, {}, true);
    QCOMPARE(Sections(FigureCsv(&plot), "graph"), 4);
    // A subset of layers.
    DrawGradientNorms(&plot, *run_, analysis_, {0, 2}, false);
    QCOMPARE(Sections(FigureCsv(&plot), "graph"), 3);
  }

  // An eta step redraws the regime figures in place (axis rect, legend and
  // curves kept; only the regime overlays swapped) and re-renders only the
  // layers that changed: the figure must be, pixel for pixel, the one a
  // fresh plot draws at the new eta, in exports and on screen.
  void etaStepRedrawsInPlace() {
    ScheduleSettings at5 = settings_;
    at5.eta = 0.5;
    ScheduleSettings at3 = settings_;
    at3.eta = 0.3;
    const RegimeAnalysis a5 = AnalyseRegimes(*run_, at5);
    const RegimeAnalysis a3 = AnalyseRegimes(*run_, at3);
    QVERIFY(a5.schedulable && a3.schedulable);
    const std::vector<std::function<void(QCustomPlot*, const RegimeAnalysis&)>> figures = {
        [this](QCustomPlot* p, const RegimeAnalysis& a) { DrawGradientNorms(p, *run_, a, {}, false); },
        [this](QCustomPlot* p, const RegimeAnalysis& a) { DrawCheckRatios(p, *run_, a, {}); },
        [this](QCustomPlot* p, const RegimeAnalysis& a) { DrawLevelMap(p, *run_, a); },
    };
    for (size_t f = 0; f < figures.size(); ++f) {
      QCustomPlot plot;
      plot.resize(st::kExportWidth, st::kExportHeight);
      figures[f](&plot, a5);
      plot.grab();  // delivers the pending resize (a replot at that size)
      const QImage old_image = st::RenderFigure(&plot);
      const QPointer<QCPAxisRect> rect = plot.axisRect(0);
      const QPointer<QCPAbstractPlottable> curve = plot.plottable(0);
      figures[f](&plot, a3);
      QVERIFY2(rect && plot.axisRect(0) == rect && plot.plottable(0) == curve, "not redrawn in place");
      // On screen: the re-rendered layers composite to what a full replot shows.
      RefreshFigure(&plot, true);
      const QImage partial = plot.grab().toImage();
      plot.replot(QCustomPlot::rpImmediateRefresh);
      const QImage full = plot.grab().toImage();
      QCOMPARE(partial.size(), QSize(st::kExportWidth, st::kExportHeight));
      QVERIFY2(partial == full, qPrintable(QString("figure %1: partial refresh differs on screen").arg(f)));
      // Exports: identical to a fresh plot drawn at the new eta.
      QCustomPlot fresh;
      figures[f](&fresh, a3);
      const QImage expected = st::RenderFigure(&fresh);
      const QImage image = st::RenderFigure(&plot);
      QVERIFY2(image == expected, qPrintable(QString("figure %1: differs from a fresh draw").arg(f)));
      QVERIFY2(image != old_image, qPrintable(QString("figure %1: eta 0.3 looks like eta 0.5").arg(f)));
      QCOMPARE(FigureCsv(&plot), FigureCsv(&fresh));
      const QString png = scratch_ + QString("/in-place-%1.png").arg(f);
      const QString png_fresh = scratch_ + QString("/fresh-%1.png").arg(f);
      QVERIFY(SaveFigure(&plot, png, nullptr, 1200, 700));
      QVERIFY(SaveFigure(&fresh, png_fresh, nullptr, 1200, 700));
      QVERIFY(QImage(png) == QImage(png_fresh));
    }
  }

  // Anything but eta (the layers shown, the grouping, the check interval,
  // another figure on the plot) takes the full path: a new layout.
  void otherChangesRedrawInFull() {
    ScheduleSettings at3 = settings_;
    at3.eta = 0.3;
    const RegimeAnalysis a3 = AnalyseRegimes(*run_, at3);
    QCustomPlot plot;
    plot.resize(st::kExportWidth, st::kExportHeight);
    auto drawn_in_full = [&plot](const std::function<void()>& draw) {
      st::RenderFigure(&plot);
      const QPointer<QCPAxisRect> rect = plot.axisRect(0);
      draw();
      return rect.isNull();
    };
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    QVERIFY(!drawn_in_full([&] { DrawGradientNorms(&plot, *run_, a3, {}, false); }));
    QVERIFY(drawn_in_full([&] { DrawGradientNorms(&plot, *run_, a3, {0, 2}, false); }));
    QVERIFY(drawn_in_full([&] { DrawGradientNorms(&plot, *run_, a3, {0, 2}, true); }));
    QVERIFY(drawn_in_full([&] { DrawGradientNorms(&plot, *run_, a3, {}, true); }));
    QVERIFY(!drawn_in_full([&] { DrawGradientNorms(&plot, *run_, analysis_, {}, true); }));
    QVERIFY(drawn_in_full([&] { DrawCheckRatios(&plot, *run_, a3, {}); }));
    QVERIFY(!drawn_in_full([&] { DrawCheckRatios(&plot, *run_, analysis_, {}); }));
    QVERIFY(drawn_in_full([&] { DrawCheckRatios(&plot, *run_, analysis_, {1}); }));
    ScheduleSettings every3 = settings_;
    every3.interval = 3;
    const RegimeAnalysis a_every3 = AnalyseRegimes(*run_, every3);
    QVERIFY(drawn_in_full([&] { DrawCheckRatios(&plot, *run_, a_every3, {1}); }));
    // Without a replot since the last draw, nothing is kept either.
    DrawGradientNorms(&plot, *run_, a3, {}, false);
    const QPointer<QCPAxisRect> rect = plot.axisRect(0);
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    QVERIFY(rect.isNull());
  }

  void ratiosAgainstEta() {
    QCustomPlot plot;
    DrawCheckRatios(&plot, *run_, analysis_, {});
    const QString csv = FigureCsv(&plot);
    QCOMPARE(Sections(csv, "graph"), run_->view().num_layers());
    // A point per check that produced a ratio.
    int ratios = 0;
    for (const auto& row : analysis_.comparison.accordion.ratios) {
      for (const auto& r : row) ratios += r && *r > 0 ? 1 : 0;
    }
    QCOMPARE(csv.count('\n') - 3 * run_->view().num_layers() + 1, ratios);
  }

  void levelMapColours() {
    QCustomPlot plot;
    DrawLevelMap(&plot, *run_, analysis_);
    const QImage image = st::RenderFigure(&plot, 1200, 700);
    const Schedule& s = analysis_.comparison.accordion;
    std::map<QString, int> seen;
    for (int e = 0; e < s.num_epochs(); ++e) {
      for (int l = 0; l < run_->view().num_layers(); ++l) {
        const auto& shape = run_->view().layers[static_cast<size_t>(l)].shape;
        const bool neutral = shape.size() < 2;  // PowerSGD sends 1-D tensors as they are
        const QColor expected =
            neutral ? st::LevelNeutralColor()
                    : (s.levels[static_cast<size_t>(e)][static_cast<size_t>(l)] == s.level_low ? st::LevelLowColor()
                                                                                               : st::LevelHighColor());
        const QColor got = image.pixelColor(static_cast<int>(plot.xAxis->coordToPixel(e + 0.2)),
                                            static_cast<int>(plot.yAxis->coordToPixel(l + 0.2)));
        QVERIFY2(
            Near(got, expected, 3),
            qPrintable(QString("epoch %1 layer %2: %3, expected %4").arg(e).arg(l).arg(got.name(), expected.name())));
        seen[expected.name()]++;
      }
    }
    QCOMPARE(seen.size(), size_t{3});  // low, high and neutral all drawn
    const QString csv = FigureCsv(&plot);
    QCOMPARE(Sections(csv, "colormap"), 1);
    QCOMPARE(csv.count('\n'), 2 + s.num_epochs() * run_->view().num_layers());
  }

  void levelMapCellsAndTooltip() {
    int epoch = -1, layer = -1;
    QVERIFY(LevelMapCellAt(*run_, 3.2, 1.4, &epoch, &layer));
    QCOMPARE(epoch, 3);
    QCOMPARE(layer, 1);
    QVERIFY(!LevelMapCellAt(*run_, -0.6, 1, &epoch, &layer));
    QVERIFY(!LevelMapCellAt(*run_, 2, run_->view().num_layers() - 0.4, &epoch, &layer));
    const QString tip = LevelMapTooltip(*run_, analysis_, 3, 0);
    QVERIFY2(tip.contains(QString::fromStdString(run_->view().layers[0].name)), qPrintable(tip));
    QVERIFY(tip.contains("epoch 3"));
    QVERIFY(tip.contains("rank "));
    QVERIFY(tip.contains("‖Δ‖"));
    QVERIFY(LevelMapTooltip(*run_, analysis_, 999, 0).isEmpty());
  }

  void whatIfFigures() {
    WhatIfSettings w;
    w.workers = 4;
    w.bandwidth_gbps = 1;
    const WhatIfProjection p = ProjectWhatIf(*run_, settings_, w, sim::TimingSource::kAnalytic);
    QCustomPlot plot;
    DrawProjection(&plot, p);
    QVERIFY2(TitleOf(&plot).contains("α–β estimate"), qPrintable(TitleOf(&plot)));
    QCOMPARE(Sections(FigureCsv(&plot), "bars"), 4);
    QVERIFY(FigureCsv(&plot).contains(",dense\n"));
    WhatIfProjection simulated = p;
    simulated.timing = sim::TimingSource::kSimulate;
    DrawProjection(&plot, simulated);
    QVERIFY(TitleOf(&plot).contains("SimGrid replay"));
    // The subtitle names the all-reduce (the title names the model), and
    // every bar's label fits its slot in the app's narrowest plot: a label
    // wider than its slot is not drawn at all.
    auto* subtitle = qobject_cast<QCPTextElement*>(plot.plotLayout()->element(1, 0));
    QVERIFY(subtitle != nullptr);
    QVERIFY2(subtitle->text().contains("ring all-reduce"), qPrintable(subtitle->text()));
    QVERIFY2(!subtitle->text().contains("SimGrid simulation"), qPrintable(subtitle->text()));
    // It opens with the sentence builder's comparison, true of the bars.
    const std::string against = ProjectionHeadline(p.result.accordion.total.time_s, p.dense.total.time_s, 0, 0);
    QVERIFY2(subtitle->text().startsWith(QString::fromStdString(against) + " — "), qPrintable(subtitle->text()));
    const auto ticker = plot.xAxis->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    QCOMPARE(ticker->ticks().size(), 4);
    QCOMPARE(ticker->ticks().last(), QString("Accordion"));
    plot.resize(360, 320);
    plot.replot();
    const double slot = plot.xAxis->coordToPixel(2) - plot.xAxis->coordToPixel(1);
    const QFontMetrics metrics(plot.xAxis->tickLabelFont());
    for (const QString& label : ticker->ticks()) {
      for (const QString& line : label.split('\n')) {
        QVERIFY2(metrics.horizontalAdvance(line) < slot, qPrintable(QString("'%1' in %2 px").arg(line).arg(slot)));
      }
    }

    DrawEpochBreakdown(&plot, p);
    std::vector<QCPBars*> bars;
    for (int i = 0; i < plot.plottableCount(); ++i) {
      auto* b = qobject_cast<QCPBars*>(plot.plottable(i));
      if (b && !st::IsLegendOnly(b)) bars.push_back(b);
    }
    QCOMPARE(bars.size(), size_t{4});
    QCOMPARE(bars[1]->barBelow(), bars[0]);
    QCOMPARE(bars[3]->barBelow(), bars[2]);
    QCOMPARE(bars[0]->dataCount(), run_->view().num_epochs());

    const std::vector<SweepPointResult> sweep = SweepBandwidth(*run_, settings_, w, LogSpaced(0.1, 100, 4));
    DrawBandwidthSweep(&plot, sweep, 1);
    QVERIFY(plot.xAxis->scaleType() == QCPAxis::stLogarithmic);
    auto* headline = qobject_cast<QCPTextElement*>(plot.plotLayout()->element(1, 0));
    QVERIFY(headline != nullptr);
    QCOMPARE(headline->text(), QString::fromStdString(SweepHeadline(sweep)));
    const QString csv = FigureCsv(&plot);
    QCOMPARE(Sections(csv, "graph"), 3);
    QVERIFY(csv.contains("# graph: Accordion vs dense\nbandwidth (Gb/s),speedup (×)\n0.1,"));
    QVERIFY(csv.contains("# graph: static high vs dense\n"));

    // Measured and simulated tracks.
    DrawIterationTimeline(&plot, *run_, &p, run_->view().num_epochs() - 1);
    const QString spans = FigureCsv(&plot);
    QVERIFY(spans.contains("# spans: timeline"));
    QVERIFY(spans.contains("measured compute,forward,0,"));
    QVERIFY(spans.contains("simulated compute,backward,"));
    QVERIFY(spans.contains("simulated collectives,"));
    QCOMPARE(run_->measured_iteration.has_value(), spans.contains("measured collectives,"));
    DrawIterationTimeline(&plot, *run_, nullptr, 0);
    QVERIFY(!FigureCsv(&plot).contains("simulated"));
  }

  void accuracyComparison() {
    std::vector<std::shared_ptr<const RunData>> runs = {run_};
    for (const char* name : {"fmnist-mlp-powersgd-static-1.trace", "fmnist-mlp-powersgd-static-2.trace"}) {
      runs.push_back(std::make_shared<RunData>(LoadRunData(test_support::SampleTrace(name).toStdString())));
    }
    QCustomPlot plot;
    DrawAccuracyComparison(&plot, runs, CompareAxis::kEpoch);
    QCOMPARE(Sections(FigureCsv(&plot), "graph"), 3);
    QVERIFY(FigureCsv(&plot).contains("# graph: fmnist-mlp-powersgd-static-1.trace\nepoch,test accuracy (%)\n0,"));
    DrawAccuracyComparison(&plot, runs, CompareAxis::kFloats);
    QVERIFY(plot.xAxis->scaleType() == QCPAxis::stLogarithmic);
    // Cumulative floats rise along each curve.
    QCPGraph* g = plot.graph(0);
    QVERIFY(g->dataCount() == run_->view().num_epochs());
    QVERIFY(g->data()->at(g->dataCount() - 1)->key > g->data()->at(0)->key);
    DrawAccuracyComparison(&plot, {}, CompareAxis::kEpoch);
    QCOMPARE(plot.graphCount(), 0);
  }

  // Seeds of one setting share a colour and one legend entry; the data
  // export still has each run by its file.
  void accuracyComparisonGroupsRunsOfOneSetting() {
    std::vector<std::shared_ptr<const RunData>> runs;
    for (const char* name : {"fmnist-mlp-powersgd-static-1.trace", "seeds/seed-2/fmnist-mlp-powersgd-static-1.trace",
                             "fmnist-mlp-powersgd-static-2.trace"}) {
      runs.push_back(std::make_shared<RunData>(LoadRunData(test_support::SampleTrace(name).toStdString())));
    }
    QCustomPlot plot;
    DrawAccuracyComparison(&plot, runs, CompareAxis::kEpoch);
    QStringList legend;
    for (int i = 0; i < plot.legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i));
      if (item) legend << item->plottable()->name();
    }
    QCOMPARE(legend, QStringList({"rank 1 (2 runs)", "rank 2"}));
    QCOMPARE(Sections(FigureCsv(&plot), "graph"), 3);
    QCOMPARE(plot.graph(0)->pen().color(), plot.graph(1)->pen().color());
    QVERIFY(plot.graph(0)->pen().color() != plot.graph(2)->pen().color());
    QVERIFY(FigureCsv(&plot).contains("# graph: fmnist-mlp-powersgd-static-1.trace\n"));
  }

  void manyLayersKeepTheLegendShort() {
    synthetic::SyntheticTraceOptions o;
    o.model = "resnet18";
    o.epochs = 40;
    o.decay_epochs = {20, 30};
    const QString path = test_support::WriteSynthetic(scratch_, "resnet.trace", o);
    const RunData run = LoadRunData(path.toStdString());
    const RegimeAnalysis analysis = AnalyseRegimes(run, ScheduleSettings());
    QCustomPlot plot;
    DrawGradientNorms(&plot, run, analysis, {}, false);
    bool hessian = false;
    for (const HessianRecord& h : run.hessian) hessian = hessian || h.block.empty();
    QCOMPARE(Sections(FigureCsv(&plot), "graph"), 62 + (hessian ? 1 : 0));
    int layer_entries = 0;
    bool more = false;
    for (int i = 0; i < plot.legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i));
      if (!item) continue;
      more = more || item->plottable()->name() == "+54 more layers";
      const bool layer = !st::IsLegendOnly(item->plottable()) && item->plottable()->valueAxis() == plot.yAxis;
      layer_entries += layer ? 1 : 0;
    }
    QCOMPARE(layer_entries, 8);
    QVERIFY(more);
    DrawLevelMap(&plot, run, analysis);
    QCOMPARE(Sections(FigureCsv(&plot), "colormap"), 1);
    QVERIFY(SaveFigure(&plot, scratch_ + "/resnet-levels.png", nullptr, 1200, 700));
  }

 private:
  std::shared_ptr<RunData> run_;
  ScheduleSettings settings_;
  RegimeAnalysis analysis_;
  QString scratch_;
};

QTEST_MAIN(FiguresTest)
#include "figures_test.moc"
