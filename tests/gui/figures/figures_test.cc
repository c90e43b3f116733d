// Figure builders: what they draw, probed in rendered pixels and in the
// CSV of their data, and what they write to disk.
#include <qcustomplot.h>

#include <QFile>
#include <QPointer>
#include <QRegularExpression>
#include <QtTest>
#include <cmath>
#include <functional>
#include <map>

#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/figures/log_ticker.h"
#include "gui/figures/smoothing.h"
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

// The fields of one CSV line (quoted fields may hold commas).
QStringList CsvFields(const QString& line) {
  QStringList fields;
  QString field;
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields << field;
      field.clear();
    } else {
      field += c;
    }
  }
  fields << field;
  return fields;
}

// The figure's CSV as a flat table: every row as wide as the header.
std::vector<QStringList> CsvRows(const QString& csv) {
  std::vector<QStringList> rows;
  for (const QString& line : csv.split('\n', Qt::SkipEmptyParts)) rows.push_back(CsvFields(line));
  return rows;
}

// The series of the CSV (its first column), in order of first appearance.
QStringList Series(const QString& csv) {
  QStringList series;
  const std::vector<QStringList> rows = CsvRows(csv);
  for (size_t i = 1; i < rows.size(); ++i) {
    if (!series.contains(rows[i].first())) series << rows[i].first();
  }
  return series;
}

int SeriesCount(const QString& csv) { return static_cast<int>(Series(csv).size()); }

// The rows of one series.
int RowsOf(const QString& csv, const QString& series) {
  int n = 0;
  for (const QStringList& row : CsvRows(csv)) n += row.first() == series ? 1 : 0;
  return n;
}

// CIEDE2000 colour difference (Sharma, Wu & Dalal 2005), from sRGB (D65).
double Ciede2000(const QColor& c1, const QColor& c2) {
  auto lab = [](const QColor& c, double* L, double* a, double* b) {
    auto lin = [](double u) { return u > 0.04045 ? std::pow((u + 0.055) / 1.055, 2.4) : u / 12.92; };
    const double r = lin(c.redF()), g = lin(c.greenF()), bl = lin(c.blueF());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047;
    const double y = 0.2126 * r + 0.7152 * g + 0.0722 * bl;
    const double z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883;
    auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
    *L = 116 * f(y) - 16;
    *a = 500 * (f(x) - f(y));
    *b = 200 * (f(y) - f(z));
  };
  constexpr double kPi = 3.14159265358979323846;
  auto rad = [](double deg) { return deg * kPi / 180; };
  double L1, a1, b1, L2, a2, b2;
  lab(c1, &L1, &a1, &b1);
  lab(c2, &L2, &a2, &b2);
  const double cbar = (std::hypot(a1, b1) + std::hypot(a2, b2)) / 2;
  const double g = 0.5 * (1 - std::sqrt(std::pow(cbar, 7) / (std::pow(cbar, 7) + std::pow(25.0, 7))));
  const double a1p = (1 + g) * a1, a2p = (1 + g) * a2;
  const double c1p = std::hypot(a1p, b1), c2p = std::hypot(a2p, b2);
  auto hue = [](double b, double a) {
    const double h = std::atan2(b, a) * 180 / kPi;
    return h < 0 ? h + 360 : h;
  };
  const double h1p = hue(b1, a1p), h2p = hue(b2, a2p);
  double dhp = 0;
  if (c1p * c2p != 0) {
    dhp = h2p - h1p;
    if (dhp > 180) dhp -= 360;
    if (dhp < -180) dhp += 360;
  }
  const double dLp = L2 - L1, dCp = c2p - c1p;
  const double dHp = 2 * std::sqrt(c1p * c2p) * std::sin(rad(dhp / 2));
  const double lbar = (L1 + L2) / 2, cbarp = (c1p + c2p) / 2;
  double hbar = h1p + h2p;
  if (c1p * c2p != 0)
    hbar = std::fabs(h1p - h2p) <= 180 ? hbar / 2 : (hbar < 360 ? (hbar + 360) / 2 : (hbar - 360) / 2);
  const double t = 1 - 0.17 * std::cos(rad(hbar - 30)) + 0.24 * std::cos(rad(2 * hbar)) +
                   0.32 * std::cos(rad(3 * hbar + 6)) - 0.20 * std::cos(rad(4 * hbar - 63));
  const double dtheta = 30 * std::exp(-std::pow((hbar - 275) / 25, 2));
  const double rc = 2 * std::sqrt(std::pow(cbarp, 7) / (std::pow(cbarp, 7) + std::pow(25.0, 7)));
  const double sl = 1 + 0.015 * std::pow(lbar - 50, 2) / std::sqrt(20 + std::pow(lbar - 50, 2));
  const double sc = 1 + 0.045 * cbarp, sh = 1 + 0.015 * cbarp * t;
  const double rt = -std::sin(rad(2 * dtheta)) * rc;
  return std::sqrt(std::pow(dLp / sl, 2) + std::pow(dCp / sc, 2) + std::pow(dHp / sh, 2) +
                   rt * (dCp / sc) * (dHp / sh));
}

// The tick labels the axis drew at its last replot.
QStringList TickLabels(QCPAxis* axis) {
  QStringList labels;
  for (const QString& l : axis->tickVectorLabels()) labels << l;
  return labels;
}

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
    QCOMPARE(SeriesCount(csv), layers + 1);  // + the Hessian
    QVERIFY(!csv.contains("LR decay"));      // legend-only entries are not data
    // One flat table: the norms and the Hessian sit on two y axes, which a
    // column names.
    QVERIFY2(csv.startsWith("series,x,y,y axis\n"), qPrintable(csv.left(80)));
    const QString first = QString::fromStdString(run_->view().layers[0].name);
    QVERIFY(csv.contains("\n" + first + ",0,"));
    QVERIFY(csv.contains(",‖Δ‖ (accumulated gradient norm)\n"));
    // One row per epoch for the first layer.
    QCOMPARE(RowsOf(csv, first), run_->view().num_epochs());
  }

  // Every figure's CSV is one flat table: a "series,x,y" header, then one
  // row per point, each as wide as the header; no "# graph:" blocks.
  void csvIsOneFlatTable() {
    WhatIfSettings w;
    w.workers = 4;
    w.bandwidth_gbps = 1;
    const WhatIfProjection p = ProjectWhatIf(*run_, settings_, w, sim::TimingSource::kAnalytic);
    const std::vector<std::function<void(QCustomPlot*)>> figures = {
        [this](QCustomPlot* plot) { DrawGradientNorms(plot, *run_, analysis_, {}, false); },
        [this](QCustomPlot* plot) { DrawCheckRatios(plot, *run_, analysis_, {}); },
        [this](QCustomPlot* plot) { DrawLevelMap(plot, *run_, analysis_); },
        [&p](QCustomPlot* plot) { DrawProjection(plot, p); },
        [&p](QCustomPlot* plot) { DrawEpochBreakdown(plot, p); },
        [this, &p](QCustomPlot* plot) { DrawIterationTimeline(plot, *run_, &p, 0); },
        [this](QCustomPlot* plot) { DrawAccuracyComparison(plot, {run_}, CompareAxis::kFloats); },
    };
    for (size_t f = 0; f < figures.size(); ++f) {
      QCustomPlot plot;
      figures[f](&plot);
      const QString csv = FigureCsv(&plot);
      QVERIFY2(csv.startsWith("series,x,y"), qPrintable(QString("figure %1: %2").arg(f).arg(csv.left(60))));
      QVERIFY2(!csv.contains('#'), qPrintable(QString("figure %1 has comment lines").arg(f)));
      QVERIFY2(!csv.contains("\n\n"), qPrintable(QString("figure %1 has blank lines").arg(f)));
      const std::vector<QStringList> rows = CsvRows(csv);
      QVERIFY(rows.size() > 2);
      for (const QStringList& row : rows) {
        QVERIFY2(row.size() == rows.front().size(), qPrintable(QString("figure %1: '%2'").arg(f).arg(row.join(','))));
        QVERIFY(!row.first().isEmpty());
      }
    }
  }

  // Every log axis is labelled 1, 10, 100 or 10ⁿ (LogTicker), never
  // 2·10¹ / 4·10¹ (QCustomPlot's log ticker's fallback on a short range)
  // nor "1e+01": on the real figures' axes, at their ranges and zoomed in.
  // Epoch axes tick whole epochs only: a 12-epoch range used to read
  // 0, 2.5, 5, 7.5, 10 (QCustomPlot's 1-2.5-5 steps).
  void epochAxesTickWholeEpochs() {
    QCustomPlot plot;
    const auto whole = [&](QCPAxis* axis, const QString& what) {
      for (const double lower : {0.0, 3.0}) {
        for (const double span : {4.0, 11.0, 12.0, 29.0, 300.0}) {
          axis->setRange(lower, lower + span);
          st::RenderFigure(&plot, 900, 500);
          const QVector<double> ticks = axis->tickVector();
          QVERIFY2(ticks.size() >= 2, qPrintable(what));
          for (double t : ticks) {
            QVERIFY2(t == std::floor(t), qPrintable(QString("%1, %2 epochs: tick %3").arg(what).arg(span).arg(t)));
          }
        }
      }
    };
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    whole(plot.xAxis, "norms");
    DrawCheckRatios(&plot, *run_, analysis_, {});
    whole(plot.xAxis, "ratios");
    DrawLevelMap(&plot, *run_, analysis_);
    whole(plot.xAxis, "level map");
    DrawAccuracyComparison(&plot, {run_}, CompareAxis::kEpoch);
    whole(plot.xAxis, "accuracy");
  }

  // A y label longer than its short plot is cut, and keeps its unit: the
  // numbers beside it stay readable as seconds, not "time per e…".
  void axisLabelsCutKeepTheirUnit() {
    QCustomPlot plot;
    DrawLevelMap(&plot, *run_, analysis_);  // any figure: it installs the fitting axis rect
    st::StyleAxis(plot.yAxis, "time per epoch on the cluster (s)");
    st::RenderFigure(&plot, 900, 220);
    const QString shown = plot.yAxis->label();
    QVERIFY2(shown.endsWith(" (s)"), qPrintable(shown));
    QVERIFY2(shown.contains(QChar(0x2026)), qPrintable(shown));  // shortened: "…"
    st::RenderFigure(&plot, 900, 900);
    QCOMPARE(plot.yAxis->label(), QString("time per epoch on the cluster (s)"));  // whole where it fits
  }

  // Bar labels over an axis in seconds are in seconds, to three figures.
  void barLabelsAreInTheAxisUnit() {
    QCOMPARE(st::SecondsOnAxis(0.99858), QString("0.999 s"));
    QCOMPARE(st::SecondsOnAxis(46.46), QString("46.5 s"));
    QCOMPARE(st::SecondsOnAxis(1234.4), QString("1234 s"));
    QCOMPARE(st::SecondsOnAxis(0.0384), QString("0.0384 s"));
  }

  void logAxesAreLabelledInDecades() {
    const QRegularExpression decade("^(0\\.0*1|10*|10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)(×)?$");
    const QRegularExpression one_two_five("^([125]0*|0\\.0*[125]|([25]×)?10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)(×)?$");
    WhatIfSettings w;
    w.workers = 4;
    w.bandwidth_gbps = 1;
    const std::vector<SweepPointResult> sweep = SweepBandwidth(*run_, settings_, w, LogSpaced(0.01, 1000, 6));
    QCustomPlot plot;
    auto check = [&](QCPAxis* axis, const QRegularExpression& pattern, const QString& what) {
      st::RenderFigure(&plot, 1200, 700);
      QVERIFY2(axis->scaleType() == QCPAxis::stLogarithmic, qPrintable(what));
      const QStringList labels = TickLabels(axis);
      QVERIFY2(labels.size() >= 2, qPrintable(what + ": " + labels.join(" ")));
      for (const QString& label : labels) {
        QVERIFY2(pattern.match(label).hasMatch(), qPrintable(what + ": '" + label + "' in " + labels.join(" ")));
      }
    };
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    check(plot.yAxis, decade, "norms");
    // Zoomed into less than a decade: 1-2-5 steps, still no 2·10¹.
    plot.yAxis->setRange(0.015, 0.06);
    check(plot.yAxis, one_two_five, "norms zoomed");
    QVERIFY(TickLabels(plot.yAxis).contains("0.02"));
    DrawCheckRatios(&plot, *run_, analysis_, {});
    check(plot.yAxis, plot.yAxis->range().upper / plot.yAxis->range().lower > 100 ? decade : one_two_five, "ratios");
    DrawBandwidthSweep(&plot, sweep, 1);
    check(plot.xAxis, decade, "bandwidth");
    QVERIFY2(TickLabels(plot.xAxis).contains("0.1") && TickLabels(plot.xAxis).contains("100"),
             qPrintable(TickLabels(plot.xAxis).join(" ")));
    DrawAccuracyComparison(&plot, {run_}, CompareAxis::kFloats);
    check(plot.xAxis, plot.xAxis->range().upper / plot.xAxis->range().lower > 100 ? decade : one_two_five, "floats");
    QVERIFY2(TickLabels(plot.xAxis).join(" ").contains("10⁶") || TickLabels(plot.xAxis).join(" ").contains("10⁷"),
             qPrintable(TickLabels(plot.xAxis).join(" ")));
    // The labels themselves.
    QCOMPARE(st::LogTicker::Label(1), QString("1"));
    QCOMPARE(st::LogTicker::Label(100), QString("100"));
    QCOMPARE(st::LogTicker::Label(0.01), QString("0.01"));
    QCOMPARE(st::LogTicker::Label(1e6), QString("10⁶"));
    QCOMPARE(st::LogTicker::Label(1e-5), QString("10⁻⁵"));
    QCOMPARE(st::LogTicker::Label(2e-5), QString("2×10⁻⁵"));
    QCOMPARE(st::LogTicker::Label(5, "×"), QString("5×"));
  }

  // The categorical palette keeps series apart: every pair at least 25 in
  // CIEDE2000 (the old Okabe-Ito blue and sky blue were 22.3), and every
  // colour stands out on white and on a dark plot.
  void paletteColoursAreFarApart() {
    const std::vector<QColor>& palette = st::Palette();
    QVERIFY(palette.size() >= 8);
    for (size_t i = 0; i < palette.size(); ++i) {
      for (size_t j = i + 1; j < palette.size(); ++j) {
        const double d = Ciede2000(palette[i], palette[j]);
        QVERIFY2(d >= 25, qPrintable(QString("%1 and %2: ΔE00 %3").arg(palette[i].name(), palette[j].name()).arg(d)));
      }
      for (const QColor& background : {QColor(Qt::white), QColor(0x1E, 0x1E, 0x1E)}) {
        const double d = Ciede2000(palette[i], background);
        QVERIFY2(d >= 30, qPrintable(QString("%1 on %2: ΔE00 %3").arg(palette[i].name(), background.name()).arg(d)));
      }
    }
    // The metric itself, on Sharma et al.'s first test pair (ΔE00 2.0425):
    // Lab (50, 2.6772, -79.7751) vs (50, 0, -82.7485) is close to these sRGB
    // blues; a sanity check of scale rather than of the published digits.
    QVERIFY(Ciede2000(QColor(0x00, 0x72, 0xB2), QColor(0x56, 0xB4, 0xE9)) > 20);
    QVERIFY(Ciede2000(QColor(0x00, 0x72, 0xB2), QColor(0x56, 0xB4, 0xE9)) < 25);
    QCOMPARE(Ciede2000(QColor(0x12, 0x34, 0x56), QColor(0x12, 0x34, 0x56)), 0.0);
  }

  // TensorBoard's debiased EMA, and what it does to a figure's curves.
  void smoothingIsTensorBoardsEma() {
    QCOMPARE(st::EmaSmooth({1, 0, 0}, 0), std::vector<double>({1, 0, 0}));
    const std::vector<double> s = st::EmaSmooth({1, 0, 0}, 0.5);
    QCOMPARE(s.size(), size_t{3});
    QVERIFY(std::fabs(s[0] - 1) < 1e-12);  // the first point is itself, not pulled to 0
    QVERIFY(std::fabs(s[1] - 1.0 / 3) < 1e-12);
    QVERIFY(std::fabs(s[2] - 1.0 / 7) < 1e-12);
    const std::vector<double> gap = st::EmaSmooth({2, qQNaN(), 4}, 0.5);
    QVERIFY(std::isnan(gap[1]));
    QVERIFY(std::fabs(gap[2] - (0.5 * 0.5 * 2 + 0.5 * 4) / (1 - 0.25)) < 1e-12);
    // A constant stays constant at any weight.
    for (double v : st::EmaSmooth({3, 3, 3, 3}, 0.99)) QVERIFY(std::fabs(v - 3) < 1e-9);

    QCustomPlot plot;
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    QCPGraph* series = plot.graph(0);
    std::vector<double> raw;
    for (auto it = series->data()->constBegin(); it != series->data()->constEnd(); ++it) raw.push_back(it->value);
    const int graphs = plot.graphCount();
    QVERIFY(st::SmoothSeries(&plot, 0.9) > 0);
    const std::vector<double> expected = st::EmaSmooth(raw, 0.9);
    QCOMPARE(series->dataCount(), static_cast<int>(raw.size()));
    bool differs = false;
    for (int i = 0; i < series->dataCount(); ++i) {
      QVERIFY(std::fabs(series->data()->at(i)->value - expected[static_cast<size_t>(i)]) < 1e-12);
      differs = differs || series->data()->at(i)->value != raw[static_cast<size_t>(i)];
    }
    QVERIFY(differs);
    QCPGraph* faint = st::RawSeriesOf(series);
    QVERIFY(faint != nullptr);
    QCOMPARE(faint->name(), series->name() + " (raw)");
    QCOMPARE(faint->data()->at(3)->value, raw[3]);
    QVERIFY(faint->pen().color().alpha() < 128);
    QVERIFY(!plot.legend->hasItemWithPlottable(faint));
    QVERIFY(plot.graphCount() > graphs);
    QVERIFY(st::SmoothSeries(&plot, 0.9) == 0);  // once per draw
    QVERIFY(st::RemoveSmoothing(&plot) > 0);
    QCOMPARE(plot.graphCount(), graphs);
    QCOMPARE(series->data()->at(3)->value, raw[3]);
    // The Hessian curve and legend entries are not smoothed.
    DrawCheckRatios(&plot, *run_, analysis_, {});
    QVERIFY(st::HasSmoothableSeries(&plot));
    DrawProjection(&plot, ProjectWhatIf(*run_, settings_, WhatIfSettings(), sim::TimingSource::kAnalytic));
    QVERIFY(!st::HasSmoothableSeries(&plot));
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
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 4);
    // A subset of layers.
    DrawGradientNorms(&plot, *run_, analysis_, {0, 2}, false);
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 3);
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
    QCOMPARE(SeriesCount(csv), run_->view().num_layers());
    // A point per check that produced a ratio.
    int ratios = 0;
    for (const auto& row : analysis_.comparison.accordion.ratios) {
      for (const auto& r : row) ratios += r && *r > 0 ? 1 : 0;
    }
    QCOMPARE(csv.count('\n') - 1, ratios);
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
    QCOMPARE(SeriesCount(csv), 1);
    QVERIFY(csv.startsWith("series,x,y,value\n"));
    QCOMPARE(csv.count('\n'), 1 + s.num_epochs() * run_->view().num_layers());
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
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 4);
    QVERIFY(FigureCsv(&plot).startsWith("series,x,y,label\n"));
    QVERIFY2(FigureCsv(&plot).contains("\ncompute,1,"), qPrintable(FigureCsv(&plot)));
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
    QCOMPARE(SeriesCount(csv), 3);
    QVERIFY(csv.startsWith("series,x,y\n"));
    QVERIFY(csv.contains("\nAccordion vs dense,0.1,"));
    QVERIFY(csv.contains("\nstatic high vs dense,"));

    // Measured and simulated tracks.
    DrawIterationTimeline(&plot, *run_, &p, run_->view().num_epochs() - 1);
    const QString spans = FigureCsv(&plot);
    QVERIFY2(spans.startsWith("series,x,y,label,x end\n"), qPrintable(spans.left(80)));
    QVERIFY(spans.contains("\nmeasured compute,0,,forward,"));
    QVERIFY(spans.contains(",,backward,"));
    QVERIFY(spans.contains("\nsimulated compute,"));
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
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 3);
    QVERIFY(FigureCsv(&plot).contains("\nfmnist-mlp-powersgd-static-1.trace,0,"));
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
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 3);
    QCOMPARE(plot.graph(0)->pen().color(), plot.graph(1)->pen().color());
    QVERIFY(plot.graph(0)->pen().color() != plot.graph(2)->pen().color());
    QVERIFY(FigureCsv(&plot).contains("\nfmnist-mlp-powersgd-static-1.trace,"));
    QVERIFY(FigureCsv(&plot).contains("\nfmnist-mlp-powersgd-static-1.trace #2,"));
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
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 62 + (hessian ? 1 : 0));
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
    QCOMPARE(SeriesCount(FigureCsv(&plot)), 1);
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
