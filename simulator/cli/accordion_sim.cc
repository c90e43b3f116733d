// accordion-sim: replay traces on simulated clusters (SimGrid) under any
// Accordion setting, calibrate platforms from measured collectives, sweep
// settings, and time single collectives.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/cli/shared_flags.h"
#include "analysis/trace_view.h"
#include "common/cli.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/progress_bar.h"
#include "simulator/calibrator.h"
#include "simulator/child_process.h"
#include "simulator/cli/cluster_flags.h"
#include "simulator/communication_model.h"
#include "simulator/platform_file.h"
#include "simulator/policy_projection.h"
#include "common/output_file.h"
#include "simulator/recorded_network.h"
#include "simulator/replay_report.h"
#include "simulator/sweep.h"
#include "simulator/timeline.h"
#include "simulator/topology_description.h"
#include "traces/scheme_description.h"

namespace accordion::sim {
namespace {

constexpr const char* kTool = "accordion-sim";

// The files a command reads: its outputs may never be one of them.
std::vector<std::string> Inputs(const std::string& trace, const std::string& platform) {
  std::vector<std::string> inputs = {trace};
  if (!platform.empty()) inputs.push_back(platform);
  return inputs;
}

// The flags that describe a platform, on every command that needs one;
// each topology's own parameters come from its description.
struct PlatformFlags {
  std::string file;
  std::string topology;
  std::optional<double> bandwidth_gbps, latency_us, tcp_gamma;
  std::optional<double> collective_overhead_us, host_ns_per_byte;
  std::optional<int> hosts;
  cli::TopologyParameterFlags parameters;
  std::optional<std::string> network_model, crosstraffic;

  // `link_values`: whether --bandwidth-gbps / --latency-us are single values
  // here (a sweep lists them instead). `over_trace`: the flags change a
  // trace's base platform (its recorded network where it has a probe), so
  // the defaults the help states are that network's first.
  void Add(CLI::App* cmd, bool link_values, bool over_trace) {
    const PlatformSpec defaults;
    cli::AddPlatformFileFlag(cmd, &file);
    cli::AddTopologyFlag(cmd, &topology, ToString(defaults.topology));
    if (link_values) {
      cli::AddBandwidthFlag(cmd, &bandwidth_gbps,
                            cli::OverTrace(over_trace, HelpNumber(GbpsFromBytesPerSecond(defaults.bandwidth_Bps))));
      cli::AddLatencyFlag(cmd, &latency_us, cli::OverTrace(over_trace, HelpNumber(defaults.latency_s * 1e6)));
    }
    cmd->add_option("--hosts", hosts,
                    "Hosts in the platform (default: one per worker; at most " + std::to_string(kMaxHosts) +
                        ", more than the largest clusters, in whole nodes or leaves too)");
    parameters.Add(cmd, false);
    cli::AddNetworkModelFlag(cmd, &network_model, over_trace);
    cli::AddWindowFlags(cmd, &tcp_gamma, &crosstraffic, over_trace);
    cmd->add_option("--collective-overhead-us", collective_overhead_us,
                    "Software cost of one collective, microseconds (default " +
                        HelpNumber(defaults.collective_overhead_s * 1e6) + "; calibrate measures it)");
    cmd->add_option("--host-ns-per-byte", host_ns_per_byte,
                    "Hosts' cost per byte, ns: links of rate R deliver 1/(1/R + h) (default " +
                        HelpNumber(defaults.host_s_per_byte * 1e9) + "; calibrate measures it given --link-gbps)");
  }

  // `base`: what the flags change (a replay's: the trace's recorded
  // network, BasePlatform); a --platform file replaces it.
  PlatformSpec Resolve(const PlatformSpec& base = PlatformSpec()) const {
    PlatformSpec spec = base;
    if (!file.empty()) {
      if (!topology.empty()) throw InputError("give --platform or --topology, not both");
      spec = LoadPlatformFile(file);
    } else if (!topology.empty()) {
      const std::optional<Topology> t = ParseTopology(topology);
      if (!t) throw InputError("unknown topology '" + topology + "' (" + TopologyNames(", ") + ")");
      spec.topology = *t;
    }
    const bool xml = spec.source == PlatformSource::kXmlFile;
    const bool link_flags = bandwidth_gbps || latency_us || parameters.AnyLinkGiven();
    if (xml && link_flags) {
      throw InputError("an XML platform has its own links: drop the bandwidth and latency flags");
    }
    if (bandwidth_gbps) spec.bandwidth_Bps = BytesPerSecondFromGbps(*bandwidth_gbps);
    if (latency_us) spec.latency_s = *latency_us * 1e-6;
    if (hosts) spec.hosts = *hosts;
    parameters.Apply(spec);
    if (network_model) spec.network.model(*network_model);
    if (tcp_gamma) spec.network.tcp_gamma(*tcp_gamma);
    if (crosstraffic) spec.network.crosstraffic(*crosstraffic == "on");
    if (collective_overhead_us) spec.collective_overhead_s = *collective_overhead_us * 1e-6;
    if (host_ns_per_byte) spec.host_s_per_byte = *host_ns_per_byte * 1e-9;
    spec.Validate();
    return spec;
  }
};

// --timing's values (TimingSource).
const std::vector<std::string> kTimings = {"simulate", "analytic", "recorded"};

// --collective-overhead's values.
const char* OverheadName(OverheadSource source) { return source == OverheadSource::kTrace ? "trace" : "platform"; }

// --fidelity, for replays and single collectives alike.
void AddFidelityFlag(CLI::App* cmd, std::string* fidelity) {
  cmd->add_option("--fidelity", *fidelity,
                  "full (every round of every rank), rounds (each distinct round once) or auto (full up to " +
                      std::to_string(kFullFidelityMaxRanks) + " ranks)")
      ->check(CLI::IsMember({"auto", "full", "rounds"}))
      ->capture_default_str();
}

// The flags that shape a replay besides the platform; their defaults, and
// so the help's, are ReplayOptions'.
struct ReplayFlags {
  int workers = ReplayOptions().workers();
  std::string scheme;
  std::optional<double> eta;    // empty: the trace's run.eta
  std::optional<int> interval;  // empty: the trace's run.interval
  std::optional<double> low, high;
  std::string timing = ToString(ReplayOptions().timing());
  std::string allreduce = ToString(ReplayOptions().allreduce());
  std::string fidelity = ToString(ReplayOptions().fidelity());
  bool no_memo = false;
  std::optional<double> bucket_mb;
  int jobs = ReplayOptions().jobs();
  double straggler_cv = ReplayOptions().straggler_cv();
  double timeout_s = ReplayOptions().timeout_s();
  std::string overhead = OverheadName(ReplayOptions().overhead());
  std::optional<double> recorded_bandwidth_gbps;
  std::optional<double> recorded_latency_us;
  std::optional<double> burst_kib;
  std::optional<double> line_gbps;
  std::string anchor = ReplayOptions().anchor() ? "on" : "off";

  void Add(CLI::App* cmd, bool settings) {
    if (settings) {
      // 0 is ReplayOptions' "the trace's": a given count starts at 1.
      cli::AddWorkersFlag(cmd, &workers, "the trace's; at most " + std::to_string(kMaxHosts));
      cli::AddEtaFlag(cmd, &eta, cli::TracesOwn("run.eta"));
      cli::AddIntervalFlag(cmd, &interval, cli::TracesOwn("run.interval"));
      cli::AddLevelFlags(cmd, &low, &high);
    }
    cli::AddSchemeFlag(cmd, &scheme, SchemeSet::kAll);
    cli::AddTimingFlag(cmd, &timing, kTimings, kTool);
    cmd->add_option("--straggler-cv", straggler_cv,
                    "Stragglers: each rank's compute per step slowed by a log-normal factor of mean 1 and this "
                    "coefficient of variation; a step waits for the slowest (0-10)")
        ->check(CLI::Range(0.0, 10.0))
        ->capture_default_str();
    cmd->add_option("--collective-overhead", overhead,
                    "Per-collective software cost: trace (what the trace's collectives cost these hosts during "
                    "training, less the network's latency) or platform (the platform's, e.g. a calibration's)")
        ->check(CLI::IsMember({"trace", "platform"}))
        ->capture_default_str();
    cli::AddRecordedBandwidthFlag(cmd, &recorded_bandwidth_gbps);
    cmd->add_option("--anchor", anchor,
                    "on: a trace with a network probe is replayed on the network it was recorded on unless the "
                    "platform flags say otherwise, and each collective keeps what it cost the hosts beyond that "
                    "network (a replay at the recorded setting reproduces the trace); off: neither")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str();
    cmd->add_option("--recorded-latency-us", recorded_latency_us,
                    "The link latency the trace was recorded at (default: its probe's fit, else the platform's)")
        ->check(CLI::Range(0.0, 1e7));
    cli::AddShaperFlags(cmd, &burst_kib, &line_gbps);
    cmd->add_option("--sim-timeout", timeout_s,
                    "Seconds one SimGrid simulation (one distinct step pattern) may take before the replay "
                    "stops it and fails (0: no limit)")
        ->check(CLI::Range(0.0, 1e7))
        ->capture_default_str();
    cli::AddAllReduceFlag(cmd, &allreduce);
    AddFidelityFlag(cmd, &fidelity);
    cmd->add_flag("--no-memo", no_memo, "Time every epoch's iteration afresh (for checking memoisation)");
    cmd->add_option("--bucket-mb", bucket_mb,
                    "Gradient bucket size, MiB (default: the trainer's, else " +
                        HelpNumber(static_cast<double>(kDefaultBucketBytes) / (1024 * 1024)) + "; at most 1048576)")
        ->check(CLI::Range(1e-6, 1048576.0));
    cmd->add_option("--jobs", jobs, "Processes to run at once")->check(CLI::Range(1, 1024))->capture_default_str();
  }

  ReplayOptions Options(const PlatformSpec& platform) const {
    ReplayOptions o;
    o.platform(platform)
        .workers(workers)
        .eta(eta)
        .interval(interval)
        .level_low(low)
        .level_high(high)
        .timing(*ParseTimingSource(timing))
        .allreduce(*ParseAllReduceAlgorithm(allreduce))
        .fidelity(*ParseFidelity(fidelity))
        .memoise(!no_memo)
        .bucket_bytes(bucket_mb ? std::optional<int64_t>(std::llround(*bucket_mb * 1024 * 1024)) : std::nullopt)
        .jobs(jobs)
        .straggler_cv(straggler_cv)
        .timeout_s(timeout_s)
        .overhead(overhead == OverheadName(OverheadSource::kTrace) ? OverheadSource::kTrace : OverheadSource::kPlatform)
        .recorded_bandwidth_gbps(recorded_bandwidth_gbps)
        .recorded_latency_us(recorded_latency_us)
        .burst_bytes(burst_kib ? std::optional<double>(*burst_kib * 1024) : std::nullopt)
        .line_gbps(line_gbps)
        .anchor(anchor == "on");
    if (!scheme.empty()) o.scheme(*ParseScheme(scheme));
    return o;
  }
};

// The settings of NCCL's algorithms and of the hierarchical all-reduce
// (collectives.h), the same flags wherever an all-reduce algorithm is
// chosen: replay, sweep, collective, and calibrate (the algorithm the
// samples ran).
struct CollectiveFlags {
  std::optional<int64_t> chunk_kib;
  std::optional<int> channels, ranks_per_node;

  void Add(CLI::App* cmd) {
    CLI::Option* chunk = cmd->add_option("--nccl-chunk-kib", chunk_kib,
                                         "nccl-ring, nccl-tree: largest chunk a hop forwards, KiB (default " +
                                             std::to_string(CollectiveOptions::kDefaultChunkBytes / 1024) +
                                             ": NCCL's 4 MiB buffer in 8 slots)")
                             ->check(AboveZero());
    cli::AddDeprecatedAlias(cmd, kTool, "--nccl-chunk-kb", chunk);
    cmd->add_option("--nccl-channels", channels,
                    "nccl-ring, nccl-tree: channels, concurrent rings or tree flows (default " +
                        std::to_string(CollectiveOptions::kDefaultChannels) + ")");
    cmd->add_option("--ranks-per-node", ranks_per_node,
                    "hierarchical, nccl-tree: consecutive ranks per node, at most " + std::to_string(kMaxHosts) +
                        " (default: --gpus-per-node on the hierarchical topology, else 1: a plain ring, trees "
                        "over ranks)");
  }

  CollectiveOptions Apply(const std::string& allreduce, const PlatformSpec& spec) const {
    const AllReduceAlgorithm a = *ParseAllReduceAlgorithm(allreduce);
    if ((chunk_kib || channels) && !CollectiveOptions::UsesChunks(a)) {
      throw InputError(
          "--nccl-chunk-kib and --nccl-channels are settings of --allreduce nccl-ring and "
          "nccl-tree, not " +
          allreduce);
    }
    if (ranks_per_node && !CollectiveOptions::UsesNodes(a)) {
      throw InputError("--ranks-per-node is a setting of --allreduce hierarchical and nccl-tree, not " + allreduce);
    }
    if (ranks_per_node && *ranks_per_node < 1) throw InputError("--ranks-per-node must be at least 1");
    if (ranks_per_node && *ranks_per_node > kMaxHosts) {
      throw InputError("--ranks-per-node " + std::to_string(*ranks_per_node) + " is above the limit of " +
                       std::to_string(kMaxHosts) + " ranks (a node cannot hold more ranks than a run has)");
    }
    if (chunk_kib && *chunk_kib > (int64_t{1} << 40)) throw InputError("--nccl-chunk-kib is too large");
    CollectiveOptions o;
    if (chunk_kib) o.chunk_bytes(*chunk_kib * 1024);
    if (channels) o.channels(*channels);
    o.ranks_per_node(ranks_per_node ? *ranks_per_node : NodesOf(spec).ranks_per_node);
    o.Validate();
    return o;
  }
};

// What a replay's platform flags change: the network the trace was recorded
// on when it has a probe and the replay anchors (so a replay without
// platform flags is a replay at the recorded setting), else PlatformSpec's
// defaults. The recorded network's fit is in the replay's notes.
PlatformSpec BasePlatform(const ReplayInput& input, const ReplayFlags& replay) {
  return WhatIfBasePlatform(input, replay.Options(PlatformSpec()));
}

struct ReplayArgs {
  std::string trace;
  PlatformFlags platform;
  ReplayFlags replay;
  CollectiveFlags collective;
  std::string format = "table";
  std::string out;
  std::string timeline;
  int timeline_epoch = 0;
  bool overwrite = false;
};

int RunReplay(const ReplayArgs& a) {
  const OutputOptions outputs = OutputOptions().inputs(Inputs(a.trace, a.platform.file)).overwrite(a.overwrite);
  CheckOutput(a.out, outputs);
  if (!a.timeline.empty()) {
    CheckOutput(a.timeline, OutputOptions(outputs).flag("--timeline"));
    if (!a.out.empty() && a.out != "-" && SameFile(a.out, a.timeline)) {
      throw InputError("--out and --timeline are the same file " + a.out);
    }
  }
  const ReplayInput input = LoadReplayInput(a.trace);
  const PlatformSpec spec = a.platform.Resolve(BasePlatform(input, a.replay));
  ReplayOptions options = a.replay.Options(spec);
  options.collective(a.collective.Apply(a.replay.allreduce, spec));
  if (!a.timeline.empty() && (a.timeline_epoch < 0 || a.timeline_epoch >= input.view.num_epochs())) {
    throw InputError("--timeline-epoch " + std::to_string(a.timeline_epoch) + " is not in the trace (0.." +
                     std::to_string(input.view.num_epochs() - 1) + ")");
  }
  std::unique_ptr<ProgressBar> bar;
  const ReplayResult r = ReplayEngine(options).Run(input, [&bar](int done, int total) {
    if (!bar) bar = std::make_unique<ProgressBar>("timing iteration patterns", total);
    bar->Update(done);
  });
  bar.reset();
  if (!a.timeline.empty()) {
    const MeasuredIteration measured = LoadMeasuredIteration(a.trace, a.timeline_epoch);
    const nlohmann::json timeline = IterationTimeline(r, a.timeline_epoch, &measured);
    WriteOutput(a.timeline, [&](std::ostream& out) { out << timeline.dump(1) << '\n'; });
  }
  WriteOutput(a.out, [&](std::ostream& out) {
    if (a.format == "csv") {
      WriteReplayCsv(r, out);
    } else if (a.format == "json") {
      out << ReplayJson(r).dump(1) << '\n';
    } else {
      WriteReplayTable(r, out);
    }
  });
  return kExitOk;
}

// compare-policies and advise: a replay's flags plus their own.
struct PolicyArgs {
  std::string trace;
  PlatformFlags platform;
  ReplayFlags replay;
  CollectiveFlags collective;
  std::vector<std::string> policies;  // compare-policies; empty: those that fit
  std::vector<std::string> runs;      // compare-policies: recorded runs whose accuracy to show
  std::optional<double> msdr_factor;
  std::vector<double> etas = AdvisorOptions().etas();  // advise
  double tolerance = AdvisorOptions().tolerance();
  std::optional<double> reference;
  std::string format = "table";
  std::string out;
  bool overwrite = false;

  void Add(CLI::App* cmd) {
    cmd->add_option("trace", trace, "Trace file")->required();
    platform.Add(cmd, true, true);
    replay.Add(cmd, true);
    collective.Add(cmd);
    cli::AddMsdrFactorFlag(cmd, &msdr_factor);
    cli::AddFormatFlag(cmd, &format, {"table", "json"}, kTool);
    cmd->add_option("--out", out, "Write the report here instead of stdout (a new file; --overwrite replaces one)");
    cli::AddOverwriteFlag(cmd, &overwrite);
  }

  ReplayOptions Options(const ReplayInput& input) const {
    const PlatformSpec spec = platform.Resolve(BasePlatform(input, replay));
    ReplayOptions options = replay.Options(spec);
    options.collective(collective.Apply(replay.allreduce, spec));
    options.msdr_factor(msdr_factor);
    return options;
  }
};

// Each row's accuracy from the recorded runs of its setting: the trace's
// own and --runs'; a run that counted for no row is a note, not an error.
void AddRunsAccuracy(ProjectedPolicies& p, const ReplayInput& input, const std::vector<std::string>& paths) {
  std::vector<TraceView> views;
  views.reserve(paths.size());
  for (const std::string& path : paths) views.push_back(LoadTraceView(path));
  std::vector<const TraceView*> runs = {&input.view};
  for (const TraceView& v : views) runs.push_back(&v);
  const std::vector<bool> counted = AddRecordedAccuracy(p.comparison, input.view, runs);
  for (size_t i = 0; i < views.size(); ++i) {
    if (!counted[i + 1]) {  // runs[0] is the trace itself
      p.comparison.notes.push_back("--runs " + paths[i] +
                                   ": not a run of this training (model, data, workers, batch, epochs) at a "
                                   "compared setting, or it recorded no test accuracy");
    }
  }
}

int RunComparePolicies(const PolicyArgs& a) {
  std::vector<std::string> inputs = Inputs(a.trace, a.platform.file);
  inputs.insert(inputs.end(), a.runs.begin(), a.runs.end());
  CheckOutput(a.out, OutputOptions().inputs(inputs).overwrite(a.overwrite));
  const ReplayInput input = LoadReplayInput(a.trace);
  std::vector<Policy> asked;
  for (const std::string& name : a.policies) asked.push_back(*ParsePolicy(name));
  ProjectedPolicies p = ProjectPolicies(input, a.Options(input), asked, WholeGradientRows::kProject);
  AddRunsAccuracy(p, input, a.runs);
  WriteOutput(a.out, [&](std::ostream& out) {
    if (a.format == "json") {
      std::ostringstream table;
      WritePolicyJson(p.comparison, table);
      nlohmann::json j = nlohmann::json::parse(table.str());
      j["platform"] = p.replay.platform;
      j["workers"] = p.replay.workers;
      j["replay_notes"] = p.replay.notes;
      out << j.dump(1) << '\n';
      return;
    }
    out << "Policies projected on " << p.replay.platform << " (" << p.replay.workers << " workers"
        << (p.replay.synthetic ? ", SYNTHETIC trace" : "") << "), scheme " << ToString(p.comparison.scheme) << "\n\n";
    WritePolicyTable(p.comparison, out);
    for (const std::string& note : p.replay.notes) out << "note: " << note << '\n';
  });
  return kExitOk;
}

int RunAdvise(const PolicyArgs& a) {
  CheckOutput(a.out, OutputOptions().inputs(Inputs(a.trace, a.platform.file)).overwrite(a.overwrite));
  const ReplayInput input = LoadReplayInput(a.trace);
  const Advice advice = AdviseLevels(input, a.Options(input),
                                     AdvisorOptions().etas(a.etas).tolerance(a.tolerance).reference(a.reference));
  WriteOutput(a.out, [&](std::ostream& out) {
    if (a.format == "json") {
      out << AdviceJson(advice).dump(1) << '\n';
    } else {
      WriteAdviceTable(advice, out);
    }
  });
  return kExitOk;
}

struct CalibrateArgs {
  std::vector<std::string> inputs;
  std::string out;
  std::vector<double> segments = CalibratorOptions().boundaries();
  std::string allreduce = ToString(CalibratorOptions().allreduce());
  CollectiveFlags collective;
  std::optional<double> link_gbps;
  double max_rms_error = CalibratorOptions().max_rms_error();
  bool overwrite = false;
};

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// "12.3 %": fit errors as the calibrate report prints them.
std::string PercentText(double fraction) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << fraction * 100 << " %";
  return out.str();
}

int RunCalibrate(const CalibrateArgs& a) {
  CheckOutput(a.out, OutputOptions().inputs(a.inputs).overwrite(a.overwrite));
  if (a.link_gbps && !(*a.link_gbps > 0 && std::isfinite(*a.link_gbps))) {
    throw InputError("--link-gbps must be a positive number of Gb/s");
  }
  if (!(a.max_rms_error > 0 && std::isfinite(a.max_rms_error))) {
    throw InputError("--max-rms-error must be a positive fraction (0.25 accepts fits within 25 % rms)");
  }
  // No platform to take nodes from: ranks per node as --ranks-per-node says, else 1.
  Calibrator calibrator(CalibratorOptions()
                            .boundaries(a.segments)
                            .allreduce(*ParseAllReduceAlgorithm(a.allreduce))
                            .collective(a.collective.Apply(a.allreduce, PlatformSpec()))
                            .link_gbps(a.link_gbps.value_or(0))
                            .max_rms_error(a.max_rms_error));
  for (const std::string& input : a.inputs) calibrator.AddFile(input);
  const Calibration cal = calibrator.Fit();
  // Nothing is written before both checks: a platform that misses its own
  // samples, or cannot give its own run back, would project nothing.
  calibrator.CheckFit(cal);
  const PlatformSpec spec = cal.Platform();
  spec.Validate();  // a fit the platform cannot hold fails here, before anything is written
  const std::vector<SourceReplay> replays = calibrator.CheckPlatform(spec);
  nlohmann::json platform = cal.PlatformJson(Join(a.inputs, ", "));
  for (const SourceReplay& r : replays) {
    if (!r.skipped.empty()) continue;
    platform["calibration"]["replayed"].push_back({{"trace", r.trace},
                                                   {"workers", r.workers},
                                                   {"epochs", r.epochs},
                                                   {"measured_median_step_s", r.measured_median_s},
                                                   {"replayed_median_step_s", r.replayed_median_s},
                                                   {"relative_error", r.relative_error}});
  }
  WriteOutput(a.out, [&](std::ostream& out) { out << platform.dump(1) << '\n'; });
  // With --out -, stdout carries the platform: the report goes to stderr.
  std::ostream& report = a.out == "-" ? std::cerr : std::cout;
  std::vector<std::string> per_world;
  for (const auto& [world, n] : cal.samples_per_world_size) {
    per_world.push_back(std::to_string(n) + " at " + std::to_string(world) + " ranks");
  }
  int fitted = 0;
  for (const CalibrationSegment& s : cal.segments) fitted += s.samples;
  report << "Calibrated " << (a.out == "-" ? "stdout" : a.out) << " from " << cal.samples << " collectives ("
         << Join(per_world, ", ") << "; " << DescribeAllReduce(cal.allreduce, cal.collective) << " assumed)\n"
         << "fit: duration = o + k * alpha + bytes along the rounds / B; rms relative error "
         << PercentText(cal.rms_relative_error) << " over " << fitted << " collectives of " << cal.sizes << " sizes ("
         << SizeRangeText(cal.smallest_bytes, cal.largest_bytes) << "); accepted up to " << PercentText(a.max_rms_error)
         << "\n";
  if (cal.rms_per_world_size.size() > 1) {
    std::vector<std::string> errors;
    for (const auto& [world, e] : cal.rms_per_world_size) {
      errors.push_back(PercentText(e) + " at " + std::to_string(world) + " ranks");
    }
    report << "rms relative error per world size: " << Join(errors, ", ") << "\n";
  }
  report << "o (per collective) = " << std::fixed << std::setprecision(3) << cal.collective_overhead_s * 1e6 << " us\n";
  if (cal.link_bandwidth_Bps > 0) {
    report << "links " << std::setprecision(3) << GbpsFromBytesPerSecond(cal.link_bandwidth_Bps)
           << " Gb/s; host cost h = " << cal.host_s_per_byte * 1e9 << " ns/B (1/B = 1/rate + h)\n";
  }
  report << std::defaultfloat << std::setw(14) << "message from" << std::setw(14) << "to" << std::setw(14) << "alpha_us"
         << std::setw(16) << "B_gbps" << std::setw(9) << "samples" << std::setw(12) << "rms_error" << std::setw(7)
         << "sizes"
         << "  collective bytes\n";
  for (const CalibrationSegment& s : cal.segments) {
    std::ostringstream to;
    if (std::isfinite(s.max_message_bytes)) {
      to << std::setprecision(6) << s.max_message_bytes;
    } else {
      to << "-";
    }
    report << std::setw(14) << std::setprecision(6) << s.min_message_bytes << std::setw(14) << to.str() << std::fixed
           << std::setprecision(3) << std::setw(14) << s.latency_s * 1e6 << std::setw(16)
           << GbpsFromBytesPerSecond(s.bandwidth_Bps) << std::setw(9) << s.samples << std::setw(10)
           << std::setprecision(1) << s.rms_relative_error * 100 << " %" << std::defaultfloat << std::setw(7) << s.sizes
           << "  " << SizeRangeText(s.smallest_bytes, s.largest_bytes) << "\n";
  }
  for (const SourceReplay& r : replays) {
    if (!r.skipped.empty()) {
      report << "check: " << r.trace << " not replayed (" << r.skipped << ")\n";
      continue;
    }
    report << "check: " << r.trace << " replayed on this platform at its " << r.workers << " workers: median step "
           << FormatNumber(r.replayed_median_s * 1e3, 4) << " ms, measured "
           << FormatNumber(r.measured_median_s * 1e3, 4) << " ms (" << (r.relative_error >= 0 ? "+" : "")
           << PercentText(r.relative_error) << "; accepted within " << PercentText(CalibratorOptions().max_step_error())
           << ")\n";
  }
  for (const std::string& note : cal.notes) report << "note: " << note << "\n";
  return kExitOk;
}

struct SweepArgs {
  std::string trace;
  PlatformFlags platform;
  ReplayFlags replay;
  CollectiveFlags collective;
  SweepGrid grid;
  std::vector<std::string> levels;
  std::string format = "csv";
  std::string out;
  bool overwrite = false;
  std::optional<std::string> shard;
};

std::pair<double, double> ParseLevelPair(const std::string& text) {
  const size_t colon = text.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument(text);
    size_t used_low = 0, used_high = 0;
    const double low = std::stod(text.substr(0, colon), &used_low);
    const double high = std::stod(text.substr(colon + 1), &used_high);
    if (used_low != colon || used_high != text.size() - colon - 1) throw std::invalid_argument(text);
    return {low, high};
  } catch (const std::exception&) {
    throw InputError("--levels takes LOW:HIGH pairs such as 2:1, not '" + text + "'");
  }
}

// One slice of the grid (--shard, or a Slurm array task's), streamed as
// the whole sweep is, for `merge` to join.
int RunSweepSlice(const SweepArgs& a, const ReplayInput& input, const ReplayOptions& base, const SweepShard& shard,
                  int64_t points) {
  const SweepIdentity identity = IdentifySweep(a.trace, base, a.grid);
  ProgressBar bar("sweep slice " + std::to_string(shard.index) + "/" + std::to_string(shard.count),
                  shard.Points(points));
  WriteOutput(a.out, [&](std::ostream& out) {
    SweepSliceWriter writer(out, shard, points, identity);
    RunSweepShard(
        input, base, a.grid, shard, a.replay.jobs,
        [&](int64_t point, const SweepRow& row) {
          writer.Add(point, row);
          out.flush();
        },
        [&bar](int64_t done, int64_t) { bar.Update(done); });
  });
  bar.Finish();
  return kExitOk;
}

int RunSweepCommand(SweepArgs a) {
  CheckOutput(a.out, OutputOptions().inputs(Inputs(a.trace, a.platform.file)).overwrite(a.overwrite));
  for (const std::string& pair : a.levels) a.grid.levels.push_back(ParseLevelPair(pair));
  const int64_t points = GridSize(a.grid);
  const std::optional<SweepShard> shard = a.shard ? ParseShard(*a.shard) : ShardFromSlurm(std::getenv);
  if (shard) {
    CheckShard(*shard, points);
    // JSON's numbers are not the CSV's text: slices merge into CSV only.
    if (a.format != "csv") throw InputError(shard->origin + ": slices are CSV; drop --format " + a.format);
  }
  const ReplayInput input = LoadReplayInput(a.trace);
  const PlatformSpec spec = a.platform.Resolve(BasePlatform(input, a.replay));
  ReplayOptions base = a.replay.Options(spec);
  base.collective(a.collective.Apply(a.replay.allreduce, spec));
  CheckSweep(input, base, a.grid);  // a bad point stops the sweep before it starts
  if (shard) return RunSweepSlice(a, input, base, *shard, points);
  ProgressBar bar("sweep", points);
  // Rows go out as they complete (into --out's .partial file until the
  // last): a sweep's memory does not grow with its grid.
  WriteOutput(a.out, [&](std::ostream& out) {
    SweepWriter writer(out, a.format == "json");
    RunSweep(
        input, base, a.grid, a.replay.jobs,
        [&](const SweepRow& row) {
          writer.Add(row);
          out.flush();
        },
        [&bar](int64_t done, int64_t) { bar.Update(done); });
    writer.Finish();
  });
  bar.Finish();
  return kExitOk;
}

struct MergeArgs {
  std::vector<std::string> slices;
  std::string out;
  bool overwrite = false;
};

int RunMergeCommand(const MergeArgs& a) {
  CheckOutput(a.out, OutputOptions().inputs(a.slices).overwrite(a.overwrite));
  WriteOutput(a.out, [&](std::ostream& out) { MergeSweepSlices(a.slices, out); });
  return kExitOk;
}

struct CollectiveArgs {
  PlatformFlags platform;
  int workers = 8;
  double bytes = 1e9;
  std::string op = "allreduce";
  std::string allreduce = "ring";
  std::string fidelity = "auto";
  CollectiveFlags collective;
};

int RunCollectiveCommand(const CollectiveArgs& a) {
  const PlatformSpec spec = a.platform.Resolve();
  const CollectiveOp op = *ParseCollectiveOp(a.op);
  const AllReduceAlgorithm algorithm = *ParseAllReduceAlgorithm(a.allreduce);
  const CollectiveOptions options = a.collective.Apply(a.allreduce, spec);
  const Fidelity fidelity = ResolveFidelity(*ParseFidelity(a.fidelity), a.workers);
  if (!(a.bytes >= 1) || a.bytes > 1e15) throw InputError("--bytes must be between 1 and 1e15");
  const auto bytes = static_cast<int64_t>(std::llround(a.bytes));
  const PlatformProbe probe = ProbePlatform(spec, a.workers);
  const double simulated = std::stod(RunInChildProcess([&] {
    NetworkSimulation sim(spec, a.workers, options);
    std::ostringstream s;
    s << std::setprecision(17) << sim.RunCollective(op, algorithm, bytes, fidelity);
    return s.str();
  }));
  const double analytic =
      spec.collective_overhead_s + AlphaBetaModelFor(spec, probe).Time(op, algorithm, a.bytes, a.workers, options);
  const std::string settings = op == CollectiveOp::kAllReduce ? options.Describe(algorithm) : "";
  std::cout << std::setprecision(6) << (op == CollectiveOp::kAllReduce ? a.allreduce + " " : "") << a.op << " of "
            << a.bytes << " bytes over " << a.workers << " ranks" << (settings.empty() ? "" : " (" + settings + ")")
            << " on " << spec.Describe(a.workers) << "\n"
            << "route between ring neighbours: " << probe.ring_route.latency_s * 1e6 << " us, "
            << GbpsFromBytesPerSecond(probe.ring_route.bandwidth_Bps) << " Gb/s\n"
            << std::fixed << std::setprecision(6) << "simulated (" << ToString(fidelity) << "): " << simulated
            << " s\nalpha-beta:        " << analytic << " s\n";
  // One rank sends nothing: both are 0 and there is no ratio to speak of.
  if (analytic > 0) std::cout << "simulated / alpha-beta: " << simulated / analytic << "\n";
  return kExitOk;
}

CLI::App* AddReplayCommand(CLI::App& app, ReplayArgs& a) {
  CLI::App* cmd = app.add_subcommand("replay",
                                     "Project a trace onto a cluster and an Accordion setting: time, compute, exposed "
                                     "communication, bytes and speedups against static low and static high");
  cmd->add_option("trace", a.trace, "Trace file")->required();
  a.platform.Add(cmd, true, true);
  a.replay.Add(cmd, true);
  a.collective.Add(cmd);
  cli::AddFormatFlag(cmd, &a.format, {"table", "csv", "json"}, kTool);
  cmd->add_option("--out", a.out,
                  "Write the report here instead of stdout (a new file; --overwrite replaces one; never an input)");
  cli::AddOverwriteFlag(cmd, &a.overwrite);
  cmd->add_option("--timeline", a.timeline,
                  "Also write one iteration, replayed and measured, as Chrome/Perfetto trace JSON");
  cmd->add_option("--timeline-epoch", a.timeline_epoch, "Epoch drawn in the timeline")->capture_default_str();
  return cmd;
}

CLI::App* AddComparePoliciesCommand(CLI::App& app, PolicyArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "compare-policies",
      "Project every policy's schedule (static low and high, Accordion, AdaQS or Smith et al.) and the exchanges "
      "that send every gradient - dense and the fp16 and bf16 casts - onto a cluster: floats per worker, error "
      "proxy and time to train side by side, and which is fastest (accordion-analyze compare-policies runs this)");
  a.Add(cmd);
  cli::AddPoliciesFlag(cmd, &a.policies);
  cmd->add_option("--runs", a.runs,
                  "Recorded runs of the same training under other policies or schemes (traces): each row shows "
                  "the final test accuracy its setting's runs reached beside its time (default: the trace's own)")
      ->check(CLI::ExistingFile);
  return cmd;
}

CLI::App* AddAdviseCommand(CLI::App& app, PolicyArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "advise",
      "Recommend Accordion's low and high levels and eta for a cluster from one run's error profile - the fastest "
      "projected setting whose critical epochs keep the reference level's error - or not to compress, where "
      "dense or a 16-bit cast (fp16, bf16) is projected faster; with the link rate below which compression pays "
      "(a projection, not an accuracy guarantee)");
  a.Add(cmd);
  cli::AddEtasFlag(cmd, &a.etas, cli::HelpList(AdvisorOptions().etas()));
  cmd->add_option("--tolerance", a.tolerance,
                  "How much more error than the reference the critical epochs may have (a fraction)")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--reference", a.reference,
                  "The accurate level to match in critical regimes (default: the trace's level_low)");
  return cmd;
}

CLI::App* AddCalibrateCommand(CLI::App& app, CalibrateArgs& a) {
  CLI::App* cmd = app.add_subcommand("calibrate",
                                     "Fit per-collective overhead, per-round latency and bandwidth to measured "
                                     "collectives (traces, accordion-bench-collectives files) and write a platform "
                                     "file; --allreduce is the algorithm the measured collectives ran");
  cmd->add_option("inputs", a.inputs, "Traces and accordion-bench-collectives --out files, any mix and world sizes")
      ->required();
  cmd->add_option("--out", a.out, "Platform file to write (JSON; - for stdout; a new file unless --overwrite)")
      ->required();
  cli::AddOverwriteFlag(cmd, &a.overwrite);
  cmd->add_option("--segments", a.segments, "Message-size boundaries between segments, bytes")
      ->delimiter(',')
      ->capture_default_str();
  cli::AddAllReduceFlag(cmd, &a.allreduce);
  a.collective.Add(cmd);
  cmd->add_option("--link-gbps", a.link_gbps,
                  "Nominal rate of the measured links (NIC speed, tc rate), Gb/s: separates the "
                  "hosts' per-byte cost from the links (default: unknown)");
  cmd->add_option("--max-rms-error", a.max_rms_error,
                  "Largest rms relative error of the fit to accept, a fraction; a worse fit is refused "
                  "and nothing written (the samples' times are not the network's)")
      ->capture_default_str();
  return cmd;
}

CLI::App* AddSweepCommand(CLI::App& app, SweepArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Replay a trace over bandwidth x latency x workers x eta x interval x levels, one row per point (at "
      "most " +
          std::to_string(kMaxSweepPoints) + " points); each grid flag takes a list, e.g. 10,25");
  cmd->add_option("trace", a.trace, "Trace file")->required();
  a.platform.Add(cmd, false, true);
  a.replay.Add(cmd, false);
  a.collective.Add(cmd);
  const PlatformSpec defaults;
  cli::AddBandwidthFlag(cmd, &a.grid.bandwidth_gbps,
                        cli::OverTrace(true, HelpNumber(GbpsFromBytesPerSecond(defaults.bandwidth_Bps))));
  cli::AddLatencyFlag(cmd, &a.grid.latency_us, cli::OverTrace(true, HelpNumber(defaults.latency_s * 1e6)));
  cli::AddWorkersFlag(cmd, &a.grid.workers, "the trace's; at most " + std::to_string(kMaxHosts));
  CLI::Option* etas = cli::AddEtasFlag(cmd, &a.grid.eta, cli::TracesOwn("run.eta"));
  cli::AddDeprecatedAlias(cmd, kTool, "--eta", etas);
  cli::AddIntervalFlag(cmd, &a.grid.interval, cli::TracesOwn("run.interval"));
  cmd->add_option("--levels", a.levels,
                  "LOW:HIGH level pairs, e.g. 2:1,4:1 (default: the trace's pair when it switched levels, else "
                  "the scheme's default)")
      ->delimiter(',');
  cli::AddFormatFlag(cmd, &a.format, {"csv", "json"}, kTool);
  cmd->add_option("--out", a.out,
                  "Write the rows here instead of stdout, as they complete (a new file; --overwrite "
                  "replaces one; never an input)");
  cli::AddOverwriteFlag(cmd, &a.overwrite);
  cmd->add_option("--shard", a.shard,
                  "K/N: run slice K of N (1 <= K <= N: points K-1, K-1+N, ...) and write it for merge; "
                  "default: in a Slurm job array, the task's slice (the array's tasks in ID order are 1..N), "
                  "else the whole grid; off: the whole grid");
  return cmd;
}

CLI::App* AddMergeCommand(CLI::App& app, MergeArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "Join the slices of a sweep run with --shard into the CSV one process would have written");
  cmd->add_option("slices", a.slices, "Slice files, one per slice, in any order")->required();
  cmd->add_option("--out", a.out,
                  "Write the sweep here instead of stdout (a new file; --overwrite replaces one; never a slice)");
  cli::AddOverwriteFlag(cmd, &a.overwrite);
  return cmd;
}

CLI::App* AddCollectiveCommand(CLI::App& app, CollectiveArgs& a) {
  CLI::App* cmd =
      app.add_subcommand("collective", "Time one collective on a platform, simulated and with the alpha-beta formula");
  a.platform.Add(cmd, true, false);
  cli::AddWorkersFlag(cmd, &a.workers, std::to_string(a.workers));
  cmd->add_option("--bytes", a.bytes, "Bytes (all-reduce: the buffer; all-gather: per rank)")->capture_default_str();
  cmd->add_option("--op", a.op, "allreduce, allgather or broadcast")
      ->check(CLI::IsMember({"allreduce", "allgather", "broadcast"}))
      ->capture_default_str();
  cli::AddAllReduceFlag(cmd, &a.allreduce);
  a.collective.Add(cmd);
  AddFidelityFlag(cmd, &a.fidelity);
  return cmd;
}

}  // namespace
}  // namespace accordion::sim

int main(int argc, char** argv) {
  using namespace accordion;
  using namespace accordion::sim;
  CLI::App app{"accordion-sim: replay Accordion traces on simulated clusters (SimGrid)"};
  app.require_subcommand(1);
  ReplayArgs replay;
  PolicyArgs compare, advise;
  CalibrateArgs calibrate;
  SweepArgs sweep;
  MergeArgs merge;
  CollectiveArgs collective;
  CLI::App* replay_cmd = AddReplayCommand(app, replay);
  CLI::App* compare_cmd = AddComparePoliciesCommand(app, compare);
  CLI::App* advise_cmd = AddAdviseCommand(app, advise);
  CLI::App* calibrate_cmd = AddCalibrateCommand(app, calibrate);
  CLI::App* sweep_cmd = AddSweepCommand(app, sweep);
  CLI::App* merge_cmd = AddMergeCommand(app, merge);
  AddCollectiveCommand(app, collective);
  AddVersionFlags(app, kTool);
  return RunCli(app, kTool, argc, argv, [&]() -> int {
    if (*replay_cmd) return RunReplay(replay);
    if (*compare_cmd) return RunComparePolicies(compare);
    if (*advise_cmd) return RunAdvise(advise);
    if (*calibrate_cmd) return RunCalibrate(calibrate);
    if (*sweep_cmd) return RunSweepCommand(sweep);
    if (*merge_cmd) return RunMergeCommand(merge);
    return RunCollectiveCommand(collective);
  });
}
