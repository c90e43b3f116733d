// accordion-analyze: inspect, validate and export traces, and derive
// Accordion schedules with their communication savings from them.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/policy_comparison.h"
#include "analysis/regime_detectors.h"
#include "analysis/results_table.h"
#include "analysis/schedule_report.h"
#include "analysis/trace_view.h"
#include "common/cli.h"
#include "common/errors.h"
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
  std::string format = "text";
};

int ShowInfo(const InfoArgs& args) {
  ValidateTrace(args.trace);  // what validate refuses, no command reads
  auto reader = TraceReader::Open(args.trace);
  const RunInfo& run = reader->run();
  // Not LoadTraceView: a run that died in its first epoch has no epochs to
  // analyse, but its configuration is still worth showing.
  const std::vector<LayerInfo>& layers = reader->layers();
  const std::vector<EpochRecord> epochs = reader->Epochs();
  int64_t params = 0;
  int compressible = 0;
  for (const LayerInfo& l : layers) {
    params += l.numel;
    compressible += l.compressible ? 1 : 0;
  }
  double total_s = 0, compute_s = 0, compress_s = 0, comm_s = 0, floats = 0;
  for (const EpochRecord& e : epochs) {
    total_s += e.total_s;
    compute_s += e.compute_s;
    compress_s += e.compress_s;
    comm_s += e.comm_s;
    floats += e.floats_sent;
  }
  const EpochRecord* last = epochs.empty() ? nullptr : &epochs.back();
  const std::vector<NetworkProbeRecord> probe = reader->NetworkProbe();
  std::set<int64_t> probe_sizes;
  for (const NetworkProbeRecord& p : probe) probe_sizes.insert(p.bytes);
  // v1 files name no writer and no layout (schema.h).
  const std::string writer = run.writer.empty() ? "unknown (schema v1)" : run.writer;
  if (args.format == "json") {
    nlohmann::json j;
    j["trace"] = args.trace;
    j["schema_version"] = reader->schema_version();
    j["writer"] = run.writer;
    j["ranks_per_node"] = run.ranks_per_node;
    j["network_probe_rows"] = probe.size();
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
    j["layers"] = layers.size();
    j["parameters"] = params;
    j["epochs_recorded"] = epochs.size();
    j["epochs_planned"] = run.epochs_planned;
    // null: no epoch finished, or the run did not record it.
    auto metric = [&](double v) { return last && Recorded(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    j["final_test_accuracy"] = metric(last ? last->test_acc : kNotRecorded);
    j["final_test_loss"] = metric(last ? last->test_loss : kNotRecorded);
    j["total_s"] = total_s;
    j["floats_sent"] = floats;
    std::cout << j.dump(1) << '\n';
    return kExitOk;
  }
  std::cout << std::fixed;
  std::cout << "trace:       " << args.trace << " (schema v" << reader->schema_version() << ", written by " << writer
            << ")\n"
            << "status:      " << ToString(run.status) << ", " << epochs.size() << " of " << run.epochs_planned
            << " epochs recorded" << (run.synthetic ? "; SYNTHETIC: no training produced this trace" : "") << "\n"
            << "model:       " << run.model << " on " << run.dataset << " (" << run.train_samples
            << " training samples)\n"
            << "scheme:      " << ToString(run.scheme) << ", " << ToString(run.policy);
  if (DescriptionOf(run.scheme).has_levels()) {
    std::cout << " (low " << LevelName(run.scheme, run.level_low) << ", high " << LevelName(run.scheme, run.level_high)
              << ", eta " << std::setprecision(2) << run.eta << ", interval " << run.interval;
    if (DescriptionOf(run.policy).reads_gradient_moments) std::cout << ", MSDR factor " << run.msdr_factor;
    std::cout << ")";
  }
  std::cout << "\n"
            << "workers:     " << run.world_size << " (" << run.backend << " on " << run.device << "), global batch "
            << run.batch_size << ", seed " << run.seed;
  if (run.ranks_per_node > 0) std::cout << ", " << run.ranks_per_node << " per host";
  std::cout << "\n"
            << "network:     ";
  if (probe.empty()) {
    std::cout << "no probe (replays need --recorded-bandwidth-gbps to know the recorded network)\n";
  } else {
    std::cout << "probed at start: " << probe.size() << " timed collectives, " << probe_sizes.size() << " sizes, "
              << *probe_sizes.begin() << " to " << *probe_sizes.rbegin() << " bytes\n";
  }
  std::cout << "layers:      " << layers.size() << " (" << compressible << " compressed at the high level), " << params
            << " parameters\n"
            << "final epoch: ";
  if (last) {
    std::cout << last->epoch << ": test accuracy " << MetricText(last->test_acc, 100, 2, "%") << ", test loss "
              << MetricText(last->test_loss, 1, 4, "") << ", lr " << std::setprecision(6) << last->lr << "\n";
  } else {
    std::cout << "none finished\n";
  }
  std::cout << "time:        " << std::setprecision(1) << total_s << " s (compute " << compute_s << " s, compression "
            << compress_s << " s, exposed communication " << comm_s << " s)\n"
            << "floats sent: " << std::scientific << std::setprecision(4) << floats << " per worker\n"
            << "samples:     " << reader->CountRows("iterations") << " iteration rows, "
            << reader->CountRows("collectives") << " collective rows, " << reader->CountRows("hessian")
            << " Hessian rows";
  if (reader->schema_version() >= 4) std::cout << ", " << reader->CountRows("error_profile") << " error-profile rows";
  std::cout << "\n";
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
  std::vector<std::string> policies;  // compare-policies; empty: those that fit the scheme
  std::optional<double> msdr_factor;  // empty: the trace's run.msdr_factor
  std::string format = "table";
};

// The scheme and settings `args` ask of `view`'s trace (flags over the
// trace's own): shared by schedule and compare-policies.
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

int RunComparePolicies(const ScheduleArgs& args) {
  ValidateTrace(args.trace);
  const TraceView view = LoadTraceView(args.trace);
  const auto [scheme, settings] = ResolvePolicySettings(args, view);
  std::vector<Policy> policies;
  for (const std::string& name : args.policies) policies.push_back(*ParsePolicy(name));
  const PolicyComparison c = ComparePolicies(view, scheme, settings, policies);
  if (args.format == "csv") {
    WritePolicyCsv(c, std::cout);
  } else if (args.format == "json") {
    WritePolicyJson(c, std::cout);
  } else {
    std::cout << "Policies on " << args.trace << " (" << view.run.model << ", " << view.run.world_size << " workers, "
              << view.num_epochs() << " epochs), scheme " << ToString(scheme) << "\n\n";
    WritePolicyTable(c, std::cout);
  }
  return kExitOk;
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
            << (view.run.synthetic ? " (SYNTHETIC trace)" : "") << ": gradient norm (eta " << eta << ", every "
            << interval << " epochs) against the top Hessian "
            << "eigenvalue (threshold " << args.hessian_threshold << ")\n\n";
  WriteRegimeComparison(view, hessian, norm, eigen, std::cout);
  if (hessian.empty()) {
    std::cout << "The trace has no Hessian eigenvalues: record with accordion-train --hessian-every K.\n";
  }
  return kExitOk;
}

int RunTable(const std::vector<std::string>& traces, const std::string& format) {
  for (const std::string& trace : traces) ValidateTrace(trace);
  const std::vector<ResultsRow> rows = BuildResultsTable(traces);
  if (format == "csv") {
    WriteResultsCsv(rows, std::cout);
  } else if (format == "json") {
    WriteResultsJson(rows, std::cout);
  } else {
    WriteResultsMarkdown(rows, std::cout);
  }
  return kExitOk;
}

}  // namespace
}  // namespace accordion

int main(int argc, char** argv) {
  using namespace accordion;
  CLI::App app{"accordion-analyze: inspect Accordion traces and derive communication schedules"};
  app.require_subcommand(1);

  InfoArgs info;
  CLI::App* info_cmd = app.add_subcommand("info", "Summarise a trace: run, layers, results");
  info_cmd->add_option("trace", info.trace, "Trace file (.trace, SQLite)")->required();
  info_cmd->add_option("--format", info.format, "text or json")->check(CLI::IsMember({"text", "json"}));

  std::string validate_trace;
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check every row of a trace; exit 2 on the first problem");
  validate_cmd->add_option("trace", validate_trace, "Trace file")->required();

  ScheduleArgs sched;
  CLI::App* sched_cmd =
      app.add_subcommand("schedule",
                         "Derive the Accordion schedule from a trace's gradient norms and compare its "
                         "communication with static low and static high");
  sched_cmd->add_option("trace", sched.trace, "Trace file")->required();
  sched_cmd
      ->add_option("--scheme", sched.scheme,
                   JoinSchemeNames(SchemeSet::kWithLevels, ", ", " or ") + " (default: the trace's)")
      ->check(CLI::IsMember(SchemeNames(SchemeSet::kWithLevels)));
  sched_cmd
      ->add_option("--eta", sched.eta,
                   "Critical-regime threshold on the norm's relative change (default: the trace's run.eta)")
      ->check(AboveZero());
  sched_cmd
      ->add_option("--interval", sched.interval, "Epochs between regime checks (default: the trace's run.interval)")
      ->check(CLI::Range(1, 1000000));
  sched_cmd->add_option("--low", sched.low,
                        "Level in critical regimes: rank, TopK fraction or global batch (default: the trace's "
                        "level_low when it switched levels, else the scheme's default)");
  sched_cmd->add_option("--high", sched.high,
                        "Level outside critical regimes (default: the trace's level_high when it switched levels, "
                        "else the scheme's default)");
  sched_cmd->add_option("--policy", sched.policy, "accordion, adaqs (powersgd, topk) or smith (batch)")
      ->check(CLI::IsMember({"accordion", "adaqs", "smith"}))
      ->capture_default_str();
  sched_cmd
      ->add_option("--msdr-factor", sched.msdr_factor,
                   "AdaQS: the MSDR fall that halves the compression (default: the trace's run.msdr_factor)")
      ->check(CLI::Range(1.000001, kMaxMsdrFactor));
  sched_cmd->add_option("--format", sched.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();

  ScheduleArgs compare;
  CLI::App* compare_cmd = app.add_subcommand(
      "compare-policies",
      "Derive every policy's schedule from one trace (static low and high, Accordion, AdaQS or Smith et al.) "
      "and tabulate floats per worker and the error proxy; accordion-sim compare-policies adds projected time");
  compare_cmd->add_option("trace", compare.trace, "Trace file")->required();
  compare_cmd
      ->add_option("--policies", compare.policies,
                   "Policies beside static low and high, e.g. accordion,adaqs (default: those that fit the scheme)")
      ->delimiter(',')
      ->check(CLI::IsMember({"accordion", "adaqs", "smith"}));
  compare_cmd
      ->add_option("--scheme", compare.scheme,
                   JoinSchemeNames(SchemeSet::kWithLevels, ", ", " or ") + " (default: the trace's)")
      ->check(CLI::IsMember(SchemeNames(SchemeSet::kWithLevels)));
  compare_cmd->add_option("--eta", compare.eta, "Accordion's threshold (default: the trace's run.eta)")
      ->check(AboveZero());
  compare_cmd->add_option("--interval", compare.interval, "Epochs between checks (default: the trace's run.interval)")
      ->check(CLI::Range(1, 1000000));
  compare_cmd->add_option("--low", compare.low, "Low level (default: the trace's pair, else the scheme's default)");
  compare_cmd->add_option("--high", compare.high, "High level (default: the trace's pair, else the scheme's default)");
  compare_cmd
      ->add_option("--msdr-factor", compare.msdr_factor, "AdaQS's MSDR factor (default: the trace's run.msdr_factor)")
      ->check(CLI::Range(1.000001, 1e6));
  compare_cmd->add_option("--format", compare.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();

  ExportArgs exp;
  CLI::App* export_cmd = app.add_subcommand("export", "Export every table: CSV files into a directory, or JSON");
  export_cmd->add_option("trace", exp.trace, "Trace file")->required();
  export_cmd->add_option("--format", exp.format, "csv or json")
      ->check(CLI::IsMember({"csv", "json"}))
      ->capture_default_str();
  export_cmd
      ->add_option("--out", exp.out,
                   "Directory for CSV; file or - (stdout) for JSON. Existing files are replaced only with "
                   "--overwrite, the trace never")
      ->required();
  export_cmd->add_flag("--overwrite", exp.overwrite,
                       "Replace existing output files (never the trace: a tool does not write over what it reads; "
                       "never a file another process is writing, such as a live trace)");

  std::vector<std::string> table_traces;
  std::string table_format = "markdown";
  CLI::App* table_cmd =
      app.add_subcommand("table",
                         "Tabulate runs as the paper's Tables 1-6: accuracy, floats and time per setting, "
                         "mean and 95% CI over seeds");
  table_cmd->add_option("traces", table_traces, "Trace files (several seeds per setting)")->required();
  table_cmd->add_option("--format", table_format, "markdown, csv or json")
      ->check(CLI::IsMember({"markdown", "csv", "json"}))
      ->capture_default_str();

  RegimesArgs regimes;
  CLI::App* regimes_cmd =
      app.add_subcommand("regimes",
                         "Compare the critical regimes found from gradient norms with those found from "
                         "the top Hessian eigenvalue (the paper's Figure 3)");
  regimes_cmd->add_option("trace", regimes.trace, "Trace file")->required();
  regimes_cmd
      ->add_option("--eta", regimes.eta, "Threshold on the model norm's relative change (default: the trace's run.eta)")
      ->check(AboveZero());
  regimes_cmd
      ->add_option("--interval", regimes.interval, "Epochs between norm checks (default: the trace's run.interval)")
      ->check(CLI::Range(1, 1000000));
  regimes_cmd
      ->add_option("--hessian-threshold", regimes.hessian_threshold, "Threshold on the eigenvalue's relative change")
      ->check(AboveZero())
      ->capture_default_str();

  AddVersionFlags(app, kTool);
  return RunCli(app, kTool, argc, argv, [&]() -> int {
    if (*info_cmd) return ShowInfo(info);
    if (*validate_cmd) return RunValidate(validate_trace);
    if (*sched_cmd) return RunSchedule(sched);
    if (*compare_cmd) return RunComparePolicies(compare);
    if (*table_cmd) return RunTable(table_traces, table_format);
    if (*regimes_cmd) return RunRegimes(regimes);
    return RunExport(exp);
  });
}
