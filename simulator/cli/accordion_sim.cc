// accordion-sim: replay traces on simulated clusters (SimGrid) under any
// Accordion setting, calibrate platforms from measured collectives, sweep
// settings, and time single collectives.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/cli.h"
#include "common/errors.h"
#include "common/progress_bar.h"
#include "simulator/calibrator.h"
#include "simulator/child_process.h"
#include "simulator/communication_model.h"
#include "common/output_file.h"
#include "simulator/replay_report.h"
#include "simulator/sweep.h"
#include "simulator/timeline.h"

namespace accordion::sim {
namespace {

constexpr const char* kTool = "accordion-sim";

// The flags that describe a platform, on every command that needs one.
struct PlatformFlags {
  std::string file;
  std::string topology;
  std::optional<double> bandwidth_gbps, latency_us, intra_bandwidth_gbps, intra_latency_us, tcp_gamma;
  std::optional<int> hosts, gpus_per_node, hosts_per_leaf, spines;
  std::optional<std::string> network_model, crosstraffic;

  // `link_values`: whether --bandwidth-gbps / --latency-us are single values
  // here (a sweep lists them instead).
  void Add(CLI::App* cmd, bool link_values) {
    cmd->add_option("--platform", file, "Platform file: JSON (see docs/simulator.md) or SimGrid XML (.xml)");
    cmd->add_option("--topology", topology, "star, fat-tree, hierarchical or ring (default star)");
    if (link_values) {
      cmd->add_option("--bandwidth-gbps", bandwidth_gbps,
                      "Link bandwidth, Gb/s (hierarchical: the node NICs; default 10)");
      cmd->add_option("--latency-us", latency_us, "Latency per link, microseconds (default 5)");
    }
    cmd->add_option("--hosts", hosts, "Hosts in the platform (default: one per worker)");
    cmd->add_option("--gpus-per-node", gpus_per_node, "Hierarchical: devices per node (default 8)");
    cmd->add_option("--intra-bandwidth-gbps", intra_bandwidth_gbps,
                    "Hierarchical: device link, Gb/s (default 600)");
    cmd->add_option("--intra-latency-us", intra_latency_us, "Hierarchical: device link latency (default 1)");
    cmd->add_option("--hosts-per-leaf", hosts_per_leaf, "Fat-tree: hosts per leaf switch (default 16)");
    cmd->add_option("--spines", spines, "Fat-tree: spine switches (default: hosts per leaf, non-blocking)");
    cmd->add_option("--network-model", network_model, "SimGrid network model: LV08 (default) or CM02");
    cmd->add_option("--tcp-gamma", tcp_gamma,
                    "SimGrid network/TCP-gamma, bytes (default 4194304; 0: no window)");
    cmd->add_option("--crosstraffic", crosstraffic, "SimGrid network/crosstraffic: on (default) or off")
        ->check(CLI::IsMember({"on", "off"}));
  }

  PlatformSpec Resolve() const {
    PlatformSpec spec;
    if (!file.empty()) {
      if (!topology.empty()) throw InputError("give --platform or --topology, not both");
      spec = LoadPlatformFile(file);
    } else if (!topology.empty()) {
      const std::optional<Topology> t = ParseTopology(topology);
      if (!t) throw InputError("unknown topology '" + topology + "' (star, fat-tree, hierarchical, ring)");
      spec.topology = *t;
    }
    const bool xml = spec.topology == Topology::kXml;
    if (xml && (bandwidth_gbps || latency_us || intra_bandwidth_gbps || intra_latency_us)) {
      throw InputError("an XML platform has its own links: drop the bandwidth and latency flags");
    }
    if (bandwidth_gbps) spec.bandwidth_Bps = *bandwidth_gbps * 1e9 / 8;
    if (latency_us) spec.latency_s = *latency_us * 1e-6;
    if (intra_bandwidth_gbps) spec.intra_bandwidth_Bps = *intra_bandwidth_gbps * 1e9 / 8;
    if (intra_latency_us) spec.intra_latency_s = *intra_latency_us * 1e-6;
    if (hosts) spec.hosts = *hosts;
    if (gpus_per_node) spec.gpus_per_node = *gpus_per_node;
    if (hosts_per_leaf) spec.hosts_per_leaf = *hosts_per_leaf;
    if (spines) spec.spines = *spines;
    if (network_model) spec.network.model(*network_model);
    if (tcp_gamma) spec.network.tcp_gamma(*tcp_gamma);
    if (crosstraffic) spec.network.crosstraffic(*crosstraffic == "on");
    spec.Validate();
    return spec;
  }
};

// The flags that shape a replay besides the platform.
struct ReplayFlags {
  int workers = 0;
  std::string scheme;
  double eta = 0.5;
  int interval = 10;
  std::optional<double> low, high;
  std::string model = "simulate";
  std::string allreduce = "ring";
  std::string fidelity = "auto";
  bool no_memo = false;
  std::optional<double> bucket_mb;
  int jobs = 1;

  void Add(CLI::App* cmd, bool settings) {
    if (settings) {
      cmd->add_option("--workers", workers,
                      "Workers to project to (default: the trace's); per-worker batch kept");
      cmd->add_option("--eta", eta, "Accordion threshold on the norm's relative change")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      cmd->add_option("--interval", interval, "Epochs between regime checks")
          ->check(CLI::Range(1, 1000000))
          ->capture_default_str();
      cmd->add_option("--low", low, "Level in critical regimes (rank, TopK fraction or global batch)");
      cmd->add_option("--high", high, "Level outside critical regimes");
    }
    cmd->add_option("--scheme", scheme, "powersgd, topk, batch or dense (default: the trace's)")
        ->check(CLI::IsMember({"dense", "powersgd", "topk", "batch"}));
    cmd->add_option("--model", model, "simulate (SimGrid) or analytic (alpha-beta formulas)")
        ->check(CLI::IsMember({"simulate", "analytic"}))
        ->capture_default_str();
    cmd->add_option("--allreduce", allreduce, "All-reduce algorithm: ring, halving-doubling or tree")
        ->check(CLI::IsMember({"ring", "halving-doubling", "tree"}))
        ->capture_default_str();
    cmd->add_option(
           "--fidelity", fidelity,
           "full (every round of every rank), rounds (each distinct round once) or auto (full up to " +
               std::to_string(kFullFidelityMaxRanks) + " ranks)")
        ->check(CLI::IsMember({"auto", "full", "rounds"}))
        ->capture_default_str();
    cmd->add_flag("--no-memo", no_memo, "Time every epoch's iteration afresh (for checking memoisation)");
    cmd->add_option("--bucket-mb", bucket_mb, "Gradient bucket size, MiB (default: the trainer's, else 25)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--jobs", jobs, "Processes to run at once")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
  }

  ReplayOptions Options(const PlatformSpec& platform) const {
    ReplayOptions o;
    o.platform(platform)
        .workers(workers)
        .eta(eta)
        .interval(interval)
        .level_low(low)
        .level_high(high)
        .model(*ParseModelKind(model))
        .allreduce(*ParseAllReduceAlgorithm(allreduce))
        .fidelity(*ParseFidelity(fidelity))
        .memoise(!no_memo)
        .bucket_bytes(bucket_mb ? std::optional<int64_t>(std::llround(*bucket_mb * 1024 * 1024))
                                : std::nullopt)
        .jobs(jobs);
    if (!scheme.empty()) o.scheme(*ParseScheme(scheme));
    return o;
  }
};

struct ReplayArgs {
  std::string trace;
  PlatformFlags platform;
  ReplayFlags replay;
  std::string format = "table";
  std::string out;
  std::string timeline;
  int timeline_epoch = 0;
};

int RunReplay(const ReplayArgs& a) {
  const ReplayOptions options = a.replay.Options(a.platform.Resolve());
  const ReplayInput input = LoadReplayInput(a.trace);
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

struct CalibrateArgs {
  std::string trace;
  std::string out;
  std::vector<double> segments = {65536, 4194304};
  std::string allreduce = "ring";
};

int RunCalibrate(const CalibrateArgs& a) {
  Calibrator calibrator(
      CalibratorOptions().boundaries(a.segments).allreduce(*ParseAllReduceAlgorithm(a.allreduce)));
  calibrator.AddTrace(a.trace);
  const Calibration cal = calibrator.Fit();
  const nlohmann::json platform = cal.PlatformJson(a.trace);
  WriteOutput(a.out, [&](std::ostream& out) { out << platform.dump(1) << '\n'; });
  if (a.out == "-") return kExitOk;
  std::cout << "Calibrated " << a.out << " from " << cal.samples << " collectives of " << cal.world_size
            << " workers (" << a.allreduce << " all-reduce assumed)\n"
            << std::setw(14) << "message from" << std::setw(14) << "to" << std::setw(14) << "latency_us"
            << std::setw(16) << "bandwidth_gbps" << std::setw(9) << "samples" << std::setw(12)
            << "rms_error\n";
  for (const CalibrationSegment& s : cal.segments) {
    std::ostringstream to;
    if (std::isfinite(s.max_message_bytes)) {
      to << std::setprecision(6) << s.max_message_bytes;
    } else {
      to << "-";
    }
    std::cout << std::setw(14) << std::setprecision(6) << s.min_message_bytes << std::setw(14) << to.str()
              << std::fixed << std::setprecision(3) << std::setw(14) << s.latency_s * 1e6 << std::setw(16)
              << s.bandwidth_Bps * 8 / 1e9 << std::setw(9) << s.samples << std::setw(10)
              << std::setprecision(1) << s.rms_relative_error * 100 << " %\n"
              << std::defaultfloat;
  }
  for (const std::string& note : cal.notes) std::cout << "note: " << note << "\n";
  return kExitOk;
}

struct SweepArgs {
  std::string trace;
  PlatformFlags platform;
  ReplayFlags replay;
  SweepGrid grid;
  std::vector<std::string> levels;
  std::string format = "csv";
  std::string out;
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

int RunSweepCommand(SweepArgs a) {
  for (const std::string& pair : a.levels) a.grid.levels.push_back(ParseLevelPair(pair));
  const ReplayOptions base = a.replay.Options(a.platform.Resolve());
  const std::vector<SweepPoint> points = ExpandGrid(a.grid);
  const ReplayInput input = LoadReplayInput(a.trace);
  const std::vector<ReplayOptions> planned = PlanSweep(input, base, points);
  ProgressBar bar("sweep", static_cast<int64_t>(planned.size()));
  const std::vector<SweepRow> rows =
      RunSweep(input, planned, a.replay.jobs, [&bar](int done, int) { bar.Update(done); });
  bar.Finish();
  WriteOutput(a.out, [&](std::ostream& out) {
    if (a.format == "json") {
      out << SweepJson(rows).dump(1) << '\n';
    } else {
      WriteSweepCsv(rows, out);
    }
  });
  return kExitOk;
}

struct CollectiveArgs {
  PlatformFlags platform;
  int workers = 8;
  double bytes = 1e9;
  std::string op = "allreduce";
  std::string allreduce = "ring";
  std::string fidelity = "auto";
};

int RunCollectiveCommand(const CollectiveArgs& a) {
  const PlatformSpec spec = a.platform.Resolve();
  const CollectiveOp op = *ParseCollectiveOp(a.op);
  const AllReduceAlgorithm algorithm = *ParseAllReduceAlgorithm(a.allreduce);
  const Fidelity fidelity = ResolveFidelity(*ParseFidelity(a.fidelity), a.workers);
  if (!(a.bytes >= 1) || a.bytes > 1e15) throw InputError("--bytes must be between 1 and 1e15");
  const auto bytes = static_cast<int64_t>(std::llround(a.bytes));
  const PlatformProbe probe = ProbePlatform(spec, a.workers);
  const double simulated = std::stod(RunInChildProcess([&] {
    NetworkSimulation sim(spec, a.workers);
    std::ostringstream s;
    s << std::setprecision(17) << sim.RunCollective(op, algorithm, bytes, fidelity);
    return s.str();
  }));
  const double analytic = AlphaBetaModelFor(spec, probe).Time(op, algorithm, a.bytes, a.workers);
  std::cout << std::setprecision(6) << (op == CollectiveOp::kAllReduce ? a.allreduce + " " : "") << a.op
            << " of " << a.bytes << " bytes over " << a.workers << " ranks on " << spec.Describe(a.workers)
            << "\n"
            << "route between ring neighbours: " << probe.ring_route.latency_s * 1e6 << " us, "
            << probe.ring_route.bandwidth_Bps * 8 / 1e9 << " Gb/s\n"
            << std::fixed << std::setprecision(6) << "simulated (" << ToString(fidelity) << "): " << simulated
            << " s\nalpha-beta:        " << analytic << " s\n";
  // One rank sends nothing: both are 0 and there is no ratio to speak of.
  if (analytic > 0) std::cout << "simulated / alpha-beta: " << simulated / analytic << "\n";
  return kExitOk;
}

}  // namespace
}  // namespace accordion::sim

int main(int argc, char** argv) {
  using namespace accordion;
  using namespace accordion::sim;
  CLI::App app{"accordion-sim: replay Accordion traces on simulated clusters (SimGrid)"};
  app.require_subcommand(1);

  ReplayArgs replay;
  CLI::App* replay_cmd =
      app.add_subcommand("replay",
                         "Project a trace onto a cluster and an Accordion setting: time, compute, exposed "
                         "communication, bytes and speedups against static low and static high");
  replay_cmd->add_option("trace", replay.trace, "Trace file")->required();
  replay.platform.Add(replay_cmd, true);
  replay.replay.Add(replay_cmd, true);
  replay_cmd->add_option("--format", replay.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  replay_cmd->add_option("--out", replay.out, "Write the report here instead of stdout");
  replay_cmd->add_option("--timeline", replay.timeline,
                         "Also write one iteration, replayed and measured, as Chrome/Perfetto trace JSON");
  replay_cmd->add_option("--timeline-epoch", replay.timeline_epoch, "Epoch drawn in the timeline")
      ->capture_default_str();

  CalibrateArgs calibrate;
  CLI::App* calibrate_cmd =
      app.add_subcommand("calibrate",
                         "Fit latency and bandwidth per message size to a trace's measured collectives and "
                         "write a platform file");
  calibrate_cmd->add_option("trace", calibrate.trace, "Trace file with measured collectives")->required();
  calibrate_cmd->add_option("--out", calibrate.out, "Platform file to write (JSON; - for stdout)")
      ->required();
  calibrate_cmd
      ->add_option("--segments", calibrate.segments, "Message-size boundaries between segments, bytes")
      ->delimiter(',')
      ->capture_default_str();
  calibrate_cmd->add_option("--allreduce", calibrate.allreduce, "All-reduce algorithm the trainer used")
      ->check(CLI::IsMember({"ring", "halving-doubling", "tree"}))
      ->capture_default_str();

  SweepArgs sweep;
  CLI::App* sweep_cmd = app.add_subcommand(
      "sweep",
      "Replay a trace over bandwidth x latency x workers x eta x interval x levels, one row per point");
  sweep_cmd->add_option("trace", sweep.trace, "Trace file")->required();
  sweep.platform.Add(sweep_cmd, false);
  sweep.replay.Add(sweep_cmd, false);
  sweep_cmd->add_option("--bandwidth-gbps", sweep.grid.bandwidth_gbps, "Link bandwidths, Gb/s")
      ->delimiter(',');
  sweep_cmd->add_option("--latency-us", sweep.grid.latency_us, "Link latencies, us")->delimiter(',');
  sweep_cmd->add_option("--workers", sweep.grid.workers, "Worker counts")->delimiter(',');
  sweep_cmd->add_option("--eta", sweep.grid.eta, "Accordion thresholds")->delimiter(',');
  sweep_cmd->add_option("--interval", sweep.grid.interval, "Check intervals, epochs")->delimiter(',');
  sweep_cmd->add_option("--levels", sweep.levels, "LOW:HIGH level pairs, e.g. 2:1,4:1")->delimiter(',');
  sweep_cmd->add_option("--format", sweep.format, "csv or json")
      ->check(CLI::IsMember({"csv", "json"}))
      ->capture_default_str();
  sweep_cmd->add_option("--out", sweep.out, "Write the rows here instead of stdout");

  CollectiveArgs collective;
  CLI::App* collective_cmd = app.add_subcommand(
      "collective", "Time one collective on a platform, simulated and with the alpha-beta formula");
  collective.platform.Add(collective_cmd, true);
  collective_cmd->add_option("--workers", collective.workers, "Ranks")->capture_default_str();
  collective_cmd
      ->add_option("--bytes", collective.bytes, "Bytes (all-reduce: the buffer; all-gather: per rank)")
      ->capture_default_str();
  collective_cmd->add_option("--op", collective.op, "allreduce, allgather or broadcast")
      ->check(CLI::IsMember({"allreduce", "allgather", "broadcast"}))
      ->capture_default_str();
  collective_cmd->add_option("--allreduce", collective.allreduce, "ring, halving-doubling or tree")
      ->check(CLI::IsMember({"ring", "halving-doubling", "tree"}))
      ->capture_default_str();
  collective_cmd->add_option("--fidelity", collective.fidelity, "auto, full or rounds")
      ->check(CLI::IsMember({"auto", "full", "rounds"}))
      ->capture_default_str();

  AddVersionFlags(app, kTool);
  return RunCli(app, kTool, argc, argv, [&]() -> int {
    if (*replay_cmd) return RunReplay(replay);
    if (*calibrate_cmd) return RunCalibrate(calibrate);
    if (*sweep_cmd) return RunSweepCommand(sweep);
    return RunCollectiveCommand(collective);
  });
}
