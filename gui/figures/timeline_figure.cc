// One iteration on tracks: measured (from the trace) above simulated (the
// projection's Accordion schedule), compute phases and collectives.
#include <qcustomplot.h>

#include <algorithm>
#include <map>

#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"

namespace accordion::gui {

namespace {

constexpr double kBarHalf = 0.32;

struct Phase {
  const char* name;
  QColor color;
};

const Phase kForward{"forward", QColor(0x56, 0xB4, 0xE9)};
const Phase kBackward{"backward", QColor(0x00, 0x72, 0xB2)};
const Phase kWait{"waiting on communication", QColor(0xD5, 0x5E, 0x00)};
const Phase kCompress{"compression", QColor(0x00, 0x9E, 0x73)};
const Phase kOther{"other", QColor(0xAA, 0xAA, 0xAA)};

class Tracks {
 public:
  explicit Tracks(QCustomPlot* plot) : plot_(plot) {}

  // A span on `track` from `start_ms` lasting `duration_ms`.
  void Span(int track, const QString& track_name, const QString& name, const QColor& color, double start_ms,
            double duration_ms) {
    if (!(duration_ms > 1e-6)) return;
    auto* rect = new QCPItemRect(plot_);
    for (QCPItemPosition* p : {rect->topLeft, rect->bottomRight}) {
      p->setAxes(plot_->xAxis, plot_->yAxis);
      p->setType(QCPItemPosition::ptPlotCoords);
    }
    rect->topLeft->setCoords(start_ms, track - kBarHalf);
    rect->bottomRight->setCoords(start_ms + duration_ms, track + kBarHalf);
    rect->setBrush(QBrush(color));
    rect->setPen(QPen(QColor(255, 255, 255), 1));
    rect->setProperty("accordion_span_track", track_name);
    rect->setProperty("accordion_span_name", name);
    rect->setProperty("accordion_span_start_ms", start_ms);
    rect->setProperty("accordion_span_end_ms", start_ms + duration_ms);
    end_ms_ = std::max(end_ms_, start_ms + duration_ms);
  }

  void Instant(int track, double at_ms) {
    auto* line = new QCPItemLine(plot_);
    for (QCPItemPosition* p : {line->start, line->end}) {
      p->setAxes(plot_->xAxis, plot_->yAxis);
      p->setType(QCPItemPosition::ptPlotCoords);
    }
    line->start->setCoords(at_ms, track - kBarHalf - 0.12);
    line->end->setCoords(at_ms, track - kBarHalf + 0.02);
    line->setPen(QPen(QColor(0x22, 0x22, 0x22), 1.2));
    end_ms_ = std::max(end_ms_, at_ms);
  }

  // Back-to-back phases from 0.
  void Phases(int track, const QString& track_name, double forward, double backward, double wait, double compress,
              double other) {
    double t = 0;
    for (const auto& [phase, d] : {std::pair<Phase, double>{kForward, forward},
                                   {kBackward, backward},
                                   {kWait, wait},
                                   {kCompress, compress},
                                   {kOther, other}}) {
      Span(track, track_name, phase.name, phase.color, t, d);
      used_phases_[phase.name] = phase.color;
      t += std::max(0.0, d);
    }
  }

  QColor TagColor(const std::string& tag) {
    static const std::vector<QColor> colors = {QColor(0xCC, 0x79, 0xA7), QColor(0xE6, 0x9F, 0x00),
                                               QColor(0x8C, 0x6D, 0x00), QColor(0x55, 0x55, 0x55),
                                               QColor(0x00, 0x9E, 0x73)};
    auto it = tags_.find(tag);
    if (it != tags_.end()) return it->second;
    const QColor c = colors[tags_.size() % colors.size()];
    tags_.emplace(tag, c);
    return c;
  }

  double end_ms() const { return end_ms_; }
  const std::map<std::string, QColor>& tags() const { return tags_; }

  void Legend(bool instants) {
    using namespace style;
    for (const Phase& p : {kForward, kBackward, kWait, kCompress, kOther}) {
      if (used_phases_.count(p.name)) AddLegendSwatch(plot_, p.name, p.color);
    }
    for (const auto& [tag, color] : tags_) AddLegendSwatch(plot_, "collective: " + QString::fromStdString(tag), color);
    if (instants) AddLegendLine(plot_, "gradient / bucket ready", QColor(0x22, 0x22, 0x22), Qt::SolidLine, 1.2);
  }

 private:
  QCustomPlot* plot_;
  double end_ms_ = 0;
  std::map<std::string, QColor> tags_;
  std::map<std::string, QColor> used_phases_;
};

}  // namespace

void DrawIterationTimeline(QCustomPlot* plot, const RunData& run, const WhatIfProjection* projection, int epoch) {
  using namespace style;
  const sim::MeasuredIteration* measured = run.measured_iteration ? &*run.measured_iteration : nullptr;
  const sim::ReplayResult* r = projection ? &projection->result : nullptr;
  const bool simulated = r != nullptr && epoch >= 0 && epoch < static_cast<int>(r->accordion.epochs.size()) &&
                         r->accordion.epochs[static_cast<size_t>(epoch)].pattern >= 0 &&
                         r->accordion.epochs[static_cast<size_t>(epoch)].pattern <
                             static_cast<int>(std::min(r->patterns.size(), r->timings.size())) &&
                         r->profile.per_worker_batch > 0 && r->workers > 0;
  QStringList parts;
  if (measured) {
    parts << QString("measured: %1, rank 0, epoch %2 iteration %3")
                 .arg(QString::fromStdString(run.summary.name))
                 .arg(measured->record.epoch)
                 .arg(measured->record.iteration);
  }
  if (simulated) {
    parts << QString("simulated (%1): epoch %2, %3 workers on %4")
                 .arg(projection->timing == sim::TimingSource::kSimulate ? "SimGrid" : "α–β")
                 .arg(epoch)
                 .arg(r->workers)
                 .arg(QString::fromStdString(r->platform));
  }
  ResetPlot(plot, "One training iteration, phase by phase", parts.join("\n"));
  StyleAxis(plot->xAxis, "time in the iteration (ms)");
  StyleAxis(plot->yAxis, "");
  plot->yAxis->grid()->setVisible(false);
  plot->yAxis->setRangeReversed(true);

  Tracks tracks(plot);
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);
  int track = 0;
  bool instants = false;
  if (measured) {
    const IterationRecord& it = measured->record;
    const double other = std::max(0.0, it.total_s - it.forward_s - it.backward_s - it.compress_s - it.comm_s);
    names->addTick(track, "measured\ncompute");
    tracks.Phases(track, "measured compute", it.forward_s * 1e3, it.backward_s * 1e3, it.comm_s * 1e3,
                  it.compress_s * 1e3, other * 1e3);
    for (const GradReadyRecord& g : measured->grad_ready) {
      tracks.Instant(track, (it.forward_s + g.offset_s) * 1e3);
      instants = true;
    }
    ++track;
    names->addTick(track, "measured\ncollectives");
    for (const CollectiveRecord& c : measured->collectives) {
      tracks.Span(track, "measured collectives",
                  QString("%1 bucket %2").arg(QString::fromStdString(c.tag)).arg(c.bucket), tracks.TagColor(c.tag),
                  c.start_s * 1e3, c.duration_s * 1e3);
    }
    ++track;
  }
  if (simulated) {
    const sim::EpochProjection& e = r->accordion.epochs[static_cast<size_t>(epoch)];
    const double forward = e.step_forward_s;
    const double backward = e.step_backward_s;
    const double n = std::max<double>(1, static_cast<double>(e.steps));
    names->addTick(track, "simulated\ncompute");
    tracks.Phases(track, "simulated compute", forward * 1e3, backward * 1e3, e.exposed_comm_s / n * 1e3,
                  e.compress_s / n * 1e3, e.other_s / n * 1e3);
    ++track;
    names->addTick(track, "simulated\ncollectives");
    const sim::IterationPattern& pattern = r->patterns[static_cast<size_t>(e.pattern)];
    const sim::IterationTiming& timing = r->timings[static_cast<size_t>(e.pattern)];
    int last_bucket = -1;
    for (size_t i = 0; i < pattern.calls.size() && i < timing.spans.size(); ++i) {
      const sim::CollectiveCall& c = pattern.calls[i];
      if (c.bucket != last_bucket) {
        tracks.Instant(track, (forward + c.ready_s) * 1e3);
        instants = true;
        last_bucket = c.bucket;
      }
      tracks.Span(track, "simulated collectives",
                  QString("%1 bucket %2").arg(QString::fromStdString(c.tag)).arg(c.bucket), tracks.TagColor(c.tag),
                  (forward + timing.spans[i].start_s) * 1e3, (timing.spans[i].end_s - timing.spans[i].start_s) * 1e3);
    }
    ++track;
  }
  plot->yAxis->setTicker(names);
  plot->yAxis->setSubTicks(false);
  plot->yAxis->setTickLength(0, 0);
  plot->yAxis->setRange(-0.7, std::max(1, track) - 0.3);
  plot->xAxis->setRange(0, tracks.end_ms() > 0 ? tracks.end_ms() * 1.03 : 1);
  if (track == 0) {
    AddMessage(plot, run.replayable ? "No measured iteration in this trace and no projection yet"
                                    : "No measured iteration in this trace, and it cannot be replayed:\n" +
                                          QString::fromStdString(run.replay_problem));
  }
  tracks.Legend(instants);
  PlaceLegendTop(plot, 5);
}

}  // namespace accordion::gui
