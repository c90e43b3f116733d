// Figures out of the window (SaveFigure, FigureCsv): PNG / PDF files and the data behind them as CSV.
// The builders themselves live beside this file, one per view family.
#include <qcustomplot.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTextStream>

#include "gui/figures/figure_style.h"
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

bool HasTextTicks(const QCPAxis* axis) {
  return axis != nullptr && !axis->ticker().dynamicCast<QCPAxisTickerText>().isNull();
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
  const bool ok = suffix == "png" ? plot->savePng(part, width, height, 1.0, -1, 96)
                                  : plot->savePdf(part, width, height, QCP::epNoCosmetic, "Accordion Toolkit");
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
  bool first = true;
  auto section = [&](const QString& kind, const QString& name) {
    if (!first) s << "\n";
    first = false;
    s << "# " << kind << ": " << name.simplified() << "\n";
  };
  for (int i = 0; i < plot->plottableCount(); ++i) {
    QCPAbstractPlottable* p = plot->plottable(i);
    if (style::IsLegendOnly(p)) continue;
    const QCPAxis* key_axis = p->keyAxis();
    const QCPAxis* value_axis = p->valueAxis();
    const QString key_name = AxisName(key_axis, "x");
    const QString value_name = AxisName(value_axis, "y");
    const bool labels = HasTextTicks(key_axis);
    auto header = [&](const QString& value_column) {
      s << CsvField(key_name) << "," << CsvField(value_column);
      if (labels) s << "," << CsvField(key_name + " label");
      s << "\n";
    };
    auto row = [&](double key, double value) {
      s << Number(key) << "," << Number(value);
      if (labels) s << "," << CsvField(TickText(key_axis, key));
      s << "\n";
    };
    if (auto* graph = qobject_cast<QCPGraph*>(p)) {
      section("graph", graph->name());
      header(value_name);
      for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) row(it->key, it->value);
    } else if (auto* bars = qobject_cast<QCPBars*>(p)) {
      section("bars", bars->name());
      header(value_name + " (" + bars->name().simplified() + ")");
      for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) row(it->key, it->value);
    } else if (auto* map = qobject_cast<QCPColorMap*>(p)) {
      section("colormap", map->name());
      s << CsvField(key_name) << "," << CsvField(value_name) << "," << CsvField(map->name()) << "\n";
      QCPColorMapData* d = map->data();
      for (int k = 0; k < d->keySize(); ++k) {
        for (int v = 0; v < d->valueSize(); ++v) {
          double key = 0, value = 0;
          d->cellToCoord(k, v, &key, &value);
          s << Number(key) << "," << Number(value) << "," << Number(d->cell(k, v)) << "\n";
        }
      }
    }
  }
  // Spans the timeline draws as items.
  bool spans = false;
  for (int i = 0; i < plot->itemCount(); ++i) {
    const QCPAbstractItem* item = plot->item(i);
    if (!item->property("accordion_span_track").isValid()) continue;
    if (!spans) {
      section("spans", "timeline");
      s << "track,name,start (ms),end (ms)\n";
      spans = true;
    }
    s << CsvField(item->property("accordion_span_track").toString()) << ","
      << CsvField(item->property("accordion_span_name").toString()) << ","
      << Number(item->property("accordion_span_start_ms").toDouble()) << ","
      << Number(item->property("accordion_span_end_ms").toDouble()) << "\n";
  }
  return out;
}

}  // namespace accordion::gui
