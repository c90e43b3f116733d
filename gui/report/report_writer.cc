#include "gui/report/report_writer.h"

#include <qcustomplot.h>

#include <QBuffer>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <algorithm>
#include <functional>
#include <sstream>

#include "analysis/results_table.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/version.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/headlines.h"
#include "gui/model/what_if.h"
#include "simulator/topology_description.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion::gui::report {

namespace {

QString Html(const QString& text) { return text.toHtmlEscaped(); }
QString Html(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

void WriteFile(const QString& path, const QByteArray& bytes) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    throw IoError(path.toStdString() + ": cannot write (disk full?)");
  }
}

QByteArray StreamBytes(const std::function<void(std::ostream&)>& write) {
  std::ostringstream out;
  write(out);
  return QByteArray::fromStdString(out.str());
}

// "—" for a metric the run did not record (kNotRecorded).
QString Percent(double fraction) {
  return Recorded(fraction) ? QString::number(fraction * 100, 'f', 2) + " %" : QString("—");
}

struct FigureEntry {
  QString stem;
  QString title;
  QString question;  // what it answers
  QString caption;
  QByteArray png;
};

class FigureWriter {
 public:
  explicit FigureWriter(const QString& dir) : dir_(dir) {
    plot_.setViewport(QRect(0, 0, style::kExportWidth, style::kExportHeight));
  }
  QCustomPlot* plot() { return &plot_; }

  // Saves what the plot shows now as stem.png, stem.pdf and stem.csv.
  // `listed`: shown in the Figures section (else by a section of its own).
  void Save(const QString& stem, const QString& title, const QString& question, const QString& caption,
            bool listed = true) {
    QString error;
    for (const char* suffix : {".png", ".pdf"}) {
      if (!SaveFigure(&plot_, dir_ + "/" + stem + suffix, &error, style::kExportWidth, style::kExportHeight)) {
        throw IoError(error.toStdString());
      }
    }
    WriteFile(dir_ + "/" + stem + ".csv", FigureCsv(&plot_).toUtf8());
    QFile png(dir_ + "/" + stem + ".png");
    if (!png.open(QIODevice::ReadOnly)) throw IoError(png.fileName().toStdString() + ": cannot read back");
    (listed ? figures_ : unlisted_).push_back({stem, title, question, caption, png.readAll()});
  }
  const std::vector<FigureEntry>& figures() const { return figures_; }
  const FigureEntry* unlisted(const QString& stem) const {
    for (const FigureEntry& f : unlisted_) {
      if (f.stem == stem) return &f;
    }
    return nullptr;
  }

 private:
  QString dir_;
  QCustomPlot plot_;
  std::vector<FigureEntry> figures_;
  std::vector<FigureEntry> unlisted_;
};

QString Css() {
  return R"(
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: #222; background: #fafafa;
       margin: 0; line-height: 1.45; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 1.7em; margin: 0.2em 0; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 2px solid #e69f00; padding-bottom: 4px; }
.sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.settings td.num { text-align: left; }
table.policies td:first-child { white-space: nowrap; }
tr.current td { background: #fff6e0; }
figure { margin: 1.6em 0; }
figure img { width: 100%; max-width: 1200px; border: 1px solid #e4e4e4; }
figcaption { margin-top: 6px; color: #333; }
figcaption .q { font-weight: bold; }
figcaption a { color: #0072b2; margin-right: 10px; }
code { background: #f2f2f2; padding: 1px 4px; border-radius: 3px; font-size: 0.9em; word-break: break-all; }
.note { background: #fff6e0; border-left: 4px solid #e69f00; padding: 6px 12px; margin: 0.6em 0; }
nav a { margin-right: 14px; color: #0072b2; }
)";
}

QString Row(const QStringList& cells, const QString& cls = QString()) {
  QString row = cls.isEmpty() ? "<tr>" : "<tr class=\"" + cls + "\">";
  for (const QString& c : cells) {
    // Cells that start with a digit or a sign read as numbers, and so does
    // "—", a number's empty cell, which lines up with the column's numbers.
    const bool number = !c.isEmpty() && (c[0].isDigit() || c[0] == '-' || c[0] == '+' || c == QString("—"));
    row += QString(number ? "<td class=\"num\">%1</td>" : "<td>%1</td>").arg(c);
  }
  return row + "</tr>\n";
}

QString Header(const QStringList& cells) {
  QString row = "<tr>";
  for (const QString& c : cells) row += "<th>" + c + "</th>";
  return row + "</tr>\n";
}

QString ProjectionTable(const WhatIfProjection& p) {
  const sim::ReplayResult& r = p.result;
  QString t = "<table>\n" + Header({"schedule", "time to train", "90 % band", "compute", "compression",
                                    "exposed communication", "Accordion against it"});
  for (const sim::ScheduleProjection* s : {&p.dense, &r.static_low, &r.static_high, &r.accordion}) {
    t += Row({Html(s->label.empty() ? s->name : s->label), style::Seconds(s->total.time_s),
              style::Seconds(s->total.time_low_s) + " – " + style::Seconds(s->total.time_high_s),
              style::Seconds(s->total.compute_s), style::Seconds(s->total.compress_s),
              style::Seconds(s->total.exposed_comm_s),
              s == &r.accordion ? QString("—") : Html(CompareTimes(r.accordion.total.time_s, s->total.time_s, ""))});
  }
  return t + "</table>\n";
}

// One figure of the report. `draw` puts it on the plot, or returns false
// when the input has nothing for it (no projection, no sweep) and the
// report leaves it out; `caption` is read after drawing.
struct ReportFigure {
  const char* name;      // file stem (name.png, .pdf, .csv) and the figure's anchor
  const char* title;     // the image's alt text
  const char* question;  // what it answers, in bold before the caption
  std::function<QString()> caption;
  std::function<bool(QCustomPlot*)> draw;
};

// The projection the figures show: SimGrid's when there is one.
const std::optional<WhatIfProjection>& BestProjection(const ReportInput& in) {
  return in.simulation ? in.simulation : in.estimate;
}

QString TimingName(sim::TimingSource timing) {
  return timing == sim::TimingSource::kSimulate ? "SimGrid replay" : "α–β estimate";
}

// The report's figures of the run's regimes and levels.
std::vector<ReportFigure> RegimeFigures(const RunData& run, const RegimeAnalysis& analysis) {
  return {
      {"regimes", "Gradient norms and critical regimes", "When is training in a critical regime?",
       [&run] {
         return "Each layer's accumulated gradient norm per epoch (log scale). Shaded: the critical regimes "
                "Accordion derives under the settings below; the strip along the bottom: the regimes the run "
                "recorded; dashed lines: LR decays; top ticks: the epochs at whose end a check ran" +
                QString(run.hessian.empty() ? "." : "; right axis: the Hessian's top eigenvalue.");
       },
       [&](QCustomPlot* plot) {
         DrawGradientNorms(plot, run, analysis, {}, false);
         return true;
       }},
      {"ratios", "Check ratios against η", "Why does a layer count as critical?",
       [] {
         return QString(
             "The relative change of each layer's norm at every check. A layer whose ratio reaches η uses the "
             "low level (little compression) until the next check.");
       },
       [&](QCustomPlot* plot) {
         DrawCheckRatios(plot, run, analysis, {});
         return true;
       }},
      {"level-map", "Level map", "Which level does each layer use in each epoch?",
       [] {
         return QString(
             "Layer × epoch: the low level (critical) in orange, the high level in blue, grey where the level "
             "makes no difference to the layer (e.g. 1-D tensors PowerSGD sends uncompressed) — the paper's "
             "Figures 18–20.");
       },
       [&](QCustomPlot* plot) {
         DrawLevelMap(plot, run, analysis);
         return true;
       }},
  };
}

// The figures of the projection onto the target cluster: `best` is
// BestProjection's, null where nothing could be projected.
std::vector<ReportFigure> ProjectionFigures(const ReportInput& in, const RunData& run,
                                            const std::optional<WhatIfProjection>& best) {
  return {
      {"projection", "Projected time to train", "How long would training take on the target cluster?",
       [&best] {
         return QString(
                    "Dense, static low, static high and Accordion on the cluster in the settings, split into "
                    "compute, compression, exposed communication and the rest (%1).")
             .arg(TimingName(best->timing));
       },
       [&best](QCustomPlot* plot) {
         if (best) DrawProjection(plot, *best);
         return best.has_value();
       }},
      {"sweep", "Bandwidth sweep", "At which bandwidths does compressing pay off?",
       [] {
         return QString(
             "Accordion's speedup over dense and over static low (and static high's over dense) as the link "
             "bandwidth changes, everything else as in the settings; the dotted line marks the bandwidth "
             "chosen.");
       },
       [&in](QCustomPlot* plot) {
         if (!in.sweep.empty()) DrawBandwidthSweep(plot, in.sweep, in.what_if.bandwidth_gbps);
         return !in.sweep.empty();
       }},
      {"epoch-breakdown", "Epoch breakdown", "Where does Accordion's time go, epoch by epoch?",
       [] {
         return QString(
             "Projected time of each epoch under Accordion, stacked by component; shaded epochs use the low "
             "level on some layers.");
       },
       [&best](QCustomPlot* plot) {
         if (best) DrawEpochBreakdown(plot, *best);
         return best.has_value();
       }},
      {"timeline", "One iteration", "What does one training step look like, measured and projected?",
       [] {
         return QString(
             "Compute phases and collectives of one iteration: as the trace measured it on rank 0, and as the "
             "projection times it on the target cluster under Accordion's schedule.");
       },
       [&run, &best](QCustomPlot* plot) {
         if (!run.measured_iteration && !best) return false;
         int epoch = run.measured_iteration ? run.measured_iteration->record.epoch : run.view().num_epochs() - 1;
         if (best) {
           epoch = std::clamp(epoch, 0, std::max(0, static_cast<int>(best->result.accordion.epochs.size()) - 1));
         }
         DrawIterationTimeline(plot, run, best ? &*best : nullptr, epoch);
         return true;
       }},
  };
}

// The figures comparing every trace of the report.
std::vector<ReportFigure> AccuracyFigures(const ReportInput& in) {
  return {
      {"accuracy-epoch", "Accuracy by epoch", "Does any schedule cost accuracy?",
       [] {
         return QString(
             "Test accuracy of every trace in the report per epoch; Accordion runs solid, static and other policies "
             "dashed.");
       },
       [&in](QCustomPlot* plot) {
         DrawAccuracyComparison(plot, in.runs, CompareAxis::kEpoch);
         return true;
       }},
      {"accuracy-floats", "Accuracy against data sent", "How much communication does the accuracy cost?",
       [] {
         return QString(
             "Test accuracy against the floats each worker had sent so far (the paper's Figure 1, right): a "
             "curve further left reaches the same accuracy sending less.");
       },
       [&in](QCustomPlot* plot) {
         DrawAccuracyComparison(plot, in.runs, CompareAxis::kFloats);
         return true;
       }},
  };
}

// The report's figures, in the order index.html shows them.
std::vector<ReportFigure> ReportFigures(const ReportInput& in) {
  const RunData& run = *in.runs.front();
  std::vector<ReportFigure> figures = RegimeFigures(run, in.analysis);
  for (ReportFigure& f : ProjectionFigures(in, run, BestProjection(in))) figures.push_back(std::move(f));
  for (ReportFigure& f : AccuracyFigures(in)) figures.push_back(std::move(f));
  return figures;
}

QString SettingsHtml(const ReportInput& in, sim::TimingSource shown) {
  const ScheduleSettings& s = in.schedule;
  const WhatIfSettings& w = in.what_if;
  const ResolvedSchedule& r = in.analysis.resolved;
  // A key-value list: values read left to right, numbers or not.
  QString t = "<table class=\"settings\">\n" + Header({"setting", "value"});
  t += Row({"scheme", Html(std::string(ToString(r.scheme))) + (s.scheme ? "" : " (the trace's)")});
  const RunInfo& run = in.runs.front()->view().run;
  t += Row({"η (threshold)", QString::number(s.eta) + (s.eta == run.eta ? " (the trace's)" : "")});
  t += Row({"check interval",
            QString::number(s.interval) + " epochs" + (s.interval == run.interval ? " (the trace's)" : "")});
  if (DescriptionOf(r.scheme).has_levels()) {
    t += Row({"low level (critical)",
              Html(LevelName(r.scheme, r.level_low)) + (s.level_low ? "" : " (the run's, or the default)")});
    t += Row(
        {"high level", Html(LevelName(r.scheme, r.level_high)) + (s.level_high ? "" : " (the run's, or the default)")});
  }
  t += Row({"workers", QString::number(w.workers)});
  if (!w.platform_file.empty()) {
    t += Row({"platform file", Html(w.platform_file)});
  } else {
    t += Row({"topology", Html(std::string(sim::ToString(w.topology)))});
    for (const sim::TopologyParameter& p : sim::DescriptionOf(w.topology).parameters) {
      if (p.label) t += Row({QString::fromUtf8(p.label), QString::number(TopologyParameterOf(w, p))});
    }
    t += Row({"bandwidth", QString::number(w.bandwidth_gbps) + " Gb/s"});
    // The latency the projection used, and where it came from.
    const double latency_us = PlatformOf(w, BasePlatformOf(*in.runs.front(), w)).latency_s * 1e6;
    t += Row({"latency", QString::fromStdString(FormatNumber(latency_us, 4)) + " µs per link" +
                             (w.latency_us                                   ? ""
                              : in.runs.front()->input.network_probe.empty() ? " (the default: the trace has no probe)"
                                                                             : " (the trace's recorded network)")});
    t += Row({"network model", w.network_model.empty()
                                   ? QString("automatic, as accordion-sim: the recorded network's where the trace "
                                             "has a probe, else %1")
                                         .arg(QString::fromStdString(sim::NetworkOptions().model()))
                                   : Html(w.network_model)});
  }
  t += Row({"all-reduce", Html(std::string(sim::ToString(w.allreduce)))});
  // What the projection's host costs stand on: the replay's note says.
  QString recorded = "unknown (host cost from the fixed part of the trace's collectives)";
  if (w.recorded_bandwidth_gbps) recorded = QString::number(*w.recorded_bandwidth_gbps) + " Gb/s";
  const std::optional<WhatIfProjection>& projection = BestProjection(in);
  if (projection && !w.recorded_bandwidth_gbps) {
    for (const std::string& note : projection->result.notes) {
      const std::string anchored = "anchored on the recorded network (";
      if (note.rfind(anchored, 0) == 0) {
        recorded =
            "the trace's network probe: " + Html(note.substr(anchored.size(), note.find("):") - anchored.size()));
      }
    }
  }
  t += Row({"trace recorded at", recorded});
  // The replay's own words for its network, as accordion-sim prints them.
  if (projection) t += Row({"replayed on", Html(projection->result.platform)});
  if (projection && !projection->result.shaper.empty()) {
    t += Row({"token-bucket shaper", Html(projection->result.shaper)});
  }
  // How every schedule's compute was priced (one estimate, or per level).
  if (projection) {
    for (const sim::BatchCompute& b : projection->result.compute) {
      t += Row({"pricing at " + QString::fromStdString(FormatNumber(b.per_worker_batch)) + " samples per worker",
                Html(b.Describe(projection->result.scheme))});
    }
  }
  t += Row({"the same projection with accordion-sim", "<code>accordion-sim replay " + Html(in.runs.front()->path) +
                                                          " " + Html(CliFlagsOf(s, w, shown)) + "</code>"});
  return t + "</table>\n";
}

std::vector<std::string> TracePaths(const ReportInput& in) {
  std::vector<std::string> paths;
  for (const auto& r : in.runs) paths.push_back(r->path);
  return paths;
}

// runs.csv: one line per trace, its summary.
QString RunsCsv(const ReportInput& in) {
  QString csv =
      "name,path,model,dataset,scheme,policy,levels,workers,epochs,epochs_planned,status,"
      "final_test_acc,floats_sent,seconds,synthetic\n";
  for (const auto& r : in.runs) {
    const RunSummary& s = r->summary;
    QStringList f = {QString::fromStdString(s.name),
                     QString::fromStdString(r->path),
                     QString::fromStdString(s.model),
                     QString::fromStdString(s.dataset),
                     QString::fromStdString(s.scheme),
                     QString::fromStdString(s.policy),
                     QString::fromStdString(s.levels),
                     QString::number(s.workers),
                     QString::number(s.epochs),
                     QString::number(s.epochs_planned),
                     QString::fromStdString(s.status),
                     Recorded(s.final_test_acc) ? QString::number(s.final_test_acc, 'g', 6) : QString(),
                     QString::number(s.floats_sent, 'g', 10),
                     QString::number(s.seconds, 'g', 8),
                     s.synthetic ? "true" : "false"};
    for (QString& v : f) {
      if (v.contains(',') || v.contains('"')) v = "\"" + v.replace("\"", "\"\"") + "\"";
    }
    csv += f.join(",") + "\n";
  }
  return csv;
}

// results.csv, schedule.csv (when there is a schedule) and runs.csv.
void WriteTables(const ReportInput& in, const std::vector<ResultsRow>& results, const QString& dir) {
  WriteFile(dir + "/results.csv", StreamBytes([&](std::ostream& o) { WriteResultsCsv(results, o); }));
  if (in.analysis.schedulable) {
    WriteFile(dir + "/schedule.csv", StreamBytes([&](std::ostream& o) {
                WriteScheduleCsv(in.runs.front()->view(), in.analysis.comparison, o);
              }));
  }
  WriteFile(dir + "/runs.csv", RunsCsv(in).toUtf8());
}

// From <!DOCTYPE> to the notes above the first section.
QString HeadHtml(const ReportInput& in) {
  const QString name = QString::fromStdString(in.runs.front()->summary.name);
  QString h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>Accordion report — " + Html(name) + "</title>\n<style>" + Css() + "</style>\n</head>\n<body>\n<main>\n";
  h += "<h1>Accordion report — " + Html(name) + "</h1>\n";
  h += "<p class=\"sub\">Written by accordion-report " + Html(std::string(kVersion)) + " on " +
       QDateTime::currentDateTimeUtc().toString("yyyy-MM-dd HH:mm 'UTC'") + " from " + QString::number(in.runs.size()) +
       " trace" + (in.runs.size() == 1 ? "" : "s") +
       ". The figures describe the first trace; the comparison figures and tables cover all.</p>\n";
  h += "<nav><a href=\"#runs\">Runs</a><a href=\"#settings\">Settings</a><a href=\"#floats\">Data sent</a>"
       "<a href=\"#projection\">Projection</a>" +
       QString(in.policies ? "<a href=\"#policies\">Policies</a>" : "") +
       "<a href=\"#figures\">Figures</a><a href=\"#results\">Results table</a></nav>\n";
  for (const auto& r : in.runs) {
    if (r->summary.synthetic) {
      h += "<p class=\"note\">" + Html(r->summary.name) + " is a SYNTHETIC trace: no training produced it.</p>\n";
    }
  }
  for (const std::string& note : in.notes) h += "<p class=\"note\">" + Html(note) + "</p>\n";
  return h;
}

QString RunsHtml(const ReportInput& in) {
  QString h = "<h2 id=\"runs\">Runs</h2>\n<table>\n" +
              Header({"name", "model", "dataset", "scheme", "policy", "levels", "workers", "epochs",
                      "final test accuracy", "floats sent / worker", "wall time"});
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const RunSummary& s = in.runs[i]->summary;
    QString epochs = QString::number(s.epochs);
    if (s.epochs_planned > 0 && s.epochs_planned != s.epochs) epochs += " of " + QString::number(s.epochs_planned);
    if (s.status != "complete") epochs += " (" + Html(s.status) + ")";
    h += Row({Html(s.name) + (i == 0 ? " <b>(current)</b>" : ""), Html(s.model), Html(s.dataset), Html(s.scheme),
              Html(s.policy), Html(s.levels), QString::number(s.workers), epochs, Percent(s.final_test_acc),
              style::Sci(s.floats_sent), style::Seconds(s.seconds)},
             i == 0 ? "current" : "");
  }
  return h + "</table>\n<p>Data: <a href=\"runs.csv\">runs.csv</a></p>\n";
}

QString FloatsHtml(const ReportInput& in) {
  const RegimeAnalysis& analysis = in.analysis;
  QString h = "<h2 id=\"floats\">Data sent: Accordion against the static schedules</h2>\n";
  if (!analysis.schedulable) return h + "<p class=\"note\">No schedule: " + Html(analysis.problem) + "</p>\n";
  const double low = analysis.low_floats();
  const ResolvedSchedule& r = analysis.resolved;
  h += "<p>Floats each worker sends over the run's " + QString::number(in.runs.front()->view().num_epochs()) +
       " epochs, re-derived from its gradient norms.</p>\n<table>\n" +
       Header({"schedule", "floats sent / worker", "against static low"});
  h += Row({"static low (" + Html(LevelName(r.scheme, r.level_low)) + ")", style::Sci(low), "1.00×"});
  h += Row({"static high (" + Html(LevelName(r.scheme, r.level_high)) + ")", style::Sci(analysis.high_floats()),
            analysis.high_floats() > 0 ? style::Times(low / analysis.high_floats()) + " less" : "—"});
  h += Row({"<b>Accordion</b>", style::Sci(analysis.accordion_floats()),
            analysis.accordion_floats() > 0 ? style::Times(low / analysis.accordion_floats()) + " less" : "—"});
  return h + "</table>\n<p>Per epoch and layer: <a href=\"schedule.csv\">schedule.csv</a></p>\n";
}

QString ProjectionHtml(const ReportInput& in) {
  QString h = "<h2 id=\"projection\">Projected time to train</h2>\n";
  if (in.estimate) h += "<h3>α–β estimate</h3>\n" + ProjectionTable(*in.estimate);
  if (in.simulation) h += "<h3>SimGrid replay</h3>\n" + ProjectionTable(*in.simulation);
  const std::optional<WhatIfProjection>& best = BestProjection(in);
  if (!best) return h + "<p class=\"note\">No projection: " + Html(in.projection_problem) + "</p>\n";
  const sim::ReplayResult& r = best->result;
  const std::string headline = ProjectionHeadline(r.accordion.total.time_s, best->dense.total.time_s,
                                                  r.static_low.total.time_s, r.static_high.total.time_s);
  if (!headline.empty()) {
    // "by the ...", not "(...)": the headline may end in "(within 0.5 %)".
    h += "<p><b>" + Html(headline) + "</b>, by the " + TimingName(best->timing) + ".</p>\n";
  }
  const std::string sweep = SweepHeadline(in.sweep);
  if (!sweep.empty()) h += "<p>" + Html(sweep) + ", by the α–β estimate.</p>\n";
  // Whether to compress at all: the best policy against dense and the casts.
  if (in.policies) {
    if (const std::string verdict = PolicyVerdict(*in.policies); !verdict.empty()) {
      h += "<p><b>Compress at all?</b> " + Html(verdict) + " (<a href=\"#policies\">Policies</a>)</p>\n";
    }
  }
  return h;
}

QString FigureHtml(const FigureEntry& f) {
  return "<figure id=\"" + f.stem + "\">\n<img alt=\"" + Html(f.title) + "\" src=\"data:image/png;base64," +
         QString::fromLatin1(f.png.toBase64()) + "\">\n<figcaption><span class=\"q\">" + Html(f.question) + "</span> " +
         Html(f.caption) + "<br><a href=\"" + f.stem + ".pdf\">PDF</a><a href=\"" + f.stem +
         ".png\">PNG</a><a href=\"" + f.stem + ".csv\">data (CSV)</a></figcaption>\n</figure>\n";
}

QString FiguresHtml(const std::vector<FigureEntry>& figures) {
  QString h = "<h2 id=\"figures\">Figures</h2>\n";
  for (const FigureEntry& f : figures) h += FigureHtml(f);
  return h;
}

// The policy comparison: the table `accordion-sim compare-policies` prints
// for the same trace and cluster, what its columns mean, its notes and the
// projected times as a figure.
QString PoliciesHtml(const ReportInput& in, const FigureEntry* figure) {
  if (!in.policies) return {};
  const PolicyTable& t = *in.policies;
  const Scheme scheme = in.analysis.resolved.scheme;
  const bool compressing = InSet(DescriptionOf(scheme), SchemeSet::kCompressing);
  const std::optional<Policy> baseline_policy = BaselinePolicyFor(scheme);
  const PolicyDescription* baseline = baseline_policy ? &DescriptionOf(*baseline_policy) : nullptr;
  QString h =
      "<h2 id=\"policies\">Policies: Accordion against " + QString(baseline ? baseline->title : "none") + "</h2>\n";
  if (!t.comparable) return h + "<p class=\"note\">No comparison: " + Html(t.problem) + "</p>\n";
  h += "<p>Each policy's schedule for " + Html(in.runs.front()->summary.name) +
       ", re-derived from the signals the trace recorded under the settings above: static low and static high, "
       "Accordion" +
       (baseline ? ", and " + QString(baseline->title) + " (" + baseline->explanation +
                       (baseline->reads_gradient_moments
                            ? ", by the trace's MSDR factor " + QString::number(t.comparison.settings.msdr_factor())
                            : QString()) +
                       ")"
                 : QString()) +
       ". ";
  if (t.replay) {
    h += "Times: " + TimingName(t.timing) + " on " + Html(t.replay->platform) + " (" +
         QString::number(t.replay->workers) + " workers).";
  }
  const std::vector<std::string> headers = PolicyTableHeaders(t);
  const std::vector<std::string> help = PolicyColumnHelp(t);
  const std::vector<std::vector<std::string>> cells = PolicyTableCells(t);
  const std::vector<bool> empty = EmptyPolicyColumns(cells);
  auto shown = [&empty](size_t c) { return c >= empty.size() || !empty[c]; };
  if (!empty.empty() && std::count(empty.begin(), empty.end(), true) > 0) {
    h += compressing ? " Columns no policy has a value in are left out (the notes below say why)."
                     : " The error proxy's columns are left out: the " + QString(DescriptionOf(scheme).title) +
                           " scheme has no compression error.";
  }
  h += "</p>\n";
  if (const std::string verdict = PolicyVerdict(t); !verdict.empty()) {
    h += "<p class=\"verdict\"><b>" + Html(verdict) + "</b></p>\n";
  }
  if (!t.break_even_problem.empty())
    h += "<p class=\"note\">No break-even rate: " + Html(t.break_even_problem) + "</p>\n";
  h += "<table class=\"policies\">\n";
  QStringList header_cells;
  for (size_t c = 0; c < headers.size(); ++c) {
    if (shown(c)) header_cells << Html(headers[c]);
  }
  h += Header(header_cells);
  const std::vector<const PolicyRow*> rows = t.AllRows();
  for (size_t i = 0; i < cells.size(); ++i) {
    const bool accordion = rows[i]->name == "accordion";
    QStringList row;
    for (size_t c = 0; c < cells[i].size(); ++c) {
      if (!shown(c)) continue;
      const QString cell = Html(cells[i][c]);
      row << (accordion && c == 0 ? "<b>" + cell + "</b>" : cell);
    }
    h += Row(row);
  }
  h += "</table>\n<ul class=\"sub\">\n";
  for (size_t c = 1; c < help.size(); ++c) {
    if (shown(c)) h += "<li><b>" + Html(headers[c]) + "</b>: " + Html(help[c]) + ".</li>\n";
  }
  h += "</ul>\n";
  // What the table leaves out stands out; the replay's own notes (its
  // warnings are at the top of the page too) follow in plain text.
  for (const std::string& note : t.comparison.notes) h += "<p class=\"note\">" + Html(note) + "</p>\n";
  if (!t.projection_problem.empty()) {
    h += "<p class=\"note\">Not projected: " + Html(t.projection_problem) + "</p>\n";
  }
  if (t.replay && !t.replay->notes.empty()) {
    h += "<p>The replay's notes:</p>\n<ul class=\"sub\">\n";
    for (const std::string& note : t.replay->notes) {
      const bool warning = note.rfind("warning: ", 0) == 0;
      h += "<li>" + (warning ? "<b>Warning:</b> " + Html(note.substr(9)) : Html(note)) + "</li>\n";
    }
    h += "</ul>\n";
  }
  h += "<p>Data: <a href=\"policies.csv\">policies.csv</a>. The same table with accordion-sim: <code>accordion-sim "
       "compare-policies " +
       Html(in.runs.front()->path) + " " + Html(CliFlagsOf(in.schedule, in.what_if, t.timing)) + "</code></p>\n";
  if (figure) h += FigureHtml(*figure);
  return h;
}

// The results table and, when given, the command line; then the page's end.
QString ResultsHtml(const ReportInput& in, const std::vector<ResultsRow>& results) {
  QString h =
      "<h2 id=\"results\">Results table</h2>\n<p>The traces grouped as in the paper's Tables 1–6: runs are seeds "
      "of one row when model, dataset, workers, epochs, global batch, LR schedule, scheme, policy and levels "
      "agree; the mean, ± its 95 % confidence interval from 3 runs on; ratios against the scheme's setting that "
      "sends the most, and against the baseline of the same training: dense where a dense run is among the "
      "traces, or the setting of the run given to <code>--baseline</code>.</p>\n";
  const QString vs = "vs " + Html(BaselineHeader(results));
  h += "<table>\n" + Header({"model", "dataset", "workers", "setting", "runs", "test accuracy", "floats sent / worker",
                             "floats ratio", vs, "time", "time ratio", vs});
  // n 0: no run of the setting recorded it.
  auto ci = [](const MeanCi& m, const std::function<QString(double)>& fmt) {
    return m.n == 0 ? QString("—") : m.has_ci() ? fmt(m.mean) + " ± " + fmt(m.half_width) : fmt(m.mean);
  };
  auto vs_dense = [](const std::optional<double>& ratio) { return ratio ? style::Times(*ratio) : QString("—"); };
  for (const ResultsRow& r : results) {
    QString runs = QString::number(r.traces.size());
    if (r.incomplete > 0) runs += " (" + QString::number(r.incomplete) + " incomplete)";
    h += Row({Html(r.model), Html(r.dataset), QString::number(r.workers),
              Html(r.setting) + (r.is_baseline ? " (baseline)" : ""), runs,
              ci(r.accuracy, [](double v) { return QString::number(v * 100, 'f', 2) + " %"; }),
              ci(r.floats, [](double v) { return style::Sci(v); }), vs_dense(r.floats_ratio),
              vs_dense(r.floats_vs_baseline), ci(r.seconds, [](double v) { return style::Seconds(v); }),
              vs_dense(r.seconds_ratio), vs_dense(r.seconds_vs_baseline)});
  }
  h += "</table>\n<p>Data: <a href=\"results.csv\">results.csv</a></p>\n";
  if (!in.command_line.empty()) {
    h += "<h2>Command</h2>\n<p><code>" + Html(in.command_line) + "</code></p>\n";
  }
  return h;
}

}  // namespace

void WriteReport(const ReportInput& in, const QString& dir) {
  if (in.runs.empty()) throw InputError("no traces");
  FigureWriter figures(dir);
  for (const ReportFigure& f : ReportFigures(in)) {
    if (f.draw(figures.plot())) figures.Save(f.name, f.title, f.question, f.caption());
  }
  if (in.policies && in.policies->comparable) {
    DrawPolicyComparison(figures.plot(), *in.policies);
    figures.Save("policy-times", "Policies compared",
                 in.policies->projected() ? "How long would each policy take to train?"
                                          : "How many floats does each policy send?",
                 in.policies->projected()
                     ? "Projected time to train under each policy, stacked by component, with the speedup over "
                       "static low."
                     : "Floats one worker sends under each policy, and how many times fewer than static low.",
                 false);
    WriteFile(dir + "/policies.csv", StreamBytes([&](std::ostream& o) { WritePolicyCsv(in.policies->comparison, o); }));
  }
  const std::vector<ResultsRow> results =
      BuildResultsTable(TracePaths(in), ResultsTableOptions().baseline(in.baseline));
  WriteTables(in, results, dir);
  const std::optional<WhatIfProjection>& best = BestProjection(in);
  const QString html = HeadHtml(in) + RunsHtml(in) + "<h2 id=\"settings\">Settings</h2>\n" +
                       SettingsHtml(in, best ? best->timing : sim::TimingSource::kAnalytic) + FloatsHtml(in) +
                       ProjectionHtml(in) + PoliciesHtml(in, figures.unlisted("policy-times")) +
                       FiguresHtml(figures.figures()) + ResultsHtml(in, results) + "</main>\n</body>\n</html>\n";
  WriteFile(dir + "/index.html", html.toUtf8());
}

}  // namespace accordion::gui::report
