// accordion-analyze: inspect, validate and export traces, and derive
// Accordion schedules with their communication savings from them.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/cli/shared_flags.h"
#include "analysis/policy_comparison.h"
#include "analysis/regime_detectors.h"
#include "analysis/results_table.h"
#include "analysis/schedule_report.h"
#include "analysis/trace_view.h"
#include "common/cli.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/output_file.h"
#include "traces/policy_description.h"
#include "traces/schema.h"
#include "traces/scheme_description.h"
#include "traces/trace_export.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

namespace accordion {
namespace {

constexpr const char* kTool = "accordion-analyze";

// `value` * `scale` with `digits` decimals and `unit`, or "—" for a metric
// the run did not record (kNotRecorded).
std::string MetricText(double value, double scale, int digits, const char* unit) {
  if (!Recorded(value)) return "—";
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value * scale << unit;
  return out.str();
}

struct InfoArgs {
  std::string trace;
  std::string format = "table";
};

// What info shows, read once for either format.
struct InfoSummary {
  std::unique_ptr<TraceReader> reader;
  std::vector<LayerInfo> layers;
  std::vector<EpochRecord> epochs;
  std::vector<NetworkProbeRecord> probe;
  std::set<int64_t> probe_sizes;
  int64_t params = 0;
  int compressible = 0;
  double total_s = 0, compute_s = 0, compress_s = 0, comm_s = 0, floats = 0;
  const EpochRecord* last() const { return epochs.empty() ? nullptr : &epochs.back(); }
};

InfoSummary SummariseTrace(const std::string& trace) {
  InfoSummary s;
  s.reader = TraceReader::Open(trace);
  // Not LoadTraceView: a run that died in its first epoch has no epochs to
  // analyse, but its configuration is still worth showing.
  s.layers = s.reader->layers();
  s.epochs = s.reader->Epochs();
  for (const LayerInfo& l : s.layers) {
    s.params += l.numel;
    s.compressible += l.compressible ? 1 : 0;
  }
  for (const EpochRecord& e : s.epochs) {
    s.total_s += e.total_s;
    s.compute_s += e.compute_s;
    s.compress_s += e.compress_s;
    s.comm_s += e.comm_s;
    s.floats += e.floats_sent;
  }
  s.probe = s.reader->NetworkProbe();
  for (const NetworkProbeRecord& p : s.probe) s.probe_sizes.insert(p.bytes);
  return s;
}

nlohmann::json InfoJson(const std::string& trace, const InfoSummary& s) {
  const RunInfo& run = s.reader->run();
  nlohmann::json j;
  j["trace"] = trace;
  j["schema_version"] = s.reader->schema_version();
  j["writer"] = run.writer;
  j["ranks_per_node"] = run.ranks_per_node;
  j["network_probe_rows"] = s.probe.size();
  j["status"] = ToString(run.status);
  j["synthetic"] = run.synthetic;
  j["model"] = run.model;
  j["dataset"] = run.dataset;
  j["scheme"] = ToString(run.scheme);
  j["policy"] = ToString(run.policy);
  j["level_low"] = run.level_low;
  j["level_high"] = run.level_high;
  j["eta"] = run.eta;
  j["interval"] = run.interval;
  j["msdr_factor"] = run.msdr_factor;
  j["world_size"] = run.world_size;
  j["backend"] = run.backend;
  j["device"] = run.device;
  j["batch_size"] = run.batch_size;
  j["layers"] = s.layers.size();
  j["parameters"] = s.params;
  j["epochs_recorded"] = s.epochs.size();
  j["epochs_planned"] = run.epochs_planned;
  // null: no epoch finished, or the run did not record it.
  const EpochRecord* last = s.last();
  auto metric = [&](double v) { return last && Recorded(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["final_test_accuracy"] = metric(last ? last->test_acc : kNotRecorded);
  j["final_test_loss"] = metric(last ? last->test_loss : kNotRecorded);
  j["total_s"] = s.total_s;
  j["floats_sent"] = s.floats;
  return j;
}

// The run's lines: trace, status, model, scheme, workers.
void WriteRunText(const std::string& trace, const InfoSummary& s, std::ostream& out) {
  const RunInfo& run = s.reader->run();
  // v1 files name no writer and no layout (schema.h).
  const std::string writer = run.writer.empty() ? "unknown (schema v1)" : run.writer;
  out << "trace:       " << trace << " (schema v" << s.reader->schema_version() << ", written by " << writer << ")\n"
      << "status:      " << ToString(run.status) << ", " << s.epochs.size() << " of " << run.epochs_planned
      << " epochs recorded" << (run.synthetic ? "; SYNTHETIC: no training produced this trace" : "") << "\n"
      << "model:       " << run.model << " on " << run.dataset << " (" << run.train_samples << " training samples)\n"
      << "scheme:      " << ToString(run.scheme) << ", " << ToString(run.policy);
  if (DescriptionOf(run.scheme).has_levels()) {
    out << " (low " << LevelName(run.scheme, run.level_low) << ", high " << LevelName(run.scheme, run.level_high)
        << ", eta " << std::setprecision(2) << run.eta << ", interval " << run.interval;
    if (DescriptionOf(run.policy).reads_gradient_moments) out << ", MSDR factor " << run.msdr_factor;
    out << ")";
  }
  out << "\n"
      << "workers:     " << run.world_size << " (" << run.backend << " on " << run.device << "), global batch "
      << run.batch_size << ", seed " << run.seed;
  if (run.ranks_per_node > 0) out << ", " << run.ranks_per_node << " per host";
  out << "\n";
}

// The recorded lines: network probe, layers, final epoch, time, samples.
void WriteRecordedText(const InfoSummary& s, std::ostream& out) {
  out << "network:     ";
  if (s.probe.empty()) {
    out << "no probe (replays need --recorded-bandwidth-gbps to know the recorded network)\n";
  } else {
    out << "probed at start: " << s.probe.size() << " timed collectives, " << s.probe_sizes.size() << " sizes, "
        << *s.probe_sizes.begin() << " to " << *s.probe_sizes.rbegin() << " bytes\n";
  }
  out << "layers:      " << s.layers.size() << " (" << s.compressible << " compressed at the high level), " << s.params
      << " parameters\n"
      << "final epoch: ";
  if (const EpochRecord* last = s.last()) {
    out << last->epoch << ": test accuracy " << MetricText(last->test_acc, 100, 2, "%") << ", test loss "
        << MetricText(last->test_loss, 1, 4, "") << ", lr " << std::setprecision(6) << last->lr << "\n";
  } else {
    out << "none finished\n";
  }
  out << "time:        " << std::setprecision(1) << s.total_s << " s (compute " << s.compute_s << " s, compression "
      << s.compress_s << " s, exposed communication " << s.comm_s << " s)\n"
      << "floats sent: " << std::scientific << std::setprecision(4) << s.floats << " per worker\n"
      << "samples:     " << s.reader->CountRows("iterations") << " iteration rows, "
      << s.reader->CountRows("collectives") << " collective rows, " << s.reader->CountRows("hessian")
      << " Hessian rows";
  if (s.reader->schema_version() >= 4) out << ", " << s.reader->CountRows("error_profile") << " error-profile rows";
  out << "\n";
}

int ShowInfo(const InfoArgs& args) {
  ValidateTrace(args.trace);  // what validate refuses, no command reads
  const InfoSummary s = SummariseTrace(args.trace);
  if (args.format == "json") {
    std::cout << InfoJson(args.trace, s).dump(1) << '\n';
    return kExitOk;
  }
  std::cout << std::fixed;
  WriteRunText(args.trace, s, std::cout);
  WriteRecordedText(s, std::cout);
  return kExitOk;
}

int RunValidate(const std::string& trace) {
  const TraceSummary s = ValidateTrace(trace);
  std::cout << "OK " << trace << ": " << s.epochs << " epochs, " << s.layers << " layers, " << s.iteration_rows
            << " iteration rows, " << s.grad_ready_rows << " grad-ready rows, " << s.collective_rows
            << " collective rows, " << s.hessian_rows << " Hessian rows\n";
  for (const std::string& w : s.warnings) std::cout << "warning: " << w << "\n";
  return kExitOk;
}

struct ScheduleArgs {
  std::string trace;
  std::string scheme;           // empty: the trace's own
  std::optional<double> eta;    // empty: the trace's run.eta
  std::optional<int> interval;  // empty: the trace's run.interval
  std::optional<double> low;
  std::optional<double> high;
  std::string policy = "accordion";
  std::optional<double> msdr_factor;  // empty: the trace's run.msdr_factor
  std::string format = "table";
};

// The scheme and settings `args` ask of `view`'s trace (flags over the
// trace's own).
std::pair<Scheme, PolicySettings> ResolvePolicySettings(const ScheduleArgs& args, const TraceView& view) {
  Scheme scheme = view.run.scheme;
  if (!args.scheme.empty()) scheme = *ParseScheme(args.scheme);
  if (!DescriptionOf(scheme).has_levels()) {
    throw InputError(args.trace + " was recorded with " + ToString(scheme) +
                     " communication; pick the scheme to schedule with --scheme " +
                     JoinSchemeNames(SchemeSet::kWithLevels, "|", "|"));
  }
  const auto [low, high] = ResolveLevels(view.run, scheme, args.low, args.high);
  for (const auto& [level, flag] : {std::pair{low, "--low"}, std::pair{high, "--high"}}) {
    const std::string problem = LevelProblem(scheme, level);
    if (!problem.empty()) throw InputError(std::string(flag) + " " + problem);
  }
  const AccordionOptions options = AccordionOptions()
                                       .eta(args.eta.value_or(view.run.eta))
                                       .interval(args.interval.value_or(view.run.interval))
                                       .level_low(low)
                                       .level_high(high);
  return {scheme, PolicySettings()
                      .policy(*ParsePolicy(args.policy))
                      .accordion(options)
                      .msdr_factor(args.msdr_factor.value_or(view.run.msdr_factor))};
}

int RunSchedule(const ScheduleArgs& args) {
  ValidateTrace(args.trace);
  const TraceView view = LoadTraceView(args.trace);
  const auto [scheme, settings] = ResolvePolicySettings(args, view);
  const ScheduleComparison c = CompareSchedules(view, scheme, settings);
  if (args.format == "csv") {
    WriteScheduleCsv(view, c, std::cout);
  } else if (args.format == "json") {
    WriteScheduleJson(view, c, std::cout);
  } else {
    WriteScheduleTable(view, c, std::cout);
  }
  return kExitOk;
}

// compare-policies is accordion-sim's, run with the same arguments: one
// implementation, so both tools print the same thing. It projects onto a
// cluster, so it needs the simulator, installed beside this tool.
int RunSimComparePolicies(const std::vector<std::string>& args) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string sim = (self.parent_path() / "accordion-sim").string();
  if (::access(sim.c_str(), X_OK) != 0) {
    throw InputError("compare-policies runs accordion-sim compare-policies, and there is no accordion-sim beside " +
                     self.string() + " (a build without the simulator)");
  }
  std::vector<std::string> words = {sim, "compare-policies"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(sim.c_str(), argv.data());
  throw IoError("cannot run " + sim + ": " + std::strerror(errno));
}

struct ExportArgs {
  std::string trace;
  std::string format = "csv";
  std::string out;
  bool overwrite = false;
};

// CSV goes into a directory, one file per table: none of them may be an
// existing file unless --overwrite, nor the trace.
void CheckCsvDirectory(const ExportArgs& args) {
  std::error_code ec;
  if (std::filesystem::exists(args.out, ec) && !std::filesystem::is_directory(args.out, ec)) {
    throw InputError("--out " + args.out + " exists and is not a directory (CSV goes into a directory)");
  }
  for (const TableSpec& table : TraceTables()) {
    const std::string path = (std::filesystem::path(args.out) / (std::string(table.name) + ".csv")).string();
    if (!std::filesystem::exists(std::filesystem::path(args.out))) break;
    CheckOutput(path, OutputOptions().inputs({args.trace}).overwrite(args.overwrite).streams(false));
  }
}

int RunExport(const ExportArgs& args) {
  if (args.format == "csv") {
    CheckCsvDirectory(args);
  } else {
    CheckOutput(args.out, OutputOptions().inputs({args.trace}).overwrite(args.overwrite));
  }
  ValidateTrace(args.trace);  // never export a file we would refuse to read
  auto reader = TraceReader::Open(args.trace);
  if (args.format == "csv") {
    for (const std::string& path : ExportCsv(*reader, args.out)) std::cout << path << '\n';
    return kExitOk;
  }
  WriteOutput(args.out, [&](std::ostream& out) { ExportJson(*reader, out); });
  if (args.out != "-") std::cout << args.out << '\n';
  return kExitOk;
}

struct RegimesArgs {
  std::string trace;
  std::optional<double> eta;    // empty: the trace's run.eta
  std::optional<int> interval;  // empty: the trace's run.interval
  double hessian_threshold = 0.5;
};

int RunRegimes(const RegimesArgs& args) {
  ValidateTrace(args.trace);
  auto reader = TraceReader::Open(args.trace);
  const TraceView view = LoadTraceView(*reader);
  const std::vector<HessianRecord> hessian = reader->Hessian();
  const double eta = args.eta.value_or(view.run.eta);
  const int interval = args.interval.value_or(view.run.interval);
  const RegimeSeries norm = DetectFromGradientNorms(view, eta, interval);
  const RegimeSeries eigen = DetectFromHessian(hessian, view.num_epochs(), args.hessian_threshold);
  std::cout << "Critical regimes of " << view.run.model << " on " << view.run.dataset
            << (view.run.synthetic ? " (SYNTHETIC trace)" : "") << ": gradient norm (eta " << eta << ", "
            << EveryEpochs(interval) << ") against the top Hessian "
            << "eigenvalue (threshold " << args.hessian_threshold << ")\n\n";
  WriteRegimeComparison(view, hessian, norm, eigen, std::cout);
  if (hessian.empty()) {
    std::cout << "The trace has no Hessian eigenvalues: record with accordion-train --hessian-every K.\n";
  }
  return kExitOk;
}

struct TableArgs {
  std::vector<std::string> traces;
  std::string format = "table";
  std::string baseline;
};

int RunTable(const TableArgs& args) {
  const std::vector<std::string>& traces = args.traces;
  const std::string& format = args.format;
  for (const std::string& trace : traces) ValidateTrace(trace);
  const std::vector<ResultsRow> rows = BuildResultsTable(traces, ResultsTableOptions().baseline(args.baseline));
  if (format == "csv") {
    WriteResultsCsv(rows, std::cout);
  } else if (format == "json") {
    WriteResultsJson(rows, std::cout);
  } else {
    WriteResultsMarkdown(rows, std::cout);
  }
  return kExitOk;
}

CLI::App* AddInfoCommand(CLI::App& app, InfoArgs& a) {
  CLI::App* cmd = app.add_subcommand("info", "Summarise a trace: run, layers, results");
  cmd->add_option("trace", a.trace, "Trace file (.trace, SQLite)")->required();
  cli::AddFormatFlag(cmd, &a.format, {"table", "json"}, kTool);
  return cmd;
}

CLI::App* AddScheduleCommand(CLI::App& app, ScheduleArgs& a) {
  CLI::App* cmd = app.add_subcommand("schedule",
                                     "Derive the Accordion schedule from a trace's gradient norms and compare its "
                                     "communication with static low and static high");
  cmd->add_option("trace", a.trace, "Trace file")->required();
  cli::AddSchemeFlag(cmd, &a.scheme, SchemeSet::kWithLevels);
  cli::AddEtaFlag(cmd, &a.eta, cli::TracesOwn("run.eta"));
  cli::AddIntervalFlag(cmd, &a.interval, cli::TracesOwn("run.interval"));
  cli::AddLevelFlags(cmd, &a.low, &a.high);
  cli::AddPolicyFlag(cmd, &a.policy);
  cli::AddMsdrFactorFlag(cmd, &a.msdr_factor);
  cli::AddFormatFlag(cmd, &a.format, {"table", "csv", "json"}, kTool);
  return cmd;
}

// Everything after the subcommand goes to accordion-sim, --help included.
CLI::App* AddComparePoliciesCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare-policies",
      "accordion-sim compare-policies, run with these arguments: every policy's schedule projected onto a cluster");
  cmd->set_help_flag();
  cmd->prefix_command();
  return cmd;
}

CLI::App* AddExportCommand(CLI::App& app, ExportArgs& a) {
  CLI::App* cmd = app.add_subcommand("export", "Export every table: CSV files into a directory, or JSON");
  cmd->add_option("trace", a.trace, "Trace file")->required();
  cli::AddFormatFlag(cmd, &a.format, {"csv", "json"}, kTool);
  cmd->add_option("--out", a.out,
                  "Directory for CSV; file or - (stdout) for JSON. Existing files are replaced only with "
                  "--overwrite, the trace never")
      ->required();
  cli::AddOverwriteFlag(cmd, &a.overwrite);
  return cmd;
}

CLI::App* AddTableCommand(CLI::App& app, TableArgs& a) {
  CLI::App* cmd = app.add_subcommand("table",
                                     "Tabulate runs as the paper's Tables 1-6: accuracy, floats and time per "
                                     "setting, mean and 95% CI over seeds (table: Markdown)");
  cmd->add_option("traces", a.traces, "Trace files (several seeds per setting)")->required();
  cli::AddBaselineFlag(cmd, &a.baseline);
  cli::AddFormatFlag(cmd, &a.format, {"table", "csv", "json"}, kTool);
  return cmd;
}

CLI::App* AddRegimesCommand(CLI::App& app, RegimesArgs& a) {
  CLI::App* cmd = app.add_subcommand("regimes",
                                     "Compare the critical regimes found from gradient norms with those found from "
                                     "the top Hessian eigenvalue (the paper's Figure 3)");
  cmd->add_option("trace", a.trace, "Trace file")->required();
  cli::AddEtaFlag(cmd, &a.eta, cli::TracesOwn("run.eta"));
  cli::AddIntervalFlag(cmd, &a.interval, cli::TracesOwn("run.interval"));
  cmd->add_option("--hessian-threshold", a.hessian_threshold, "Threshold on the eigenvalue's relative change")
      ->check(AboveZero())
      ->capture_default_str();
  return cmd;
}

}  // namespace
}  // namespace accordion

int main(int argc, char** argv) {
  using namespace accordion;
  CLI::App app{"accordion-analyze: inspect Accordion traces and derive communication schedules"};
  app.require_subcommand(1);
  InfoArgs info;
  std::string validate_trace;
  ScheduleArgs sched;
  ExportArgs exp;
  TableArgs table;
  RegimesArgs regimes;
  CLI::App* info_cmd = AddInfoCommand(app, info);
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check every row of a trace; exit 2 on the first problem");
  validate_cmd->add_option("trace", validate_trace, "Trace file")->required();
  CLI::App* sched_cmd = AddScheduleCommand(app, sched);
  CLI::App* compare_cmd = AddComparePoliciesCommand(app);
  AddExportCommand(app, exp);
  CLI::App* table_cmd = AddTableCommand(app, table);
  CLI::App* regimes_cmd = AddRegimesCommand(app, regimes);
  AddVersionFlags(app, kTool);
  return RunCli(app, kTool, argc, argv, [&]() -> int {
    if (*info_cmd) return ShowInfo(info);
    if (*validate_cmd) return RunValidate(validate_trace);
    if (*sched_cmd) return RunSchedule(sched);
    if (*compare_cmd) return RunSimComparePolicies(compare_cmd->remaining());
    if (*table_cmd) return RunTable(table);
    if (*regimes_cmd) return RunRegimes(regimes);
    return RunExport(exp);
  });
}
