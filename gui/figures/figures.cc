// Figures out of the window (SaveFigure, FigureCsv): PNG / PDF files and the data behind them as CSV.
// The builders themselves live beside this file, one per view family.
#include <qcustomplot.h>

#include <QDir>
#include <QFile>
#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QTextStream>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "gui/figures/figure_style.h"
#include "gui/figures/figure_theme.h"
#include "gui/figures/figures.h"

namespace accordion::gui {

namespace {

QString CsvField(QString text) {
  text.replace('\n', ' ');
  if (text.contains(',') || text.contains('"')) {
    text.replace("\"", "\"\"");
    return "\"" + text + "\"";
  }
  return text;
}

QString Number(double v) { return QString::number(v, 'g', 10); }

QString AxisName(const QCPAxis* axis, const char* fallback) {
  if (axis == nullptr) return fallback;
  // The label as the figure builder wrote it, not as a short plot shows it.
  const QString full = axis->property(style::kFullLabel).toString();
  const QString label = full.isEmpty() ? axis->label() : full;
  if (label.trimmed().isEmpty()) return fallback;
  return label.simplified();
}

// The text tick at `key` when `axis` labels its ticks with text, else "".
QString TickText(const QCPAxis* axis, double key) {
  if (axis == nullptr) return {};
  auto text = axis->ticker().dynamicCast<QCPAxisTickerText>();
  if (!text) return {};
  auto it = text->ticks().find(key);
  return it == text->ticks().end() ? QString() : it.value().simplified();
}

}  // namespace

void RefreshFigure(QCustomPlot* plot, bool immediate) {
  if (plot == nullptr) return;
  const QStringList layers = style::TakePartialLayers(plot);
  if (!layers.isEmpty() && style::RerenderLayers(plot, layers)) {
    if (immediate) {
      plot->repaint();
    } else {
      plot->update();
    }
    return;
  }
  plot->replot(immediate ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
}

namespace {

// The plot as a 96 dpi PNG at `path`. Encoded in memory and then written:
// libpng's own error line never reaches stderr when the disk fails a write
// (a tool's one-line contract), and a short write is seen.
bool WritePng(QCustomPlot* plot, const QString& path, int width, int height) {
  QImage image = plot->toPixmap(width, height, 1.0).toImage();
  constexpr double kDotsPerMeter = 96 / 0.0254;
  image.setDotsPerMeterX(static_cast<int>(kDotsPerMeter));
  image.setDotsPerMeterY(static_cast<int>(kDotsPerMeter));
  QByteArray bytes;
  QBuffer buffer(&bytes);
  if (!buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG")) return false;
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size() && file.flush();
}

}  // namespace

bool SaveFigure(QCustomPlot* plot, const QString& path, QString* error, int width, int height) {
  auto fail = [error](const QString& why) {
    if (error) *error = why;
    return false;
  };
  if (plot == nullptr) return fail("no figure");
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != "png" && suffix != "pdf") {
    return fail(QString("cannot save '%1': use a .png or .pdf file name").arg(path));
  }
  if (width <= 0 || height <= 0) {
    width = plot->viewport().width();
    height = plot->viewport().height();
  }
  if (width <= 0 || height <= 0) {
    width = style::kExportWidth;
    height = style::kExportHeight;
  }
  // Written beside the target, then renamed over it: never a half file.
  const QFileInfo target(path);
  if (!target.absoluteDir().exists()) {
    return fail(QString("cannot save '%1': the directory does not exist").arg(path));
  }
  const QString part = target.absoluteDir().filePath("." + target.fileName() + ".part." + suffix);
  QFile::remove(part);
  if (suffix == "pdf") style::UseVectorDiscs(plot, true);
  // Files stay light whatever the screen's theme: a figure in a paper or
  // the report looks the same from any desktop.
  const style::FigureTheme screen = style::ThemeOf(plot);
  if (screen.dark) style::RecolorPlot(plot, screen, style::LightTheme());
  const bool ok = suffix == "png" ? WritePng(plot, part, width, height)
                                  : plot->savePdf(part, width, height, QCP::epNoCosmetic, "Accordion Toolkit");
  if (screen.dark) {
    style::RecolorPlot(plot, style::LightTheme(), screen);
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
  if (suffix == "pdf") style::UseVectorDiscs(plot, false);
  if (!ok || !QFileInfo(part).exists() || QFileInfo(part).size() == 0) {
    QFile::remove(part);
    return fail(QString("cannot write '%1'").arg(path));
  }
  if (QFileInfo::exists(path) && !QFile::remove(path)) {
    QFile::remove(part);
    return fail(QString("cannot replace '%1'").arg(path));
  }
  if (!QFile::rename(part, path)) {
    QFile::remove(part);
    return fail(QString("cannot write '%1'").arg(path));
  }
  return true;
}

QString FigureCsv(const QCustomPlot* const_plot) {
  QString out;
  QTextStream s(&out);
  if (const_plot == nullptr) return out;
  // QCustomPlot's accessors are not const; nothing here changes the plot.
  auto* plot = const_cast<QCustomPlot*>(const_plot);
  // One flat table, one row per point: series, x, y, and only where a
  // figure needs them a label (a bar's schedule, a span's name), a value
  // (a level-map cell), an end (a timeline span) and, where the series sit
  // on more than one y axis, that axis' name.
  struct Row {
    QString series;
    double x = 0;
    std::optional<double> y, value, x_end;
    QString label;
    const QCPAxis* value_axis = nullptr;
  };
  std::vector<Row> rows;
  std::set<const QCPAxis*> value_axes;
  // Two series of one name (runs of one file name in two directories) stay
  // apart: the second is "name #2".
  std::map<QString, int> names;
  for (int i = 0; i < plot->plottableCount(); ++i) {
    QCPAbstractPlottable* p = plot->plottable(i);
    if (style::IsLegendOnly(p)) continue;
    const QCPAxis* key_axis = p->keyAxis();
    const int seen = names[p->name().simplified()]++;
    const QString name = p->name().simplified() + (seen > 0 ? QString(" #%1").arg(seen + 1) : QString());
    auto add = [&](double key, double value) {
      rows.push_back(Row{name, key, value, std::nullopt, std::nullopt, TickText(key_axis, key), p->valueAxis()});
      value_axes.insert(p->valueAxis());
    };
    if (auto* graph = qobject_cast<QCPGraph*>(p)) {
      for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) add(it->key, it->value);
    } else if (auto* bars = qobject_cast<QCPBars*>(p)) {
      for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) add(it->key, it->value);
    } else if (auto* map = qobject_cast<QCPColorMap*>(p)) {
      QCPColorMapData* d = map->data();
      for (int k = 0; k < d->keySize(); ++k) {
        for (int v = 0; v < d->valueSize(); ++v) {
          double key = 0, value = 0;
          d->cellToCoord(k, v, &key, &value);
          rows.push_back(Row{name, key, value, d->cell(k, v), std::nullopt, QString(), nullptr});
        }
      }
    }
  }
  // Spans the timeline draws as items: x from start to end (ms).
  for (int i = 0; i < plot->itemCount(); ++i) {
    const QCPAbstractItem* item = plot->item(i);
    if (!item->property("accordion_span_track").isValid()) continue;
    rows.push_back(Row{item->property("accordion_span_track").toString().simplified(),
                       item->property("accordion_span_start_ms").toDouble(), std::nullopt, std::nullopt,
                       item->property("accordion_span_end_ms").toDouble(),
                       item->property("accordion_span_name").toString().simplified(), nullptr});
  }
  bool labels = false, values = false, ends = false;
  for (const Row& r : rows) {
    labels = labels || !r.label.isEmpty();
    values = values || r.value.has_value();
    ends = ends || r.x_end.has_value();
  }
  const bool axes = value_axes.size() > 1;
  s << "series,x,y";
  if (labels) s << ",label";
  if (values) s << ",value";
  if (ends) s << ",x end";
  if (axes) s << ",y axis";
  s << "\n";
  auto number = [](const std::optional<double>& v) { return v ? Number(*v) : QString(); };
  for (const Row& r : rows) {
    s << CsvField(r.series) << "," << Number(r.x) << "," << number(r.y);
    if (labels) s << "," << CsvField(r.label);
    if (values) s << "," << number(r.value);
    if (ends) s << "," << number(r.x_end);
    if (axes) s << "," << CsvField(r.value_axis ? AxisName(r.value_axis, "y") : QString());
    s << "\n";
  }
  return out;
}

}  // namespace accordion::gui
