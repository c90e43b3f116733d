// The sentence builder behind the what-if tab's and the report's headlines:
// exact wording where Accordion is faster, as fast, slower, and mixed
// across a bandwidth sweep.
#include "gui/model/headlines.h"

#include <QTest>
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

  void sweepWithoutPoints() {
    QCOMPARE(Q(SweepHeadline({})), QString());
    QCOMPARE(Q(SweepHeadline(Sweep({1}, {0}))), QString());
  }
};

QTEST_GUILESS_MAIN(HeadlinesTest)
#include "headlines_test.moc"
