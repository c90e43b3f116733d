#include "gui/figures/log_ticker.h"

#include <cmath>

namespace accordion::gui::style {

namespace {

QString Superscript(int n) {
  static const QChar kDigits[] = {QChar(0x2070), QChar(0x00B9), QChar(0x00B2), QChar(0x00B3), QChar(0x2074),
                                  QChar(0x2075), QChar(0x2076), QChar(0x2077), QChar(0x2078), QChar(0x2079)};
  QString out;
  if (n < 0) out += QChar(0x207B);
  for (const QChar c : QString::number(std::abs(n))) out += kDigits[c.digitValue()];
  return out;
}

// Ticks m × 10^n inside [lo, hi] for each multiplier in `mantissas`.
QVector<double> MultiplesInside(double lo, double hi, std::initializer_list<int> mantissas) {
  QVector<double> ticks;
  const int first = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int last = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  for (int n = first; n <= last; ++n) {
    for (int m : mantissas) {
      const double v = m * std::pow(10.0, n);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
    }
  }
  return ticks;
}

}  // namespace

QString LogTicker::Label(double value, const QString& suffix) {
  if (!(value > 0) || !std::isfinite(value)) return QString::number(value) + suffix;
  const int n = static_cast<int>(std::floor(std::log10(value) + 1e-9));
  const double mantissa = value / std::pow(10.0, n);
  if (n >= -3 && n <= 4) return QString::number(value, 'g', 6) + suffix;
  if (std::fabs(mantissa - 1) < 1e-6) return "10" + Superscript(n) + suffix;
  return QString::number(mantissa, 'g', 3) + QStringLiteral("×10") + Superscript(n) + suffix;
}

QVector<double> LogTicker::createTickVector(double, const QCPRange& range) {
  minor_between_decades_ = false;
  const double lo = range.lower, hi = range.upper;
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return {};
  QVector<double> decades = MultiplesInside(lo, hi, {1});
  if (decades.size() >= 2) {
    // Every k-th decade, so that about tickCount() labels show.
    const int step = std::max(1, static_cast<int>(std::ceil(decades.size() / (tickCount() + 1.0))));
    if (step == 1) {
      minor_between_decades_ = true;
      // One decade either side, so that the minor ticks reach the edges.
      decades.prepend(decades.front() / 10);
      decades.push_back(decades.back() * 10);
      return decades;
    }
    QVector<double> ticks;
    for (double d : decades) {
      if (static_cast<int>(std::lround(std::log10(d))) % step == 0) ticks.push_back(d);
    }
    return ticks;
  }
  QVector<double> ticks = MultiplesInside(lo, hi, {1, 2, 5});
  if (ticks.size() >= 2) return ticks;
  return MultiplesInside(lo, hi, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

QVector<double> LogTicker::createSubTickVector(int, const QVector<double>& ticks) {
  QVector<double> sub;
  if (!minor_between_decades_) return sub;
  for (int i = 0; i + 1 < ticks.size(); ++i) {
    for (int m = 2; m <= 9; ++m) sub.push_back(ticks[i] * m);
  }
  return sub;
}

}  // namespace accordion::gui::style
