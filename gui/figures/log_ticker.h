// The one ticker of every logarithmic axis in the figures: ticks at powers
// of ten labelled 0.01, 1, 100 or 10⁶ (never QCustomPlot's "2·10¹, 4·10¹"
// fallback when a range spans less than two decades; 1-2-5 steps instead).
#ifndef ACCORDION_GUI_FIGURES_LOG_TICKER_H_
#define ACCORDION_GUI_FIGURES_LOG_TICKER_H_

#include <qcustomplot.h>

#include <QString>

namespace accordion::gui::style {

class LogTicker : public QCPAxisTicker {
 public:
  // `suffix` follows every label ("×" on a speedup axis).
  explicit LogTicker(const QString& suffix = QString()) : suffix_(suffix) {}

  // The label of a tick at `value`: a plain number from 0.001 to 99999,
  // else 10ⁿ or m×10ⁿ in superscript digits; then the suffix.
  static QString Label(double value, const QString& suffix = QString());

 protected:
  QVector<double> createTickVector(double tick_step, const QCPRange& range) override;
  QVector<double> createSubTickVector(int sub_tick_count, const QVector<double>& ticks) override;
  int getSubTickCount(double) override { return 0; }
  QString getTickLabel(double tick, const QLocale&, QChar, int) override { return Label(tick, suffix_); }

 private:
  QString suffix_;
  // Decade ticks one decade apart get the 2..9 minor ticks between them.
  bool minor_between_decades_ = false;
};

}  // namespace accordion::gui::style

#endif  // ACCORDION_GUI_FIGURES_LOG_TICKER_H_
