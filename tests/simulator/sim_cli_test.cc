// Runs the accordion-sim binary as a user would: outputs, files and exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/simulator/sim_test_support.h"
#include "tests/support/run_command.h"

namespace accordion::sim {
namespace {

using accordion::testing::CommandResult;
using accordion::testing::CountLines;
using accordion::testing::RunCommand;

const std::string kSim = std::string(ACCORDION_BIN_DIR) + "/accordion-sim";

class SimCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::TempDir("sim-cli"));
    synthetic::SyntheticTraceOptions o = testing::MlpTraceOptions(12);
    o.interval = 5;
    testing::SyntheticTrace(*dir_, "mlp", o);
    o.epochs = 2;
    testing::ExecuteSql(testing::SyntheticTrace(*dir_, "no-iterations", o), "DELETE FROM iterations;");
    testing::ExecuteSql(testing::SyntheticTrace(*dir_, "no-collectives", o), "DELETE FROM collectives;");
    std::vector<testing::MeasuredCollective> measured;
    for (double b = 4096; b <= 64e6; b *= 4)
      measured.push_back({CollectiveOp::kAllReduce, int64_t(b), 1e-4 + b * 1.6e-9});
    testing::ReplaceCollectives(testing::SyntheticTrace(*dir_, "measured", o), 4, measured);
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
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static void Write(const std::string& name, const std::string& text) {
    std::ofstream(*dir_ + "/" + name) << text;
  }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }
  static CommandResult Sim(const std::string& args) { return RunCommand(kSim + " " + args); }

  // Bad input: exit 2, exactly one line on stderr, nothing on stdout.
  static void ExpectBadInput(const std::string& args, const std::string& fragment) {
    const CommandResult r = Sim(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }

  static std::string* dir_;
};
std::string* SimCli::dir_ = nullptr;

TEST_F(SimCli, VersionAndHelpEverywhere) {
  for (const std::string args : {"--version", "replay --version", "calibrate --version", "sweep --version"}) {
    const CommandResult r = Sim(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("accordion-sim 0."), std::string::npos) << r.out;
  }
  for (const std::string args :
       {"--help", "replay --help", "calibrate --help", "sweep --help", "collective --help"}) {
    const CommandResult r = Sim(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args;
  }
  EXPECT_NE(Sim("replay --help").out.find("--network-model"), std::string::npos);
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
  ExpectBadInput("replay " + t + " --timeline " + Path("t.json") + " --timeline-epoch 99",
                 "--timeline-epoch 99");
  ExpectBadInput("sweep " + t + " --levels 2-1", "LOW:HIGH");
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

  const CommandResult csv = Sim("replay " + t + " --format csv --interval 5 --out " + Path("r.csv") +
                                " --timeline " + Path("timeline.json") + " --timeline-epoch 2");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::ifstream in(Path("r.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 1 + 3 * 12 + 3);
  const nlohmann::json timeline = nlohmann::json::parse(std::ifstream(Path("timeline.json")));
  EXPECT_GT(timeline.at("traceEvents").size(), 10u);

  const CommandResult json = Sim("replay " + t + " --format json --model analytic --interval 5");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("communication_model"), "analytic");
  EXPECT_EQ(j.at("schedules").at("accordion").at("epochs").size(), 12u);
  EXPECT_GE(j.at("speedup_vs_static_low").get<double>(), 1.0);
  EXPECT_TRUE(j.contains("measured_vs_replayed"));
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
  EXPECT_NEAR(platform.at("segments").back().at("bandwidth_gbps").get<double>(), 1.5 / 1.6e-9 * 8 / 1e9,
              0.05);
  const CommandResult replay =
      Sim("replay " + Path("mlp.trace") + " --platform " + Path("cal.json") + " --interval 5");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find("calibrated message-size segments"), std::string::npos) << replay.out;
  // Calibrated on 4 workers, asked about 32.
  const CommandResult bigger = Sim("replay " + Path("mlp.trace") + " --platform " + Path("cal.json") +
                                   " --workers 32 --interval 5");
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
    samples.push_back({{"op", "allreduce"}, {"world_size", 2}, {"bytes", int64_t(b)},
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
  const CommandResult replay = Sim("replay " + Path("mlp.trace") + " --platform " + Path("mixed.json") +
                                   " --bandwidth-gbps 5 --interval 5");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  // 1 / (1/5 Gb/s + 0.2667 ns/B): 4.286 Gb/s, not 7.5 Gb/s x 5/10.
  EXPECT_NE(replay.out.find("links deliver 4.2857142857"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("collective overhead 40 us"), std::string::npos) << replay.out;

  ExpectBadInput("calibrate " + Path("bench2.json") + " --out " + Path("never.json") + " --link-gbps 0",
                 "--link-gbps must be a positive");
  ExpectBadInput("calibrate " + Path("mlp.trace") + " " + Path("broken.json") + " --out " + Path("never.json"),
                 "not valid JSON");
  ExpectBadInput("replay " + Path("mlp.trace") + " --host-ns-per-byte -1", "host cost per byte");
  ExpectBadInput("replay " + Path("mlp.trace") + " --host-ns-per-byte 5000", "below 1000 ns/B");
  ExpectBadInput("replay " + Path("mlp.trace") + " --collective-overhead-us 2e7", "below 10 s");
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
}

TEST_F(SimCli, SweepWritesOneRowPerPoint) {
  const CommandResult r = Sim("sweep " + Path("mlp.trace") +
                              " --bandwidth-gbps 1,10 --workers 4,8 --levels 2:1,4:1 --interval 5 --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 1 + 8);
  EXPECT_EQ(r.out.rfind("bandwidth_gbps,latency_us,workers,eta,interval,level_low,level_high,", 0), 0u);
  EXPECT_NE(r.err.find("sweep ["), std::string::npos);  // the progress bar's last line
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
      Sim("collective --workers 16 --bytes 1e7 --allreduce nccl-ring --nccl-channels 4 --nccl-chunk-kb 64" +
          exact);
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
    const std::string dense = t + " --scheme dense --model " + model;
    const CommandResult base = Sim("replay " + dense);
    const CommandResult tiny = Sim("replay " + dense + " --nccl-chunk-kb 1");
    ASSERT_EQ(base.exit_code, 0) << base.err;
    ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
    EXPECT_GT(ExposedSeconds(tiny), 1.02 * ExposedSeconds(base)) << model;
  }
}

TEST_F(SimCli, BadCollectiveSettingsExitTwoWithOneLine) {
  const std::string t = Path("mlp.trace");
  ExpectBadInput("replay " + t + " --nccl-channels 4",
                 "settings of --allreduce nccl-ring and nccl-tree, not ring");
  ExpectBadInput("replay " + t + " --allreduce nccl-ring --nccl-channels 0",
                 "channels must be between 1 and 64");
  ExpectBadInput("replay " + t + " --allreduce nccl-tree --ranks-per-node 2",
                 "--ranks-per-node is a setting");
  ExpectBadInput("collective --workers 12 --allreduce hierarchical --ranks-per-node 8",
                 "12 ranks are not a multiple of 8 ranks per node");
  ExpectBadInput("replay " + t + " --workers 12 --allreduce hierarchical --topology hierarchical",
                 "not a multiple of 8 ranks per node");
}

}  // namespace
}  // namespace accordion::sim
