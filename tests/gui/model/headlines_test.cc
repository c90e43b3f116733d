// The sentence builder behind the what-if tab's and the report's headlines:
// exact wording where Accordion is faster, as fast, slower, and mixed
// across a bandwidth sweep.
#include "gui/model/headlines.h"

#include <QTest>
#include <algorithm>
#include <limits>

using namespace accordion::gui;

namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// Dense takes 100 s at every bandwidth; Accordion takes `accordion_s[i]`.
std::vector<SweepPointResult> Sweep(const std::vector<double>& bandwidths, const std::vector<double>& accordion_s) {
  std::vector<SweepPointResult> out;
  for (size_t i = 0; i < bandwidths.size(); ++i) out.push_back({bandwidths[i], accordion_s[i], 0, 0, 100});
  return out;
}

const std::vector<double> kFourDecades = {0.1, 1, 10, 100};

// A grid over 300 epochs whose static low sends 100 floats in 100 s; each
// cell is {eta, interval, floats, low-level epochs, seconds}.
EtaIntervalSweep Grid(const std::vector<SweepCell>& cells) {
  EtaIntervalSweep g;
  g.epochs = 300;
  g.low_floats = 100;
  g.low_time_s = 100;
  g.has_time = true;
  g.schedulable = true;
  for (const SweepCell& c : cells) {
    g.cells.push_back(c);
    if (std::find(g.etas.begin(), g.etas.end(), c.eta) == g.etas.end()) g.etas.push_back(c.eta);
    if (std::find(g.intervals.begin(), g.intervals.end(), c.interval) == g.intervals.end()) {
      g.intervals.push_back(c.interval);
    }
  }
  return g;
}

}  // namespace

class HeadlinesTest : public QObject {
  Q_OBJECT

 private slots:
  void comparesTwoTimes() {
    QCOMPARE(Q(CompareTimes(58, 100, "dense")), QString("1.72× faster than dense"));
    QCOMPARE(Q(CompareTimes(100, 58, "dense")), QString("1.72× slower than dense"));
    QCOMPARE(Q(CompareTimes(100, 100.4, "dense")), QString("as fast as dense (within 0.5 %)"));
    QCOMPARE(Q(CompareTimes(100.4, 100, "dense")), QString("as fast as dense (within 0.5 %)"));
    // Just outside the tolerance the ratio says which way, never "1.00×".
    QCOMPARE(Q(CompareTimes(100, 99, "dense")), QString("1.01× slower than dense"));
    QCOMPARE(Q(CompareTimes(99, 100, "dense")), QString("1.01× faster than dense"));
    // Without a name: for a table's cells.
    QCOMPARE(Q(CompareTimes(100, 58, "")), QString("1.72× slower"));
    QCOMPARE(Q(CompareTimes(100, 100, "")), QString("as fast (within 0.5 %)"));
    QCOMPARE(Q(CompareTimes(0, 100, "dense")), QString());
    QCOMPARE(Q(CompareTimes(100, std::numeric_limits<double>::infinity(), "dense")), QString());
  }

  void projectionHeadlineSaysSlowerWhenSlower() {
    // The report once wrote "Accordion: 0.58× faster than dense" for this.
    QCOMPARE(Q(ProjectionHeadline(172, 100, 200, 172.5)),
             QString("Accordion: 1.72× slower than dense, 1.16× faster than static low and as fast as static high "
                     "(within 0.5 %)"));
    QCOMPARE(Q(ProjectionHeadline(50, 100, 80, 40)),
             QString("Accordion: 2.00× faster than dense, 1.60× faster than static low and 1.25× slower than static "
                     "high"));
    QCOMPARE(Q(ProjectionHeadline(50, 100, 0, 0)), QString("Accordion: 2.00× faster than dense"));
    QCOMPARE(Q(ProjectionHeadline(0, 100, 80, 40)), QString());
  }

  void sweepSlowerEverywhere() {
    // The what-if tab once wrote "Accordion saves less than 5 % of dense's
    // time from 0.1 Gb/s on" above this.
    QCOMPARE(Q(SweepHeadline(Sweep(kFourDecades, {120, 150, 172, 160}))),
             QString("Accordion is slower than dense at every bandwidth from 0.1 to 100 Gb/s (1.20–1.72× its time)"));
  }

  void sweepFasterEverywhere() {
    QCOMPARE(Q(SweepHeadline(Sweep(kFourDecades, {60, 70, 88, 94}))),
             QString("Accordion saves 6–40 % of dense's time at every bandwidth from 0.1 to 100 Gb/s"));
    QCOMPARE(Q(SweepHeadline(Sweep(kFourDecades, {97, 98, 99, 96}))),
             QString("Accordion saves less than 5 % of dense's time at every bandwidth from 0.1 to 100 Gb/s"));
    QCOMPARE(Q(SweepHeadline(Sweep({25}, {58}))), QString("Accordion saves 42 % of dense's time at 25 Gb/s"));
  }

  void sweepAsFastEverywhere() {
    QCOMPARE(Q(SweepHeadline(Sweep(kFourDecades, {100, 100.2, 99.8, 100}))),
             QString("Accordion is as fast as dense (within 0.5 %) at every bandwidth from 0.1 to 100 Gb/s"));
  }

  void sweepMixed() {
    QCOMPARE(Q(SweepHeadline(Sweep({0.1, 0.316, 1, 3.16, 10, 31.6, 100}, {60, 88, 97, 98, 110, 150, 172}))),
             QString("Accordion saves 12–40 % of dense's time from 0.1 to 0.316 Gb/s, less than 5 % from 1 to 3.16 "
                     "Gb/s and is slower than dense (1.10–1.72× its time) from 10 to 100 Gb/s"));
    QCOMPARE(Q(SweepHeadline(Sweep({1, 10}, {120, 50}))),
             QString("Accordion is slower than dense (1.20× its time) at 1 Gb/s and saves 50 % of dense's time at 10 "
                     "Gb/s"));
    QCOMPARE(Q(SweepHeadline(Sweep({1, 10, 100}, {100, 97, 103}))),
             QString("Accordion is as fast as dense (within 0.5 %) at 1 Gb/s, saves less than 5 % of dense's time at "
                     "10 Gb/s and is slower than dense (1.03× its time) at 100 Gb/s"));
    // More than three changes: counted, not listed.
    QCOMPARE(Q(SweepHeadline(Sweep({1, 2, 3, 4, 5}, {50, 120, 50, 120, 50}))),
             QString("Of the 5 bandwidths swept from 1 to 5 Gb/s, Accordion saves 50 % of dense's time at 3 and is "
                     "slower than dense (1.20× its time) at 2"));
  }

  void etaIntervalBestAndRecorded() {
    const EtaIntervalSweep g = Grid({{0.3, 10, 70, 40, 90}, {0.5, 10, 62, 20, 85}, {0.9, 10, 59, 12, 84}});
    QCOMPARE(
        Q(EtaIntervalHeadline(g, SweepMetric::kFloats, 0.5, 10)),
        QString("η 0.9, interval 10 saves the most: 41 % of static low's floats, 12 of 300 epochs at the low level; "
                "the recorded η 0.5, interval 10 saves 38 %, 20 at the low level"));
    QCOMPARE(Q(EtaIntervalHeadline(g, SweepMetric::kTime, 0.5, 10)),
             QString("η 0.9, interval 10 saves the most: 16 % of static low's time, 12 of 300 epochs at the low level; "
                     "the recorded η 0.5, interval 10 saves 15 %, 20 at the low level"));
    // The recorded setting is the best one.
    QCOMPARE(Q(EtaIntervalHeadline(g, SweepMetric::kFloats, 0.9, 10)),
             QString("The recorded η 0.9, interval 10 saves the most: 41 % of static low's floats, 12 of 300 epochs at "
                     "the low level"));
    // Recorded off the grid (or no recorded setting): the best alone.
    QCOMPARE(
        Q(EtaIntervalHeadline(g, SweepMetric::kFloats, 0.45, 10)),
        QString("η 0.9, interval 10 saves the most: 41 % of static low's floats, 12 of 300 epochs at the low level"));
  }

  void etaIntervalTies() {
    // Equal savings: the smallest η (the more cautious detector) is named,
    // and the others counted.
    const EtaIntervalSweep g = Grid({{0.5, 10, 62, 20, 85}, {0.7, 10, 59, 14, 84}, {0.9, 10, 59, 12, 84}});
    QCOMPARE(Q(EtaIntervalHeadline(g, SweepMetric::kFloats, 0.5, 10)),
             QString("η 0.7, interval 10 saves the most (as does 1 other setting): 41 % of static low's floats, 14 of "
                     "300 epochs at the low level; the recorded η 0.5, interval 10 saves 38 %, 20 at the low level"));
    // A tie that includes the recorded setting goes to it.
    QCOMPARE(Q(EtaIntervalHeadline(g, SweepMetric::kFloats, 0.9, 10)),
             QString("The recorded η 0.9, interval 10 saves the most (as does 1 other setting): 41 % of static low's "
                     "floats, 12 of 300 epochs at the low level"));
    // Two savings that print alike are not said to be equal.
    const EtaIntervalSweep close = Grid({{0.5, 10, 58.8, 20, 85}, {0.9, 10, 58.6, 12, 84}});
    QCOMPARE(
        Q(EtaIntervalHeadline(close, SweepMetric::kFloats, 0.5, 10)),
        QString("η 0.9, interval 10 saves the most: 41 % of static low's floats, 12 of 300 epochs at the low level; "
                "the recorded η 0.5, interval 10 saves slightly less (also 41 % when rounded), 20 at the low level"));
  }

  void etaIntervalNothingToGain() {
    // An interval longer than the run: every cell sends what static low does.
    const EtaIntervalSweep flat = Grid({{0.5, 40, 100, 300, 100}, {0.9, 40, 100, 300, 100}});
    QCOMPARE(Q(EtaIntervalHeadline(flat, SweepMetric::kFloats, 0.5, 40)),
             QString("Every η and interval of this grid sends as many floats as static low"));
    QCOMPARE(Q(EtaIntervalHeadline(flat, SweepMetric::kTime, 0.5, 40)),
             QString("Every η and interval of this grid takes as long as static low (within 0.5 %)"));
    // Slower than static low everywhere: "longer", never "saves".
    const EtaIntervalSweep slower = Grid({{0.5, 10, 62, 20, 105}, {0.9, 10, 59, 12, 103}});
    QCOMPARE(
        Q(EtaIntervalHeadline(slower, SweepMetric::kTime, 0.5, 10)),
        QString("η 0.9, interval 10 does best: it takes 3 % longer than static low, 12 of 300 epochs at the low level; "
                "the recorded η 0.5, interval 10 takes 5 % longer than static low, 20 at the low level"));
    // Mixed: one within the tolerance, one slower, one faster.
    const EtaIntervalSweep mixed = Grid({{0.3, 10, 70, 40, 100.2}, {0.5, 10, 62, 20, 101}, {0.9, 10, 59, 12, 99}});
    QCOMPARE(
        Q(EtaIntervalHeadline(mixed, SweepMetric::kTime, 0.5, 10)),
        QString("η 0.9, interval 10 saves the most: 1 % of static low's time, 12 of 300 epochs at the low level; the "
                "recorded η 0.5, interval 10 takes 1 % longer than static low, 20 at the low level"));
    QCOMPARE(
        Q(EtaIntervalHeadline(mixed, SweepMetric::kTime, 0.3, 10)),
        QString("η 0.9, interval 10 saves the most: 1 % of static low's time, 12 of 300 epochs at the low level; the "
                "recorded η 0.3, interval 10 takes as long as static low (within 0.5 %), 40 at the low level"));
    // No projection: no sentence about time.
    EtaIntervalSweep no_time = mixed;
    no_time.has_time = false;
    QCOMPARE(Q(EtaIntervalHeadline(no_time, SweepMetric::kTime, 0.5, 10)), QString());
    QCOMPARE(Q(EtaIntervalHeadline(Grid({}), SweepMetric::kFloats, 0.5, 10)), QString());
  }

  void sweepWithoutPoints() {
    QCOMPARE(Q(SweepHeadline({})), QString());
    QCOMPARE(Q(SweepHeadline(Sweep({1}, {0}))), QString());
  }
};

QTEST_GUILESS_MAIN(HeadlinesTest)
#include "headlines_test.moc"
