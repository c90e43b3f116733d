// accordion-report: the explorer's figures and tables for one or more
// traces, written without a display into a directory with an index.html.
//
//   accordion-report run.trace other.trace --out report/ [--overwrite]
//       [--eta X --interval N --scheme S --low L --high H]
//       [--workers N --bandwidth-gbps B --latency-us U --topology T | --platform FILE]
//       [--allreduce A --network-model M --recorded-bandwidth-gbps R] [--timing simulate]
//
// The report is written into a hidden sibling directory and renamed into
// place at the end, so an interrupted run never leaves a partial report
// that looks complete. An existing non-empty --out is replaced only with
// --overwrite, only when it holds the marker file of an earlier report, and
// only when it holds nothing that report did not write: the marker lists
// every file of its report, and a file of the user's (a note put beside the
// figures) keeps the directory from being replaced. A --out that is a link
// to a directory is replaced where it points, the link kept.
#include <QApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "analysis/cli/shared_flags.h"
#include "common/cli.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/output_file.h"
#include "common/version.h"
#include "gui/model/explorer_settings.h"
#include "gui/model/policy_table.h"
#include "gui/model/regime_analysis.h"
#include "gui/model/run_data.h"
#include "gui/model/what_if.h"
#include "gui/report/report_writer.h"
#include "simulator/child_process.h"
#include "simulator/cli/cluster_flags.h"
#include "simulator/topology_description.h"
#include "traces/scheme_description.h"
#include "traces/trace_validator.h"

namespace accordion::gui::report {
namespace {

constexpr const char* kTool = "accordion-report";

struct Args {
  std::vector<std::string> traces;
  std::string out;
  bool overwrite = false;
  std::optional<double> eta;  // default: the first run's own
  std::optional<int> interval;
  std::string scheme;
  std::optional<double> low, high;
  int workers = 0;
  std::optional<double> bandwidth_gbps, latency_us, recorded_bandwidth_gbps;
  std::string topology, platform, allreduce = sim::ToString(WhatIfSettings().allreduce);
  std::optional<std::string> network_model;
  cli::TopologyParameterFlags topology_parameters;  // those the GUI has controls for
  // analytic: the α–β estimate only; simulate: a SimGrid replay beside it.
  std::string timing = sim::ToString(WhatIfProjection().timing);
  std::string baseline;  // one of the traces; empty: dense
  bool simulate() const { return timing == sim::ToString(sim::TimingSource::kSimulate); }
};

QString Abs(const std::string& path) {
  return QDir::cleanPath(QFileInfo(QString::fromStdString(path)).absoluteFilePath());
}

// The same file or directory: by canonical path where both exist, else by
// absolute path.
bool SamePath(const QString& a, const QString& b) {
  const QString ca = QFileInfo(a).canonicalFilePath();
  const QString cb = QFileInfo(b).canonicalFilePath();
  if (!ca.isEmpty() && !cb.isEmpty()) return ca == cb;
  return QDir::cleanPath(a) == QDir::cleanPath(b);
}

bool Inside(const QString& path, const QString& dir) {
  QString p = QFileInfo(path).canonicalFilePath();
  QString d = QFileInfo(dir).canonicalFilePath();
  if (p.isEmpty()) p = QDir::cleanPath(path);
  if (d.isEmpty()) d = QDir::cleanPath(dir);
  return p.startsWith(d + "/");
}

// Checks --out against the inputs and what is there now; returns whether a
// directory will have to be replaced.
// Every file and directory under `dir`, relative to it, sorted; symbolic
// links are listed, never followed.
QStringList Entries(const QString& dir) {
  QStringList all;
  QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                  QDirIterator::Subdirectories);
  while (it.hasNext()) all << QDir(dir).relativeFilePath(it.next());
  all.sort();
  return all;
}

// The marker's text: who wrote the report, then each of its entries.
QByteArray MarkerText(const QString& report_dir) {
  QByteArray text = QByteArray("accordion-report ") + kVersion + "\n";
  for (const QString& e : Entries(report_dir)) text += e.toUtf8() + "\n";
  return text + QByteArray(kMarkerFile) + "\n";
}

// The first entry of the earlier report in `out` that it did not write, or
// why its marker cannot say; empty when every entry is the report's own.
QString ForeignEntry(const QString& out) {
  QFile marker(out + "/" + kMarkerFile);
  if (!marker.open(QIODevice::ReadOnly)) return QString("its ") + kMarkerFile + " cannot be read";
  QStringList listed = QString::fromUtf8(marker.readAll()).split('\n', Qt::SkipEmptyParts);
  if (listed.size() < 2) {
    return QString("its ") + kMarkerFile + " does not list the report's files (an older accordion-report wrote it)";
  }
  listed.removeFirst();
  for (const QString& e : Entries(out)) {
    if (!listed.contains(e)) return e;
  }
  return {};
}

bool CheckOut(const Args& a, const QString& out) {
  for (const std::string& t : a.traces) {
    if (SamePath(Abs(t), out)) {
      throw InputError("--out " + a.out + " is one of the input traces; choose a directory for the report");
    }
  }
  // A live run's --checkpoint-dir is that run's alone, as for every tool's
  // output (common/output_file.h): the report went into it, or replaced it.
  for (const QString& dir : {out, QFileInfo(out).absolutePath()}) {
    if (DirectoryInUse(dir.toStdString())) {
      throw InputError("--out " + a.out + ": " + dir.toStdString() +
                       " is in use by a running accordion-train; choose another directory");
    }
  }
  const QFileInfo info(out);
  if (!info.exists()) return false;
  if (!info.isDir()) throw InputError("--out " + a.out + " exists and is not a directory");
  const QDir dir(out);
  const bool empty = dir.entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot).isEmpty();
  if (empty) return true;
  if (!a.overwrite) {
    throw InputError("--out " + a.out + " exists and is not empty (--overwrite replaces an earlier report)");
  }
  if (!QFileInfo(dir.filePath(kMarkerFile)).isFile()) {
    throw InputError("--out " + a.out + " was not written by accordion-report (no " + kMarkerFile +
                     " in it); refusing to replace it");
  }
  const QString foreign = ForeignEntry(out);
  if (!foreign.isEmpty()) {
    throw InputError("--out " + a.out + " holds more than an earlier report (" + foreign.toStdString() +
                     "); --overwrite replaces only what accordion-report wrote: move it out or choose another --out");
  }
  for (const std::string& t : a.traces) {
    if (Inside(Abs(t), out)) {
      throw InputError("input trace " + t + " is inside --out " + a.out + ", which --overwrite would delete");
    }
  }
  return true;
}

// eta and interval default to the run's own, as the app opens a run.
ScheduleSettings ScheduleOf(const Args& a, const RunData& current) {
  ScheduleSettings s;
  if (!a.scheme.empty()) s.scheme = ParseScheme(a.scheme);
  s.eta = a.eta.value_or(current.view().run.eta);
  s.interval = a.interval.value_or(current.view().run.interval);
  s.level_low = a.low;
  s.level_high = a.high;
  return s;
}

WhatIfSettings WhatIfOf(const Args& a, const RunData& current) {
  WhatIfSettings w;
  w.workers = a.workers > 0 ? a.workers : WhatIfSettings().workers;
  (void)current;
  if (!a.platform.empty()) {
    if (!a.topology.empty()) throw InputError("give --platform or --topology, not both");
    if (a.bandwidth_gbps || a.latency_us) {
      throw InputError("a platform file has its own links: drop --bandwidth-gbps and --latency-us");
    }
    if (!QFileInfo(QString::fromStdString(a.platform)).isFile()) {
      throw InputError("--platform " + a.platform + ": no such file");
    }
    w.platform_file = a.platform;
  } else if (!a.topology.empty()) {
    const std::optional<sim::Topology> t = sim::ParseTopology(a.topology);
    if (!t) throw InputError("unknown topology '" + a.topology + "' (" + sim::TopologyNames(", ") + ")");
    w.topology = *t;
  }
  for (const auto& [key, value] : a.topology_parameters.Given()) w.topology_parameters[key] = value;
  if (a.bandwidth_gbps) w.bandwidth_gbps = *a.bandwidth_gbps;
  if (a.latency_us) w.latency_us = *a.latency_us;
  if (a.network_model) w.network_model = *a.network_model;
  w.allreduce = *sim::ParseAllReduceAlgorithm(a.allreduce);
  w.recorded_bandwidth_gbps = a.recorded_bandwidth_gbps;
  return w;
}

// The hidden sibling a report of `name` is staged in: ".name.partial-".
QString StagingPrefix(const QString& name) { return "." + name + ".partial-"; }

// Staging directories of `name` in `parent` that an earlier report left
// when it was killed (SIGKILL, a power cut: nothing could remove them). The
// caller holds the claim on the output, so none of them is being written.
// An earlier report moved aside (".name.old-") is left: it may be the only
// copy of the user's last report.
void RemoveStaleStaging(const QString& parent, const QString& name) {
  const QStringList stale = QDir(parent).entryList({StagingPrefix(name) + "*"}, QDir::Dirs | QDir::Hidden);
  for (const QString& dir : stale) QDir(parent + "/" + dir).removeRecursively();
}

std::string CommandLine(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.find_first_of(" '\"") != std::string::npos) arg = "'" + arg + "'";
    line += (i ? " " : "") + arg;
  }
  return line;
}

// Every trace read before anything is written.
std::vector<std::shared_ptr<const RunData>> ReadRuns(const std::vector<std::string>& traces) {
  std::vector<std::shared_ptr<const RunData>> runs;
  for (const std::string& t : traces) {
    try {
      ValidateTrace(t);  // the checks of accordion-analyze validate, before any figure reads it
      runs.push_back(std::make_shared<const RunData>(LoadRunData(t)));
    } catch (const InputError& e) {
      const std::string what = e.what();
      throw InputError(what.find(t) == std::string::npos ? t + ": " + what : what);
    }
  }
  return runs;
}

// The estimate, the SimGrid replay when asked, and the bandwidth sweep of
// the first run, or the note saying why it cannot be replayed.
void Project(const Args& a, const RunData& current, ReportInput& in) {
  if (!current.replayable) {
    in.projection_problem = current.summary.name + " cannot be replayed: " + current.replay_problem;
    in.notes.push_back(in.projection_problem);
    return;
  }
  in.estimate = ProjectWhatIf(current, in.schedule, in.what_if, sim::TimingSource::kAnalytic);
  if (a.simulate()) in.simulation = ProjectWhatIf(current, in.schedule, in.what_if, sim::TimingSource::kSimulate);
  // The replay's warnings (a recorded network in doubt) are the report's too.
  for (const std::string& note : in.estimate->result.notes) {
    if (note.rfind("warning: ", 0) == 0) in.notes.push_back("Warning: " + note.substr(9));
  }
  if (!in.what_if.platform_file.empty()) {
    in.notes.push_back("No bandwidth sweep: the platform file fixes its links.");
    return;
  }
  std::vector<double> bandwidths = LogSpaced(0.1, 400, 25);
  const double bw = in.what_if.bandwidth_gbps;
  if (bw < bandwidths.front() || bw > bandwidths.back()) {
    bandwidths = LogSpaced(std::min(0.1, bw / 4), std::max(400.0, bw * 4), 25);
  }
  in.sweep = SweepBandwidth(current, in.schedule, in.what_if, bandwidths);
}

ReportInput BuildReportInput(const Args& a, const std::vector<std::shared_ptr<const RunData>>& runs,
                             const std::string& command_line) {
  const RunData& current = *runs.front();
  ReportInput in;
  in.runs = runs;
  in.schedule = ScheduleOf(a, current);
  in.what_if = WhatIfOf(a, current);
  in.command_line = command_line;
  if (!a.baseline.empty()) {
    for (const auto& run : runs) {
      if (SamePath(QString::fromStdString(run->path), QString::fromStdString(a.baseline))) in.baseline = run->path;
    }
    if (in.baseline.empty()) throw InputError("--baseline " + a.baseline + " is not one of the traces reported on");
  }
  in.analysis = AnalyseRegimes(current, in.schedule);
  const bool asked = !a.scheme.empty() || a.low || a.high;
  if (!in.analysis.schedulable && asked) throw InputError(in.analysis.problem);
  if (!in.analysis.schedulable)
    in.notes.push_back("No Accordion schedule for " + current.summary.name + ": " + in.analysis.problem);
  Project(a, current, in);
  // Every policy against Accordion, on the cluster and by the timing of the
  // projection above (ComparePoliciesOf builds the replay options as
  // ProjectWhatIf does); for a scheme with levels only.
  if (DescriptionOf(in.analysis.resolved.scheme).has_levels()) {
    // With the accuracy each setting's runs among the report's reached.
    in.policies = WithRecordedAccuracy(
        ComparePoliciesOf(current, in.schedule, in.what_if,
                          a.simulate() ? sim::TimingSource::kSimulate : sim::TimingSource::kAnalytic),
        current, in.runs);
  }
  return in;
}

// The report written into `staging` with its marker, readable as any
// directory the user creates.
void WriteStaged(const ReportInput& in, const QString& staging) {
  WriteReport(in, staging);
  const QByteArray text = MarkerText(staging);
  QFile marker(staging + "/" + kMarkerFile);
  if (!marker.open(QIODevice::WriteOnly) || marker.write(text) != text.size() || !marker.flush()) {
    throw IoError("cannot write the report's marker file (disk full?)");
  }
  // QTemporaryDir makes it private (0700).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(QFile::encodeName(staging).constData(), 0777 & ~mask);
}

// Moves the earlier report in `out` aside (checked again right before: only
// an earlier report goes) and returns where it went; empty when there was
// none to keep.
QString MoveEarlierReportAside(const Args& a, const QString& out, const QFileInfo& out_info) {
  if (QDir(out).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot)) {
    if (!QDir().rmdir(out)) throw InputError("cannot replace the empty directory " + a.out);
    return {};
  }
  if (!QFileInfo(out + "/" + kMarkerFile).isFile() || !ForeignEntry(out).isEmpty()) {
    throw InputError("--out " + a.out + " changed while the report was written; not replaced");
  }
  QTemporaryDir slot(out_info.absolutePath() + "/." + out_info.fileName() + ".old-XXXXXX");
  if (!slot.isValid()) throw InputError("cannot make room to replace " + a.out);
  const QString old = slot.path();
  slot.remove();
  if (!QDir().rename(out, old)) throw InputError("cannot move the earlier report " + a.out + " aside");
  return old;
}

int Run(const Args& a, const std::string& command_line) {
  if (a.out.empty()) throw InputError("--out is empty");
  // A link to a directory: the report goes where it points, the link stays.
  const QFileInfo link(Abs(a.out));
  const QString out = link.isSymLink() && link.isDir() ? link.canonicalFilePath() : Abs(a.out);
  const bool replace = CheckOut(a, out);
  // Claimed before anything is read or computed: a second report into the
  // same --out is refused at once, not mixed with this one.
  const QFileInfo out_info(out);
  const QString parent = out_info.absolutePath();
  if (!QDir().mkpath(parent)) throw InputError("cannot create " + parent.toStdString());
  const std::string out_path = QFile::encodeName(out).toStdString();
  ClaimOutput(out_path, "--out " + a.out);
  RemoveStaleStaging(parent, out_info.fileName());

  const ReportInput in = BuildReportInput(a, ReadRuns(a.traces), command_line);

  // Written beside --out, renamed into place when complete; a signal or a
  // failure on the way removes it (StageOutputDirectory).
  QTemporaryDir staging(parent + "/" + StagingPrefix(out_info.fileName()) + "XXXXXX");
  if (!staging.isValid()) throw InputError("cannot create a directory in " + parent.toStdString());
  StageOutputDirectory(out_path, QFile::encodeName(staging.path()).toStdString());
  WriteStaged(in, staging.path());

  const QString old = replace ? MoveEarlierReportAside(a, out, out_info) : QString();
  if (!QDir().rename(staging.path(), out)) {
    if (!old.isEmpty()) QDir().rename(old, out);
    throw InputError("cannot move the report into " + a.out);
  }
  staging.setAutoRemove(false);
  ReleaseOutput(out_path);
  if (!old.isEmpty()) QDir(old).removeRecursively();
  std::cout << QDir(out).filePath("index.html").toStdString() << std::endl;
  return kExitOk;
}

// The flags, each shared concept through the helper accordion-sim uses
// (cluster_flags.h, shared_flags.h), with the explorer's defaults.
void AddFlags(CLI::App& app, Args& a) {
  app.add_option("traces", a.traces, "Trace files; the first is the run the figures describe")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--out", a.out, "Directory to write the report into")->required();
  cli::AddBaselineFlag(&app, &a.baseline);
  cli::AddOverwriteFlag(&app, &a.overwrite);
  cli::AddEtaFlag(&app, &a.eta, "the first trace's run.eta");
  cli::AddIntervalFlag(&app, &a.interval, "the first trace's run.interval");
  cli::AddSchemeFlag(&app, &a.scheme, SchemeSet::kAll);
  cli::AddLevelFlags(&app, &a.low, &a.high);
  const WhatIfSettings what_if;
  cli::AddWorkersFlag(&app, &a.workers, std::to_string(what_if.workers));
  cli::AddBandwidthFlag(&app, &a.bandwidth_gbps, HelpNumber(what_if.bandwidth_gbps))->check(AboveZero());
  cli::AddLatencyFlag(&app, &a.latency_us, cli::OverTrace(true, HelpNumber(sim::PlatformSpec().latency_s * 1e6)))
      ->check(CLI::NonNegativeNumber);
  cli::AddTopologyFlag(&app, &a.topology, sim::ToString(what_if.topology))
      ->check(CLI::IsMember(sim::TopologyNameList()));
  a.topology_parameters.Add(&app, true);
  cli::AddPlatformFileFlag(&app, &a.platform);
  cli::AddAllReduceFlag(&app, &a.allreduce);
  cli::AddNetworkModelFlag(&app, &a.network_model)->check(CLI::IsMember({"LV08", "CM02"}));
  cli::AddRecordedBandwidthFlag(&app, &a.recorded_bandwidth_gbps);
  // The report always shows the α–β estimate; simulate adds SimGrid's.
  CLI::Option* timing = cli::AddTimingFlag(
      &app, &a.timing, {sim::ToString(sim::TimingSource::kAnalytic), sim::ToString(sim::TimingSource::kSimulate)},
      kTool);
  cli::AddDeprecatedAlias(&app, kTool, "--simulate", timing, sim::ToString(sim::TimingSource::kSimulate));
}

}  // namespace
}  // namespace accordion::gui::report

int main(int argc, char** argv) {
  using namespace accordion;
  using namespace accordion::gui::report;
  // Headless unless the caller chose a platform.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // Qt's own chatter (XDG_RUNTIME_DIR, fonts) would break the one-line error
  // contract; ACCORDION_REPORT_QT_MESSAGES=1 lets it through for debugging.
  if (qEnvironmentVariableIsEmpty("ACCORDION_REPORT_QT_MESSAGES")) {
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
      if (type == QtFatalMsg) std::cerr << "accordion-report: internal error: " << message.toStdString() << "\n";
    });
  }
  int qt_argc = 1;
  char qt_name[] = "accordion-report";
  char* qt_argv[] = {qt_name, nullptr};
  QApplication qt(qt_argc, qt_argv);

  Args a;
  CLI::App app{"Write the explorer's figures and tables for traces into a directory (index.html, PNG, PDF, CSV)",
               kTool};
  AddFlags(app, a);
  AddVersionFlags(app, kTool);
  const std::string command_line = CommandLine(argc, argv);
  return RunCli(app, kTool, argc, argv, [&]() { return Run(a, command_line); });
}
