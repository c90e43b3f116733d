// Runs the accordion-sim binary as a user would: outputs, files and exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "common/errors.h"
#include "simulator/alpha_beta_model.h"
#include "simulator/topology_description.h"
#include "tests/simulator/sim_test_support.h"
#include "tests/support/temp_dir_test.h"
#include "tests/support/run_command.h"

namespace accordion::sim {
namespace {

using accordion::test_support::CommandResult;
using accordion::test_support::CountLines;
using accordion::test_support::RunCommand;

const std::string kSim = std::string(ACCORDION_BIN_DIR) + "/accordion-sim";
const std::string kAnalyze = std::string(ACCORDION_BIN_DIR) + "/accordion-analyze";

class SimCli : public accordion::test_support::SuiteTempDirTest {
 protected:
  static void SetUpTestSuite() {
    SuiteTempDirTest::SetUpTestSuite();
    // Tests run inside a Slurm job array would have every sweep run a slice.
    for (const char* name : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"}) ::unsetenv(name);
    synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(12);
    o.interval = 5;
    test_support::SyntheticTrace(dir(), "mlp", o);
    o.epochs = 2;
    test_support::ExecuteSql(test_support::SyntheticTrace(dir(), "no-iterations", o), "DELETE FROM iterations;");
    test_support::ExecuteSql(test_support::SyntheticTrace(dir(), "no-collectives", o), "DELETE FROM collectives;");
    std::vector<test_support::MeasuredCollective> measured;
    for (double b = 4096; b <= 64e6; b *= 4)
      measured.push_back({CollectiveOp::kAllReduce, int64_t(b), 1e-4 + b * 1.6e-9});
    test_support::ReplaceCollectives(test_support::SyntheticTrace(dir(), "measured", o), 4, measured);
    Write("broken.json", "{\"topology\": \"star\", ");
    Write("torus.json", "{\"topology\": \"torus\"}");
    Write("zero.json", "{\"topology\": \"star\", \"bandwidth_gbps\": 0}");
    Write("fat.json", "{\"topology\": \"fat-tree\", \"hosts_per_leaf\": 4, \"bandwidth_gbps\": 25}");
    const std::string head =
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n";
    Write("two.xml", head +
                         "<zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/>"
                         "<host id=\"b\" speed=\"1Gf\"/><link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>"
                         "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>\n");
    Write("broken.xml", head + "<zone id=\"z\" routing=\"Full\"><host id=\"a\"\n");
    const std::string hosts = "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>";
    const std::string link = "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>";
    const std::string route = "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>";
    Write("duplicate-route.xml",
          head + "<zone id=\"z\" routing=\"Full\">" + hosts + link + route + route + "</zone></platform>\n");
    Write("disconnected.xml", head + "<zone id=\"z\" routing=\"Full\">" + hosts + "<host id=\"c\" speed=\"1Gf\"/>" +
                                  link + route + "</zone></platform>\n");
    // Two clusters in a Full zone with no route between them: Debian's
    // SimGrid 3.32 dereferences the missing route (SIGSEGV); the fuzzer found it.
    const std::string cluster = " speed=\"1Gf\" bw=\"10Gbps\" lat=\"5us\" bb_bw=\"40Gbps\" bb_lat=\"1us\"/>";
    Write("clusters-without-route.xml", head + "<zone id=\"world\" routing=\"Full\">" +
                                            "<cluster id=\"r0\" prefix=\"r0-\" suffix=\"\" radical=\"0-1\"" + cluster +
                                            "<cluster id=\"r1\" prefix=\"r1-\" suffix=\"\" radical=\"0-1\"" + cluster +
                                            "</zone></platform>\n");
    // A cluster of 100 million hosts (SimGrid would build them all), and two
    // of 70,000 with SimGrid's reading of "70000Gf" (its leading digits) and
    // single quotes; the fuzzer found the first kind.
    Write("huge-cluster.xml", head + "<zone id=\"world\" routing=\"Full\">" +
                                  "<cluster id=\"r0\" prefix=\"r0-\" suffix=\"\" radical=\"0-99999999\"" + cluster +
                                  "</zone></platform>\n");
    Write("two-large-clusters.xml", head + "<zone id=\"world\" routing=\"Full\">" +
                                        "<cluster id=\"r0\" prefix=\"r0-\" suffix=\"\" radical = '1-70000Gf'" +
                                        cluster + "<cluster id=\"r1\" prefix=\"r1-\" suffix=\"\" radical=\"0-69999\"" +
                                        cluster + "</zone></platform>\n");
    test_support::ExecuteSql(test_support::SyntheticTrace(dir(), "rows-past-epochs", o),
                             "DELETE FROM epoch_layers WHERE epoch = 1; DELETE FROM epochs WHERE epoch = 1; "
                             "UPDATE run SET status = 'failed';");
  }
  static void Write(const std::string& name, const std::string& text) { std::ofstream(Path(name)) << text; }
  static CommandResult Sim(const std::string& args) { return RunCommand(kSim + " " + args); }

  // Bad input: exit 2, exactly one line on stderr, nothing on stdout.
  // `env`: variables to run the tool with ("A=1 B=2").
  static void ExpectBadInput(const std::string& args, const std::string& fragment, const std::string& env = "") {
    const CommandResult r = RunCommand(env + " " + kSim + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
};

TEST_F(SimCli, VersionAndHelpEverywhere) {
  for (const std::string args :
       {"--version", "replay --version", "calibrate --version", "sweep --version", "merge --version"}) {
    const CommandResult r = Sim(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("accordion-sim 0."), std::string::npos) << r.out;
  }
  for (const std::string args :
       {"--help", "replay --help", "calibrate --help", "sweep --help", "merge --help", "collective --help"}) {
    const CommandResult r = Sim(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args;
  }
  EXPECT_NE(Sim("replay --help").out.find("--network-model"), std::string::npos);
}

// The platform flags' help reads PlatformSpec's defaults and shows them as
// they were written by hand.
TEST_F(SimCli, HelpShowsThePlatformDefaults) {
  const std::string help = Sim("replay --help").out;
  for (const std::string text :
       {"Link bandwidth, Gb/s (hierarchical: the node NICs) (default: the trace's recorded network (its probe's "
        "fit); without a probe 10)",
        "Latency per link, microseconds (default: the trace's recorded network (its probe's fit); without a probe 5)",
        "Hierarchical: devices per node (default 8; at most 1024)", "Hierarchical: device link, Gb/s (default 600)",
        "Hierarchical: device link latency (default 1)", "Fat-tree: hosts per leaf switch (default 16; at most 131072)",
        "SimGrid's TCP window (network/TCP-gamma), bytes; 0: no window (default: the recorded network's 0; without "
        "a probe 4194304)",
        "Software cost of one collective, microseconds (default 0; calibrate measures it)"}) {
    EXPECT_NE(help.find(text), std::string::npos) << text << "\n" << help;
  }
  // Without a trace there is no recorded network: PlatformSpec's alone.
  const std::string collective = Sim("collective --help").out;
  for (const std::string text : {"Latency per link, microseconds (default: 5)",
                                 "Link bandwidth, Gb/s (hierarchical: the node NICs) (default: 10)",
                                 "SimGrid's network model: LV08 or CM02 (default: LV08)"}) {
    EXPECT_NE(collective.find(text), std::string::npos) << text << "\n" << collective;
  }
}

// The flags of every topology's parameters come from its description:
// each one is offered, and a value given on the command line reaches the
// platform the replay describes.
TEST_F(SimCli, EveryTopologyParameterIsAFlagThatReachesThePlatform) {
  const std::string help = Sim("replay --help").out;
  for (const TopologyDescription& d : AllTopologies()) {
    EXPECT_NE(help.find(d.name), std::string::npos) << d.name;
    for (const TopologyParameter& p : d.parameters) {
      EXPECT_NE(help.find(p.Flag() + " "), std::string::npos) << p.Flag();
      EXPECT_NE(help.find(p.Help(d.title)), std::string::npos) << p.Help(d.title);
    }
  }
  const nlohmann::json out = nlohmann::json::parse(
      Sim("replay " + Path("mlp.trace") +
          " --timing analytic --workers 6 --topology hierarchical --gpus-per-node 3 --intra-bandwidth-gbps 123 "
          "--format json")
          .out);
  const std::string platform = out.dump();
  EXPECT_NE(platform.find("2 nodes x 3 devices (intra 123 Gb/s"), std::string::npos) << platform;
}

TEST_F(SimCli, BadPlatformsExitTwoWithOneLine) {
  const std::string t = Path("mlp.trace");
  ExpectBadInput("replay " + t + " --platform " + Path("broken.json"), "not valid JSON");
  ExpectBadInput("replay " + t + " --platform " + Path("torus.json"), "unknown topology 'torus'");
  ExpectBadInput("replay " + t + " --topology torus", "unknown topology 'torus'");
  ExpectBadInput("replay " + t + " --platform " + Path("zero.json"), "bandwidth must be a positive number");
  ExpectBadInput("replay " + t + " --bandwidth-gbps 0", "bandwidth must be a positive number");
  ExpectBadInput("replay " + t + " --bandwidth-gbps -5", "bandwidth must be a positive number");
  ExpectBadInput("replay " + t + " --latency-us -1", "latency must be zero or positive");
  ExpectBadInput("replay " + t + " --workers 8 --hosts 4", "8 ranks do not fit on 4 hosts");
  ExpectBadInput("replay " + t + " --platform " + Path("two.xml") + " --workers 4",
                 "4 ranks do not fit on the 2 hosts");
  ExpectBadInput("replay " + t + " --platform " + Path("broken.xml") + " --workers 1", "Parse error");
  ExpectBadInput("replay " + t + " --platform " + Path("missing.json"), "cannot open platform file");
  ExpectBadInput("replay " + t + " --network-model NS3", "unknown network model 'NS3'");
  ExpectBadInput("replay " + t + " --platform " + Path("fat.json") + " --topology star", "not both");
  ExpectBadInput("collective --workers 4 --bytes 0", "--bytes");
}

TEST_F(SimCli, BadTracesAndFlagsExitTwoWithOneLine) {
  const std::string t = Path("mlp.trace");
  ExpectBadInput("replay " + Path("nope.trace"), "no such file");
  ExpectBadInput("replay " + Path("no-iterations.trace"), "no per-iteration timings");
  ExpectBadInput("calibrate " + Path("no-collectives.trace") + " --out " + Path("never.json"),
                 "no measured collectives");
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
  ExpectBadInput("replay " + t + " --scheme topk --low 2", "TopK fraction");
  ExpectBadInput("replay " + t + " --fidelity exact", "--fidelity");
  ExpectBadInput("replay " + t + " --timeline " + Path("t.json") + " --timeline-epoch 99", "--timeline-epoch 99");
  ExpectBadInput("sweep " + t + " --levels 2-1", "LOW:HIGH");
  // Named by the flag that gave them, before the CSV header (nothing on stdout).
  ExpectBadInput("sweep " + t + " --levels 0:1", "--levels 0:1: the low level must be a PowerSGD rank");
  ExpectBadInput("sweep " + t + " --scheme batch --levels 1024:128",
                 "--levels 1024:128: the batch scheme grows the batch outside critical regimes");
  ExpectBadInput("sweep " + t + " --etas 0.3,0", "--etas: must be above 0, not 0");
  ExpectBadInput("sweep " + t + " --shard 1/0", "--shard 1/0: N, the number of slices, must be at least 1");
  // Beyond the plausibility limits every rate and latency has.
  ExpectBadInput("replay " + t + " --bandwidth-gbps 1e-12", "bandwidth must be between 1e-06 and 1e+06 Gb/s");
  ExpectBadInput("replay " + t + " --latency-us 1e300", "latency must be at most 1e+07 us");
  ExpectBadInput("sweep " + t + " --platform " + Path("two.xml") + " --bandwidth-gbps 1,2", "XML platform");
  ExpectBadInput("frobnicate", "unknown command 'frobnicate'");
  // No partial output that looks complete.
  ExpectBadInput("replay " + t + " --out " + Path("report.csv") + " --workers 8 --hosts 2", "do not fit");
  EXPECT_FALSE(std::filesystem::exists(Path("report.csv")));
  EXPECT_FALSE(std::filesystem::exists(Path("report.csv.partial")));
}

TEST_F(SimCli, ReplayWritesTableCsvJsonAndATimeline) {
  const std::string t = Path("mlp.trace");
  const CommandResult table = Sim("replay " + t + " --workers 8 --bandwidth-gbps 1 --interval 5");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Accordion rank 2 / rank 1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("8 workers (trace: 4)"), std::string::npos);

  const CommandResult csv = Sim("replay " + t + " --format csv --interval 5 --out " + Path("r.csv") + " --timeline " +
                                Path("timeline.json") + " --timeline-epoch 2");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::ifstream in(Path("r.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 1 + 3 * 12 + 3);
  const nlohmann::json timeline = nlohmann::json::parse(std::ifstream(Path("timeline.json")));
  EXPECT_GT(timeline.at("traceEvents").size(), 10u);

  const CommandResult json = Sim("replay " + t + " --format json --timing analytic --interval 5");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("communication_model"), "analytic");
  EXPECT_EQ(j.at("schedules").at("accordion").at("epochs").size(), 12u);
  EXPECT_GE(j.at("speedup_vs_static_low").get<double>(), 1.0);
  EXPECT_TRUE(j.contains("measured_vs_replayed"));
}

// --timing was --model until "model" meant three things: the old spelling
// still replays the same, says it is deprecated, and is not hidden
// behind the new one when both are given.
TEST_F(SimCli, TheOldModelFlagIsTimingAndSaysSo) {
  const std::string t = "replay " + Path("mlp.trace") + " --format json --interval 5 ";
  const CommandResult now = Sim(t + "--timing analytic");
  const CommandResult old = Sim(t + "--model analytic");
  ASSERT_EQ(now.exit_code, 0) << now.err;
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(nlohmann::json::parse(old.out).at("communication_model"), "analytic");
  EXPECT_EQ(nlohmann::json::parse(old.out).at("schedules"), nlohmann::json::parse(now.out).at("schedules"));
  EXPECT_NE(old.err.find("accordion-sim: note: --model is deprecated; use --timing"), std::string::npos) << old.err;
  EXPECT_EQ(now.err.find("deprecated"), std::string::npos) << now.err;
  EXPECT_EQ(Sim("replay --help").out.find("--model"), std::string::npos);
  ExpectBadInput(t + "--timing analytic --model recorded", "give only --timing");
}

TEST_F(SimCli, CalibratedPlatformsFeedReplays) {
  const CommandResult cal =
      Sim("calibrate " + Path("measured.trace") + " --out " + Path("cal.json") + " --segments 65536");
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("Calibrated"), std::string::npos) << cal.out;
  const nlohmann::json platform = nlohmann::json::parse(std::ifstream(Path("cal.json")));
  EXPECT_EQ(platform.at("topology"), "star");
  EXPECT_FALSE(platform.contains("hosts"));  // grows to the replay's worker count
  // 1.6 ns per byte along a 4-rank ring's rounds: B = 1 / 1.6e-9 * (3/2) / (3/4)... in the fit's terms,
  // duration = 1e-4 + b * 1.6e-9 = 6 alpha + 1.5 b / B, so B = 1.5 / 1.6e-9 bytes/s.
  EXPECT_NEAR(platform.at("segments").back().at("bandwidth_gbps").get<double>(), 1.5 / 1.6e-9 * 8 / 1e9, 0.05);
  const CommandResult replay = Sim("replay " + Path("mlp.trace") + " --platform " + Path("cal.json") + " --interval 5");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find("calibrated message-size segments"), std::string::npos) << replay.out;
  // Calibrated on 4 workers, asked about 32.
  const CommandResult bigger =
      Sim("replay " + Path("mlp.trace") + " --platform " + Path("cal.json") + " --workers 32 --interval 5");
  EXPECT_EQ(bigger.exit_code, 0) << bigger.err;
  EXPECT_NE(bigger.out.find("star of 32 hosts"), std::string::npos) << bigger.out;
}

// Traces and accordion-bench-collectives files in one fit; a link rate
// turns the fitted bandwidth into the links' rate plus the hosts' cost,
// which a replay at another bandwidth keeps.
TEST_F(SimCli, CalibrateMixesTracesAndBenchmarkFilesAndKeepsTheHostCost) {
  // measured.trace: 4 ranks, 1e-4 s + 1.6 ns per byte = o + 6 alpha + 1.5 b / B
  // with o = 40 us, alpha = 10 us, B = 0.9375e9 B/s; the same network at 2 ranks:
  nlohmann::json samples = nlohmann::json::array();
  for (double b = 4096; b <= 64e6; b *= 4) {
    samples.push_back({{"op", "allreduce"},
                       {"world_size", 2},
                       {"bytes", int64_t(b)},
                       {"median_s", 40e-6 + 2 * 10e-6 + b / 0.9375e9}});
  }
  Write("bench2.json", nlohmann::json{{"format", "accordion-bench-collectives"}, {"samples", samples}}.dump());
  const CommandResult cal = Sim("calibrate " + Path("measured.trace") + " " + Path("bench2.json") + " --out " +
                                Path("mixed.json") + " --segments 1e12 --link-gbps 10");
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("7 at 2 ranks, 7 at 4 ranks"), std::string::npos) << cal.out;
  EXPECT_NE(cal.out.find("o (per collective) = 40.000 us"), std::string::npos) << cal.out;
  EXPECT_NE(cal.out.find("host cost h = 0.267 ns/B"), std::string::npos) << cal.out;
  const nlohmann::json platform = nlohmann::json::parse(std::ifstream(Path("mixed.json")));
  EXPECT_NEAR(platform.at("collective_overhead_us").get<double>(), 40, 1e-6);
  EXPECT_NEAR(platform.at("host_ns_per_byte").get<double>(), 1e9 / 0.9375e9 - 0.8, 1e-6);
  EXPECT_NEAR(platform.at("bandwidth_gbps").get<double>(), 10, 1e-9);  // the rate; h brings it to B
  const CommandResult replay =
      Sim("replay " + Path("mlp.trace") + " --platform " + Path("mixed.json") + " --bandwidth-gbps 5 --interval 5");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  // 1 / (1/5 Gb/s + 0.2667 ns/B): 4.286 Gb/s, not 7.5 Gb/s x 5/10.
  EXPECT_NE(replay.out.find("links deliver 4.286"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("collective overhead 40 µs"), std::string::npos) << replay.out;

  ExpectBadInput("calibrate " + Path("bench2.json") + " --out " + Path("never.json") + " --link-gbps 0",
                 "--link-gbps must be a positive");
  ExpectBadInput("calibrate " + Path("mlp.trace") + " " + Path("broken.json") + " --out " + Path("never.json"),
                 "not valid JSON");
  ExpectBadInput("replay " + Path("mlp.trace") + " --host-ns-per-byte -1", "host cost per byte");
  ExpectBadInput("replay " + Path("mlp.trace") + " --host-ns-per-byte 5000", "below 1000 ns/B");
  ExpectBadInput("replay " + Path("mlp.trace") + " --collective-overhead-us 2e7", "below 10 s");
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
}

// calibrate takes every algorithm --allreduce does, with the same settings
// flags: benchmark files of NCCL's ring over 4 channels give the network back.
TEST_F(SimCli, CalibrateTakesEveryAllReduceAndItsSettings) {
  const AlphaBetaModel network(20e-6, 2e9);
  const CollectiveOptions four = CollectiveOptions().channels(4).chunk_bytes(128 * 1024);
  nlohmann::json samples = nlohmann::json::array();
  for (int world : {2, 4, 8}) {
    for (double b = 4096; b <= 64e6; b *= 4) {
      samples.push_back({{"op", "allreduce"},
                         {"world_size", world},
                         {"bytes", int64_t(b)},
                         {"median_s", 50e-6 + network.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kNcclRing, b,
                                                           world, four)}});
    }
  }
  Write("nccl.json", nlohmann::json{{"format", "accordion-bench-collectives"}, {"samples", samples}}.dump());
  const CommandResult cal = Sim("calibrate " + Path("nccl.json") + " --out " + Path("nccl-cal.json") +
                                " --segments 1e12 --allreduce nccl-ring --nccl-channels 4 --nccl-chunk-kib 128");
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("nccl-ring all-reduce (4 channels, 128 KiB chunks) assumed"), std::string::npos) << cal.out;
  EXPECT_NE(cal.out.find("o (per collective) = 50.000 us"), std::string::npos) << cal.out;
  const nlohmann::json platform = nlohmann::json::parse(std::ifstream(Path("nccl-cal.json")));
  EXPECT_NEAR(platform.at("bandwidth_gbps").get<double>(), 16, 1e-6);
  EXPECT_EQ(platform.at("calibration").at("allreduce").at("channels"), 4);
  // The settings go with their algorithms, and nodes must be whole.
  ExpectBadInput("calibrate " + Path("nccl.json") + " --out " + Path("never.json") + " --nccl-channels 4",
                 "settings of --allreduce nccl-ring and nccl-tree, not ring");
  ExpectBadInput("calibrate " + Path("nccl.json") + " --out " + Path("never.json") +
                     " --allreduce hierarchical --ranks-per-node 3",
                 "4 ranks are not a multiple of 3 ranks per node");
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
}

// calibrate says how well its fit matches the samples, and replays the
// trace it came from on the platform, before writing it.
TEST_F(SimCli, CalibratePrintsItsFitQualityAndItsCheck) {
  const std::string measured = Path("measured.trace");
  const CommandResult cal = Sim("calibrate " + measured + " --out " + Path("quality.json") + " --segments 65536");
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("rms relative error 0.0 % over 7 collectives of 7 sizes (4 KiB to 16 MiB); accepted up "
                         "to 25.0 %"),
            std::string::npos)
      << cal.out;
  EXPECT_NE(cal.out.find("sizes  collective bytes"), std::string::npos) << cal.out;  // per segment
  EXPECT_NE(cal.out.find("check: " + measured + " replayed on this platform at its 4 workers: median step "),
            std::string::npos)
      << cal.out;
  const nlohmann::json platform = nlohmann::json::parse(std::ifstream(Path("quality.json")));
  EXPECT_EQ(platform.at("calibration").at("sizes"), 7);
  const nlohmann::json& replayed = platform.at("calibration").at("replayed").at(0);
  EXPECT_EQ(replayed.at("workers"), 4);
  EXPECT_LT(std::fabs(replayed.at("relative_error").get<double>()), 0.1);
  // With --out -, stdout is the platform alone and the report goes to stderr.
  const CommandResult piped = Sim("calibrate " + measured + " --out - --segments 65536");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(nlohmann::json::parse(piped.out).at("calibration").at("sizes"), 7);
  EXPECT_NE(piped.err.find("rms relative error 0.0 %"), std::string::npos) << piped.err;
}

// A fit worse than 25 % rms is refused in one line that names its error
// and the likely cause, and nothing is written; --max-rms-error accepts it.
TEST_F(SimCli, CalibrateRefusesANoisyFitInOneLine) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(2);
  const std::string noisy = test_support::SyntheticTrace(dir(), "noisy", o);
  // PowerSGD's factors in training: three sizes, times scattered by the hosts.
  std::vector<test_support::MeasuredCollective> collectives;
  for (int i = 0; i < 20; ++i) {
    for (int64_t bytes : {1536, 4608, 9216}) {
      const double scatter = i % 3 == 0 ? 2.5 : i % 3 == 1 ? 0.5 : 1.0;
      collectives.push_back({CollectiveOp::kAllReduce, bytes, (100e-6 + static_cast<double>(bytes) * 1e-8) * scatter});
    }
  }
  test_support::ReplaceCollectives(noisy, 4, collectives);
  const CommandResult accepted = Sim("calibrate " + noisy + " --out - --max-rms-error 5");
  ASSERT_EQ(accepted.exit_code, 0) << accepted.err;
  const double rms = nlohmann::json::parse(accepted.out).at("calibration").at("rms_relative_error").get<double>();
  ASSERT_GT(rms, 0.25);
  std::ostringstream percent;
  percent << std::fixed << std::setprecision(1) << rms * 100 << " % rms";
  const std::string refused = "calibrate " + noisy + " --out " + Path("never.json");
  ExpectBadInput(refused, "misses its 60 collectives by " + percent.str());
  ExpectBadInput(refused,
                 "too few distinct message sizes in a training trace (3 sizes, 1.5 KiB to 9 KiB): their times are "
                 "dominated by host noise");
  ExpectBadInput(refused, "accordion-bench-collectives");
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
  ExpectBadInput(refused + " --max-rms-error 0", "--max-rms-error must be a positive fraction");
}

// A platform that fits its samples but cannot give back the run it came
// from is refused: the trace's collectives say 5 ms each, its steps had no
// room for that.
TEST_F(SimCli, CalibrateRefusesAPlatformThatCannotGiveItsTraceBack) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(2);
  const std::string slow = test_support::SyntheticTrace(dir(), "slow", o);
  std::vector<test_support::MeasuredCollective> collectives;
  for (double b = 4096; b <= 64e6; b *= 4)
    collectives.push_back({CollectiveOp::kAllReduce, int64_t(b), 5e-3 + b * 1.6e-9});
  test_support::ReplaceCollectives(slow, 4, collectives);
  for (const std::string flags : {"", " --max-rms-error 1"}) {
    ExpectBadInput("calibrate " + slow + " --out " + Path("never.json") + flags,
                   "the calibrated platform does not give " + slow + " back: replayed on it at its 4 workers");
  }
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
}

TEST_F(SimCli, SweepWritesOneRowPerPoint) {
  const CommandResult r =
      Sim("sweep " + Path("mlp.trace") + " --bandwidth-gbps 1,10 --workers 4,8 --levels 2:1,4:1 --interval 5 --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 1 + 8);
  EXPECT_EQ(r.out.rfind("bandwidth_gbps,latency_us,workers,eta,interval,level_low,level_high,", 0), 0u);
  EXPECT_NE(r.err.find("sweep ["), std::string::npos);  // the progress bar's last line
}

// The environment of task `id` of a Slurm job array of tasks min..max.
std::string SlurmTask(int id, int min, int max) {
  return "SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " SLURM_ARRAY_TASK_MIN=" + std::to_string(min) +
         " SLURM_ARRAY_TASK_MAX=" + std::to_string(max) +
         " SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=" + std::to_string(max - min + 1);
}

// A sweep in three slices - two by --shard, one as the middle task of a
// Slurm array whose IDs start at 10 - merged in any order is the
// one-process sweep's CSV, byte for byte.
TEST_F(SimCli, SlicesOfASweepMergeIntoTheOneProcessCsv) {
  const std::string d = Path("sliced");
  std::filesystem::remove_all(d);
  std::filesystem::create_directory(d);
  const std::string sweep = kSim + " sweep " + Path("mlp.trace") +
                            " --bandwidth-gbps 1,10 --workers 4,8 --levels 2:1,4:1 --interval 5 --jobs 2";
  const CommandResult whole = RunCommand(sweep + " --out " + d + "/whole.csv");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const CommandResult one = RunCommand(sweep + " --shard 1/3 --out " + d + "/s1.csv");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.err.find("sweep slice 1/3 ["), std::string::npos) << one.err;  // the progress bar
  const CommandResult two = RunCommand(SlurmTask(11, 10, 12) + " " + sweep + " --out " + d + "/s2.csv");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.err.find("sweep slice 2/3 ["), std::string::npos) << two.err;
  const CommandResult three = RunCommand(sweep + " --shard 3/3 --out " + d + "/s3.csv");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  // 8 points: 3, 3 and 2 rows under the slice's line and columns.
  EXPECT_EQ(CountLines(accordion::test_support::ReadFile(d + "/s1.csv")), 2 + 3);
  EXPECT_EQ(CountLines(accordion::test_support::ReadFile(d + "/s2.csv")), 2 + 3);
  EXPECT_EQ(CountLines(accordion::test_support::ReadFile(d + "/s3.csv")), 2 + 2);

  const std::string expected = accordion::test_support::ReadFile(d + "/whole.csv");
  ASSERT_EQ(CountLines(expected), 1 + 8);
  const std::string slices = " " + d + "/s3.csv " + d + "/s1.csv " + d + "/s2.csv";
  const CommandResult merged = Sim("merge" + slices + " --out " + d + "/merged.csv");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_TRUE(merged.out.empty()) << merged.out;
  EXPECT_EQ(accordion::test_support::ReadFile(d + "/merged.csv"), expected);
  EXPECT_EQ(Sim("merge" + slices).out, expected);  // to stdout

  // The output rules: never over a slice, over an old file only when told.
  ExpectBadInput("merge" + slices + " --out " + d + "/s1.csv --overwrite", "is the input");
  ExpectBadInput("merge" + slices + " --out " + d + "/merged.csv", "--overwrite replaces it");
  EXPECT_EQ(Sim("merge" + slices + " --out " + d + "/merged.csv --overwrite").exit_code, 0);
  EXPECT_EQ(accordion::test_support::ReadFile(d + "/merged.csv"), expected);
}

// A Slurm array task's slice comes from its environment; --shard wins over
// it, and --shard off runs the whole grid.
TEST_F(SimCli, SlurmArrayTasksRunTheirSlice) {
  const std::string sweep = kSim + " sweep " + Path("mlp.trace") + " --timing analytic --workers 2,4,8,16,32";
  const std::string whole = Sim("sweep " + Path("mlp.trace") + " --timing analytic --workers 2,4,8,16,32").out;
  ASSERT_EQ(CountLines(whole), 1 + 5);
  auto rows = [](const std::string& text) {  // the rows' points
    std::vector<std::string> points;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line[0] != '#' && line.rfind("point,", 0) != 0) points.push_back(line.substr(0, line.find(',')));
    }
    return points;
  };
  // --array=1-2 and --array=0-1: the second task runs points 1 and 3.
  for (const std::string& env : {SlurmTask(2, 1, 2), SlurmTask(1, 0, 1)}) {
    const CommandResult r = RunCommand(env + " " + sweep);
    ASSERT_EQ(r.exit_code, 0) << env << "\n" << r.err;
    EXPECT_NE(r.out.find(" sweep slice 2/2 of 5 points; "), std::string::npos) << r.out;
    EXPECT_EQ(rows(r.out), (std::vector<std::string>{"1", "3"})) << r.out;
  }
  EXPECT_EQ(rows(RunCommand(SlurmTask(1, 0, 1) + " " + sweep + " --shard 3/3").out), (std::vector<std::string>{"2"}));
  const CommandResult off = RunCommand(SlurmTask(1, 0, 1) + " " + sweep + " --shard off");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out, whole);
}

// A slice that cannot be is refused in one line, before anything is written.
TEST_F(SimCli, BadSlicesAreRefusedBeforeAnythingIsWritten) {
  const std::string out = Path("never-sliced.csv");
  const std::string t = "sweep " + Path("mlp.trace") + " --timing analytic --workers 2,4,8 --out " + out;
  for (const std::string bad : {"0/3", "4/3", "1/0", "3", "a/b", "1/3/3", "2.5/3"}) {
    ExpectBadInput(t + " --shard " + bad, "--shard " + bad);
  }
  ExpectBadInput(t + " --shard=-1/3", "--shard -1/3");
  ExpectBadInput(t + " --shard 4/4", "the grid has 3 points, too few for 4 slices");
  ExpectBadInput(t + " --shard 1/3 --format json", "slices are CSV");
  ExpectBadInput(t, "SLURM_ARRAY_TASK_COUNT is not", "SLURM_ARRAY_TASK_ID=2");
  ExpectBadInput(t, "SLURM_ARRAY_TASK_MIN is not", "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3");
  ExpectBadInput(t, "an array of one task", SlurmTask(5, 5, 5));
  ExpectBadInput(t, "not MIN, MIN+STEP", SlurmTask(5, 1, 3));
  ExpectBadInput(t, "too few for 4 slices", SlurmTask(1, 1, 4));
  ExpectBadInput(t + " --format json", "slices are CSV", SlurmTask(1, 1, 3));
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

// Slices of different sweeps, missing, given twice or with rows of another
// slice do not merge; nothing is written.
TEST_F(SimCli, MergeRefusesSlicesThatDoNotMakeOneSweep) {
  const std::string d = Path("refused");
  std::filesystem::remove_all(d);
  std::filesystem::create_directory(d);
  auto slice = [&](const std::string& name, const std::string& args) {
    const CommandResult r = Sim("sweep " + args + " --timing analytic --out " + d + "/" + name);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    return " " + d + "/" + name;
  };
  const std::string grid = Path("mlp.trace") + " --workers 2,4,8";
  const std::string s1 = slice("s1.csv", grid + " --shard 1/3"), s2 = slice("s2.csv", grid + " --shard 2/3"),
                    s3 = slice("s3.csv", grid + " --shard 3/3");
  const std::string m = " --out " + d + "/merged.csv";
  ExpectBadInput("merge" + s1 + s3 + m, "1 of the sweep's 3 slices missing: 2");
  ExpectBadInput("merge" + s1 + s2 + s2 + s3 + m, "slice 2/3 is given twice");
  ExpectBadInput("merge" + s1 + slice("cv.csv", grid + " --straggler-cv 0.1 --shard 2/3") + s3 + m,
                 "slices of different sweeps: their options differ");
  ExpectBadInput("merge" + s1 + slice("grid.csv", Path("mlp.trace") + " --workers 2,4,16 --shard 2/3") + s3 + m,
                 "their grids differ");
  ExpectBadInput("merge" + s1 + slice("trace.csv", Path("measured.trace") + " --workers 2,4,8 --shard 2/3") + s3 + m,
                 "their traces differ");
  ExpectBadInput("merge" + s1 + slice("of2.csv", grid + " --shard 2/2") + s3 + m, "their slice counts (3, 2) differ");
  // Slice 2 with slice 3's row added: overlapping rows.
  const std::string rows3 = accordion::test_support::ReadFile(d + "/s3.csv");
  std::ofstream(d + "/overlap.csv") << accordion::test_support::ReadFile(d + "/s2.csv")
                                    << rows3.substr(rows3.rfind("\n2,") + 1);
  ExpectBadInput("merge" + s1 + " " + d + "/overlap.csv" + s3 + m, "has rows past slice 2/3's 1");
  const std::string whole = slice("whole.csv", grid);
  ExpectBadInput("merge" + s1 + s2 + s3 + whole + m, "is not a sweep slice");
  EXPECT_FALSE(std::filesystem::exists(d + "/merged.csv"));
  EXPECT_FALSE(std::filesystem::exists(d + "/merged.csv.partial"));
  const CommandResult merged = Sim("merge" + s2 + s1 + s3 + m);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(accordion::test_support::ReadFile(d + "/merged.csv"), accordion::test_support::ReadFile(whole.substr(1)));
}

TEST_F(SimCli, CollectiveComparesTheSimulationWithTheFormula) {
  const CommandResult r =
      Sim("collective --workers 8 --bytes 1e8 --network-model CM02 --tcp-gamma 0 --crosstraffic off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("simulated / alpha-beta: 1.000000"), std::string::npos) << r.out;
}

TEST_F(SimCli, CollectiveRunsNcclsAlgorithmsAndTheHierarchicalOne) {
  const std::string exact = " --network-model CM02 --tcp-gamma 0 --crosstraffic off";
  const CommandResult tree = Sim("collective --workers 16 --bytes 1e7 --allreduce nccl-tree" + exact);
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.out.find("nccl-tree allreduce of 1e+07 bytes over 16 ranks (2 channels, 512 KiB chunks)"),
            std::string::npos)
      << tree.out;
  EXPECT_NE(tree.out.find("simulated / alpha-beta: 1.000000"), std::string::npos) << tree.out;
  const CommandResult ring =
      Sim("collective --workers 16 --bytes 1e7 --allreduce nccl-ring --nccl-channels 4 --nccl-chunk-kib 64" + exact);
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_NE(ring.out.find("(4 channels, 64 KiB chunks)"), std::string::npos) << ring.out;
  EXPECT_NE(ring.out.find("simulated / alpha-beta: 1.000000"), std::string::npos) << ring.out;
  // On the hierarchical topology the nodes are the platform's, and the
  // formula prices the device links inside them.
  const CommandResult hier =
      Sim("collective --workers 32 --bytes 1e7 --allreduce hierarchical --topology hierarchical" + exact);
  ASSERT_EQ(hier.exit_code, 0) << hier.err;
  EXPECT_NE(hier.out.find("(8 ranks per node)"), std::string::npos) << hier.out;
  EXPECT_NE(hier.out.find("simulated / alpha-beta: 1.000000"), std::string::npos) << hier.out;
}

double ExposedSeconds(const CommandResult& r) {
  const nlohmann::json j = nlohmann::json::parse(r.out);
  return j.at("schedules").at("accordion").at("total").at("exposed_comm_s").get<double>();
}

TEST_F(SimCli, ReplayTakesNcclsSettings) {
  const std::string t = Path("mlp.trace") +
                        " --workers 8 --interval 5 --bandwidth-gbps 0.1 --latency-us 100 --format json "
                        "--allreduce nccl-ring";
  const CommandResult four = Sim("replay " + t + " --nccl-channels 4");
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_NE(four.out.find("nccl-ring all-reduce"), std::string::npos);
  // Dense gradients in 1 KiB chunks: many more pipeline waves, each paying
  // latency - in the child processes that time the patterns too.
  for (const std::string model : {"simulate", "analytic"}) {
    const std::string dense = t + " --scheme dense --timing " + model;
    const CommandResult base = Sim("replay " + dense);
    const CommandResult tiny = Sim("replay " + dense + " --nccl-chunk-kib 1");
    ASSERT_EQ(base.exit_code, 0) << base.err;
    ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
    EXPECT_GT(ExposedSeconds(tiny), 1.02 * ExposedSeconds(base)) << model;
  }
}

// The report names the all-reduce with the settings it ran under, in the
// table's model line and as JSON.
TEST_F(SimCli, ReplayReportsTheAllReducesSettings) {
  const std::string t = Path("mlp.trace") + " --interval 5 --timing analytic";
  const CommandResult table = Sim("replay " + t + " --allreduce nccl-ring --nccl-channels 4 --nccl-chunk-kib 64");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("timing:   analytic alpha-beta model, nccl-ring all-reduce (4 channels, 64 KiB chunks)"),
            std::string::npos)
      << table.out;
  const CommandResult tree = Sim("replay " + t + " --allreduce nccl-tree --format json");
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_EQ(nlohmann::json::parse(tree.out).at("allreduce"),
            (nlohmann::json{
                {"algorithm", "nccl-tree"}, {"chunk_bytes", 512 * 1024}, {"channels", 2}, {"ranks_per_node", 1}}));
  // Ranks per node: the platform's nodes, or the flag.
  const CommandResult nodes =
      Sim("replay " + t + " --workers 16 --topology hierarchical --allreduce hierarchical --format json");
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  const nlohmann::json j = nlohmann::json::parse(nodes.out);
  EXPECT_EQ(j.at("allreduce"), (nlohmann::json{{"algorithm", "hierarchical"}, {"ranks_per_node", 8}}));
  EXPECT_NE(j.at("communication").get<std::string>().find("hierarchical all-reduce (8 ranks per node)"),
            std::string::npos)
      << j.at("communication");
  const CommandResult four = Sim("replay " + t + " --workers 16 --allreduce hierarchical --ranks-per-node 4");
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_NE(four.out.find("hierarchical all-reduce (4 ranks per node)"), std::string::npos) << four.out;
  // The ring has no settings: its name alone.
  const CommandResult ring = Sim("replay " + t + " --format json");
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_EQ(nlohmann::json::parse(ring.out).at("allreduce"), (nlohmann::json{{"algorithm", "ring"}}));
}

TEST_F(SimCli, BadCollectiveSettingsExitTwoWithOneLine) {
  const std::string t = Path("mlp.trace");
  ExpectBadInput("replay " + t + " --nccl-channels 4", "settings of --allreduce nccl-ring and nccl-tree, not ring");
  ExpectBadInput("replay " + t + " --allreduce nccl-ring --nccl-channels 0", "channels must be between 1 and 64");
  ExpectBadInput("replay " + t + " --allreduce nccl-ring --ranks-per-node 2",
                 "--ranks-per-node is a setting of --allreduce hierarchical and nccl-tree, not nccl-ring");
  ExpectBadInput("collective --workers 12 --allreduce hierarchical --ranks-per-node 8",
                 "12 ranks are not a multiple of 8 ranks per node");
  ExpectBadInput("replay " + t + " --workers 12 --allreduce hierarchical --topology hierarchical",
                 "not a multiple of 8 ranks per node");
}

// No tool writes over a file it reads, whatever name it is given, and an
// existing output is replaced only with --overwrite.
TEST_F(SimCli, OutputsNeverReplaceInputsAndOldFilesOnlyWhenTold) {
  const std::string t = Path("mine.trace");
  std::filesystem::copy_file(Path("mlp.trace"), t, std::filesystem::copy_options::overwrite_existing);
  const std::string before = accordion::test_support::ReadFile(t);
  std::filesystem::remove(Path("alias.trace"));
  std::filesystem::remove(Path("hard.trace"));
  std::filesystem::create_symlink(t, Path("alias.trace"));
  std::filesystem::create_hard_link(t, Path("hard.trace"));
  const std::string fast = " --timing analytic --interval 5";
  for (const std::string& out : {t, Path("alias.trace"), Path("hard.trace")}) {
    for (const std::string overwrite : {"", " --overwrite"}) {
      ExpectBadInput("replay " + t + " --out " + out + fast + overwrite, "is the input");
      ExpectBadInput("sweep " + t + " --out " + out + fast + overwrite, "is the input");
      ExpectBadInput("replay " + t + " --timeline " + out + fast + overwrite, "is the input");
      ExpectBadInput("calibrate " + Path("measured.trace") + " --out " + Path("measured.trace") + overwrite,
                     "is the input");
    }
  }
  ExpectBadInput("replay " + t + " --platform " + Path("fat.json") + " --out " + Path("fat.json") + fast,
                 "is the input");
  EXPECT_EQ(accordion::test_support::ReadFile(t), before);

  Write("old.csv", "precious\n");
  ExpectBadInput("replay " + t + " --format csv --out " + Path("old.csv") + fast, "--overwrite replaces it");
  ExpectBadInput("sweep " + t + " --out " + Path("old.csv") + fast, "--overwrite replaces it");
  EXPECT_EQ(accordion::test_support::ReadFile(Path("old.csv")), "precious\n");
  ExpectBadInput("replay " + t + " --out " + dir() + fast, "is a directory");
  ExpectBadInput("replay " + t + " --out " + Path("no/such/dir.csv") + fast, "does not exist");
  ExpectBadInput("replay " + t + " --out " + Path("both.json") + " --timeline " + Path("both.json") + fast,
                 "the same file");
  const CommandResult replaced = Sim("replay " + t + " --format csv --out " + Path("old.csv") + fast + " --overwrite");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(accordion::test_support::ReadFile(Path("old.csv")), "precious\n");
  // A stream is what a user asks for: written into, never renamed over.
  const CommandResult devnull = Sim("sweep " + t + " --out /dev/null --workers 2,4" + fast);
  EXPECT_EQ(devnull.exit_code, 0) << devnull.err;
}

TEST_F(SimCli, SizesAreCheckedBeforeAnythingIsAllocated) {
  const std::string t = Path("mlp.trace") + " --timing analytic";
  ExpectBadInput("replay " + t + " --workers 100000000", "above the limit of 131072");
  // 0 means "the trace's" inside; given, it was taken for that without a word.
  ExpectBadInput("replay " + t + " --workers 0", "--workers");
  ExpectBadInput("replay " + t + " --workers -2", "--workers");
  ExpectBadInput("sweep " + t + " --workers 0,2", "--workers: must be a whole number, at least 1");
  ExpectBadInput("collective --workers 0", "--workers: must be a whole number, at least 1");
  ExpectBadInput("replay " + t + " --topology fat-tree --hosts-per-leaf 1000000000", "above the limit");
  ExpectBadInput("replay " + t + " --topology hierarchical --gpus-per-node 2000000000", "above the limit of 1024");
  ExpectBadInput("replay " + t + " --topology hierarchical --gpus-per-node 1000 --workers 131050", "whole nodes");
  ExpectBadInput("replay " + t + " --topology fat-tree --hosts-per-leaf 1 --spines 100000 --workers 1000",
                 "leaf-to-spine links");
  ExpectBadInput("replay " + t + " --topology ring --workers 16385",
                 "a ring of 16385 hosts is above the limit of 16384");
  ExpectBadInput("replay " + t + " --bucket-mb 1e300", "--bucket-mb");
  std::string values;
  for (int i = 1; i <= 1001; ++i) values += (i > 1 ? "," : "") + std::to_string(i);
  ExpectBadInput("sweep " + t + " --bandwidth-gbps " + values + " --latency-us " + values, "more than 1000000 points");
  ExpectBadInput("sweep " + t + " --workers 2,100000000", "above the limit");
  // Was taken without a word: a replay "(1000000000 ranks per node)" of 4 workers.
  for (const std::string allreduce : {"hierarchical", "nccl-tree"}) {
    ExpectBadInput("replay " + t + " --allreduce " + allreduce + " --ranks-per-node 1000000000",
                   "--ranks-per-node 1000000000 is above the limit of 131072 ranks");
  }
  ExpectBadInput("collective --workers 2 --allreduce hierarchical --ranks-per-node 1000000000",
                 "--ranks-per-node 1000000000 is above the limit");
}

TEST_F(SimCli, MessagesSpeakTheUsersUnitsAndLevelsAreCheckedBeforeCasting) {
  const std::string t = Path("mlp.trace") + " --timing analytic";
  ExpectBadInput("replay " + t + " --bandwidth-gbps -1", "not -1 Gb/s");
  ExpectBadInput("replay " + t + " --latency-us -3", "not -3 us");
  ExpectBadInput("replay " + t + " --low 1e308", "--low must be a PowerSGD rank");
  ExpectBadInput("replay " + t + " --high -1e308", "--high must be a PowerSGD rank");
  ExpectBadInput("replay " + t + " --scheme batch --low 1e300", "--low must be a batch size");
}

TEST_F(SimCli, PlatformsSimGridCannotUseAreOneLineNotACrash) {
  for (const std::string model : {"simulate", "analytic"}) {
    const std::string t = Path("mlp.trace") + " --workers 2 --timing " + model + " --platform ";
    ExpectBadInput("replay " + t + Path("duplicate-route.xml"), "duplicate-route.xml: SimGrid cannot load");
    ExpectBadInput("replay " + t + Path("duplicate-route.xml"), "already exists");
    ExpectBadInput("replay " + t + Path("disconnected.xml"), "disconnected.xml: no route from");
  }
  ExpectBadInput("collective --workers 2 --platform " + Path("duplicate-route.xml"), "SimGrid cannot load");
  ExpectBadInput("collective --workers 2 --platform " + Path("clusters-without-route.xml"), "SimGrid cannot load");
  // Refused from the file's text, before SimGrid allocates a host.
  ExpectBadInput("collective --workers 2 --platform " + Path("huge-cluster.xml"),
                 "its clusters declare 100000000 hosts; a platform holds at most 131072");
  ExpectBadInput(
      "replay " + Path("mlp.trace") + " --workers 2 --timing analytic --platform " + Path("two-large-clusters.xml"),
      "its clusters declare 140000 hosts");
}

// Opening a FIFO nobody writes into (or, for an output, reads) blocks for
// ever; a directory or a device where a file is expected is never a file.
// Each is refused in one line; `timeout` turns a hang into a failure.
TEST_F(SimCli, FifosAndDevicesWhereAFileIsExpectedAreRefusedNotWaitedOn) {
  const std::string fifo_json = Path("fifo.json"), fifo_xml = Path("fifo.xml"), fifo_out = Path("fifo.csv");
  for (const std::string& f : {fifo_json, fifo_xml, fifo_out}) {
    std::filesystem::remove(f);
    ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0) << f;
  }
  Write("xml-key-fifo.json", "{\"xml\": \"" + fifo_xml + "\"}");
  const std::string t = Path("mlp.trace") + " --workers 2 --timing analytic";
  const std::string limit = "timeout 20";
  ExpectBadInput("replay " + t + " --platform " + fifo_json,
                 "fifo.json: cannot open platform file: not a regular file (a FIFO)", limit);
  ExpectBadInput("replay " + t + " --platform " + fifo_xml,
                 "fifo.xml: cannot open platform file: not a regular file (a FIFO)", limit);
  ExpectBadInput("replay " + t + " --platform " + Path("xml-key-fifo.json"),
                 "xml-key-fifo.json: 'xml': " + fifo_xml + ": not a regular file (a FIFO)", limit);
  ExpectBadInput("collective --workers 2 --platform " + fifo_xml, "not a regular file (a FIFO)", limit);
  ExpectBadInput("replay " + t + " --platform " + dir(), "not a regular file (a directory)", limit);
  ExpectBadInput("calibrate " + fifo_json + " --out " + Path("never.json"), "not a regular file (a FIFO)", limit);
  ExpectBadInput("merge " + fifo_json + " --out " + Path("never.csv"), "not a regular file (a FIFO)", limit);
  ExpectBadInput("replay " + fifo_json, "not a regular file (a FIFO)", limit);
  // Outputs: a FIFO is streamed into only while a process reads it.
  ExpectBadInput("replay " + t + " --format csv --out " + fifo_out, "a FIFO that no process reads", limit);
  ExpectBadInput("replay " + t + " --timeline " + fifo_out, "a FIFO that no process reads", limit);
  ExpectBadInput("sweep " + t + " --out " + fifo_out, "a FIFO that no process reads", limit);
  ExpectBadInput("calibrate " + Path("measured.trace") + " --out " + fifo_out, "a FIFO that no process reads", limit);
  const int reader = ::open(fifo_out.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const CommandResult streamed = RunCommand(limit + " " + kSim + " replay " + t + " --format csv --out " + fifo_out);
  EXPECT_EQ(streamed.exit_code, 0) << streamed.err;
  char buffer[4096];
  EXPECT_GT(::read(reader, buffer, sizeof buffer), 0) << "nothing came through the FIFO";
  ::close(reader);
}

// Results written to standard output that cannot take them (/dev/full
// stands for a full disk) are an error, not a success with the output lost.
TEST_F(SimCli, AStandardOutputThatCannotBeWrittenIsAnErrorNotASuccess) {
  const std::string t = Path("mlp.trace") + " --timing analytic --interval 5";
  for (const std::string& command :
       std::vector<std::string>{"replay " + t, "replay " + t + " --format csv", "replay " + t + " --format json",
                                "sweep " + t + " --workers 2,4", "calibrate " + Path("measured.trace") + " --out -",
                                "collective --workers 2", "--help", "replay --version"}) {
    // The machine's failure (exit 4, not bad input's 2) and the error as
    // the last line, after the progress bars.
    const CommandResult r = Sim(command + " > /dev/full");
    EXPECT_EQ(r.exit_code, kExitIoFailure) << command << "\n" << r.err;
    EXPECT_NE(r.err.rfind("accordion-sim: error: cannot write standard output ("), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n', r.err.rfind("accordion-sim: error:")), r.err.size() - 1) << r.err;
  }
  const CommandResult full = Sim("sweep " + t + " --workers 2,4 --out /dev/full");
  EXPECT_EQ(full.exit_code, kExitIoFailure) << full.err;
  EXPECT_NE(full.err.find("accordion-sim: error: /dev/full: write failed"), std::string::npos) << full.err;
}

// A grad_ready offset of 1e300 s replayed into 1e303 s with exit 0, and a
// world_size of 10^8 passed validate and cost 6 GB in replay: the limits of
// traces/record_checks.h hold for validate and every reader alike.
TEST_F(SimCli, ImplausibleTraceValuesAreRefusedByValidateAndEveryReader) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(4);
  const std::string offset = test_support::SyntheticTrace(dir(), "far-offset", o);
  test_support::ExecuteSql(offset, "UPDATE grad_ready SET offset_s = 1e300 WHERE epoch = 1;");
  const std::string world = test_support::SyntheticTrace(dir(), "huge-world", o);
  test_support::ExecuteSql(world, "UPDATE run SET world_size = 100000000;");
  for (const auto& [trace, fragment] :
       std::vector<std::pair<std::string, std::string>>{{offset, "offset_s 1e+300 s is above the limit of"},
                                                        {world, "world_size 100000000 is above the limit of 131072"}}) {
    ExpectBadInput("replay " + trace + " --workers 2", fragment);
    ExpectBadInput("sweep " + trace + " --workers 2,4", fragment);
    for (const std::string command : {"validate", "info", "schedule"}) {
      const CommandResult r = RunCommand(kAnalyze + " " + command + " " + trace);
      EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
      EXPECT_EQ(CountLines(r.err), 1) << command << "\n" << r.err;
      EXPECT_NE(r.err.find(fragment), std::string::npos) << command << "\n" << r.err;
    }
  }
}

// What accordion-analyze validate refuses, no tool reads.
TEST_F(SimCli, EveryToolRunsTheChecksOfValidate) {
  const std::string bad = Path("rows-past-epochs.trace");
  ExpectBadInput("replay " + bad, "the epochs table ends at 0");
  ExpectBadInput("sweep " + bad + " --workers 2,4", "the epochs table ends at 0");
  ExpectBadInput("calibrate " + bad + " --out " + Path("never.json"), "the epochs table ends at 0");
  for (const std::string command : {"validate", "info", "schedule", "regimes", "table"}) {
    const CommandResult r = RunCommand(kAnalyze + " " + command + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("the epochs table ends at 0"), std::string::npos) << command << "\n" << r.err;
  }
}

// Children of a replay are processes: a SIGTERM to accordion-sim must not
// leave them simulating on.
TEST_F(SimCli, SigtermTakesTheSimulationProcessesWithIt) {
  std::string values;
  for (int i = 1; i <= 400; ++i) values += (i > 1 ? "," : "") + std::to_string(i);
  const std::string pid_file = Path("sim.pid");
  std::filesystem::remove(pid_file);
  RunCommand(kSim + " sweep " + Path("mlp.trace") + " --interval 5 --jobs 2 --out /dev/null --bandwidth-gbps " +
             values + " >/dev/null 2>&1 & echo $! > " + pid_file);
  pid_t sim = 0;
  std::ifstream(pid_file) >> sim;
  ASSERT_GT(sim, 0);
  auto children = [sim] {
    const CommandResult r = RunCommand("pgrep -P " + std::to_string(sim));
    return r.out;
  };
  std::string running;
  for (int i = 0; i < 200 && (running = children()).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_FALSE(running.empty()) << "the sweep started no simulation process";
  std::vector<pid_t> pids;
  std::istringstream in(running);
  for (pid_t p; in >> p;) pids.push_back(p);
  ::kill(sim, SIGTERM);
  auto alive = [](pid_t p) {
    std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
  };
  for (const pid_t p : pids) {
    for (int i = 0; i < 200 && alive(p); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    EXPECT_FALSE(alive(p)) << "simulation process " << p << " outlived accordion-sim";
  }
}

// A sweep ended by a signal mid-write (SIGTERM, a closed terminal's
// SIGHUP; Ctrl-C alike) leaves no "<out>.partial" behind: one would look
// like another writer's and block the rerun, which now succeeds at once.
TEST_F(SimCli, ASweepEndedBySignalLeavesNoPartialFileToBlockTheRerun) {
  std::string values;
  for (int i = 1; i <= 400; ++i) values += (i > 1 ? "," : "") + std::to_string(i);
  for (const int signal : {SIGTERM, SIGHUP}) {
    const std::string out = Path("sweep-" + std::to_string(signal) + ".csv"), pid_file = Path("sweep.pid");
    std::filesystem::remove(pid_file);
    RunCommand(kSim + " sweep " + Path("mlp.trace") + " --interval 5 --jobs 2 --out " + out + " --bandwidth-gbps " +
               values + " >/dev/null 2>&1 & echo $! > " + pid_file);
    pid_t sim = 0;
    std::ifstream(pid_file) >> sim;
    ASSERT_GT(sim, 0);
    for (int i = 0; i < 400 && !std::filesystem::exists(out + ".partial"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_TRUE(std::filesystem::exists(out + ".partial")) << "the sweep never started writing";
    ::kill(sim, signal);
    for (int i = 0; i < 400 && ::kill(sim, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    EXPECT_NE(::kill(sim, 0), 0) << "accordion-sim outlived signal " << signal;
    EXPECT_FALSE(std::filesystem::exists(out + ".partial")) << "signal " << signal;
    EXPECT_FALSE(std::filesystem::exists(out)) << "an interrupted sweep is no result";
    const CommandResult rerun =
        Sim("sweep " + Path("mlp.trace") + " --timing analytic --interval 5 --workers 2,4 --out " + out);
    EXPECT_EQ(rerun.exit_code, 0) << rerun.err;
  }
}

// Without --eta and --interval, replay and sweep use the trace's (0.3 and
// 2 here), not the controller's defaults; a flag or a swept list overrides.
TEST_F(SimCli, ReplayAndSweepTakeTheTracesEtaAndIntervalUnlessGiven) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(12);
  o.eta = 0.3;
  o.interval = 2;
  const std::string trace = test_support::SyntheticTrace(dir(), "eta-0.3-interval-2", o);
  const std::string fast = " --timing analytic --format json";
  const CommandResult replay = Sim("replay " + trace + fast);
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const nlohmann::json r = nlohmann::json::parse(replay.out);
  EXPECT_EQ(r["eta"], 0.3);
  EXPECT_EQ(r["interval"], 2);
  const nlohmann::json given = nlohmann::json::parse(Sim("replay " + trace + fast + " --eta 0.7 --interval 3").out);
  EXPECT_EQ(given["eta"], 0.7);
  EXPECT_EQ(given["interval"], 3);

  const CommandResult sweep = Sim("sweep " + trace + fast + " --workers 2,4");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const nlohmann::json rows = nlohmann::json::parse(sweep.out);
  ASSERT_EQ(rows.size(), 2u);
  for (const nlohmann::json& row : rows) {
    EXPECT_EQ(row["eta"], 0.3) << row.dump();
    EXPECT_EQ(row["interval"], 2) << row.dump();
  }
  const CommandResult etas = Sim("sweep " + trace + fast + " --etas 0.2,0.9");
  ASSERT_EQ(etas.exit_code, 0) << etas.err;
  std::vector<double> swept;
  for (const nlohmann::json& row : nlohmann::json::parse(etas.out)) {
    swept.push_back(row["eta"].get<double>());
    EXPECT_EQ(row["interval"], 2) << row.dump();  // not swept: the trace's
  }
  std::sort(swept.begin(), swept.end());
  EXPECT_EQ(swept, (std::vector<double>{0.2, 0.9}));
  for (const std::string command : {"replay", "sweep"}) {
    const std::string help = Sim(command + " --help").out;
    EXPECT_NE(help.find("default: the trace's run.eta"), std::string::npos) << help;
    EXPECT_NE(help.find("default: the trace's run.interval"), std::string::npos) << help;
  }
}

}  // namespace
}  // namespace accordion::sim
