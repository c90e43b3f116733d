// Runs the accordion-analyze binary as a user would and checks its output
// and exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "tests/support/run_command.h"
#include "tests/support/synthetic_trace.h"
#include "tests/support/temp_dir_test.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::CountLines;
using test_support::RunCommand;

const std::string kAnalyze = std::string(ACCORDION_BIN_DIR) + "/accordion-analyze";
const std::string kSynth = std::string(ACCORDION_BIN_DIR) + "/accordion-make-synthetic-trace";

class AnalyzeCli : public test_support::SuiteTempDirTest {
 protected:
  static void SetUpTestSuite() {
    SuiteTempDirTest::SetUpTestSuite();
    const CommandResult r = RunCommand(kSynth + " " + Trace() + " --epochs 30 --decay 20");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const CommandResult d = RunCommand(kSynth + " " + DenseTrace() + " --model mlp --epochs 5 --scheme dense");
    ASSERT_EQ(d.exit_code, 0) << d.err;
  }
  static std::string Trace() { return Path("resnet18.trace"); }
  static std::string DenseTrace() { return Path("dense.trace"); }
  static CommandResult Analyze(const std::string& args) { return RunCommand(kAnalyze + " " + args); }

  // Bad input: exit 2 and exactly one line on stderr, nothing on stdout.
  static void ExpectBadInput(const std::string& args, const std::string& fragment, int exit_code = kExitBadInput) {
    const CommandResult r = Analyze(args);
    EXPECT_EQ(r.exit_code, exit_code) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
};

TEST_F(AnalyzeCli, VersionAndHelpEverywhere) {
  for (const std::string args : {"--version", "schedule --version", "info --version"}) {
    const CommandResult r = Analyze(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("accordion-analyze 0."), std::string::npos) << r.out;
  }
  for (const std::string args : {"--help", "schedule --help", "validate --help", "export --help"}) {
    const CommandResult r = Analyze(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args << ": " << r.out;
  }
  EXPECT_NE(Analyze("schedule --help").out.find("--eta"), std::string::npos);
}

TEST_F(AnalyzeCli, BadFlagsAndInputsExitTwoWithOneLine) {
  ExpectBadInput("", "subcommand");
  ExpectBadInput("frobnicate", "unknown command 'frobnicate'");
  ExpectBadInput("schedule " + Trace() + " --eta -1", "--eta");
  ExpectBadInput("schedule " + Trace() + " --interval 0", "--interval");
  ExpectBadInput("schedule " + Trace() + " --format xml", "--format");
  ExpectBadInput("schedule " + Trace() + " --low 1.5", "--low must be a PowerSGD rank");
  ExpectBadInput("schedule " + Trace() + " --scheme topk --low 2", "TopK fraction");
  ExpectBadInput("schedule " + Path("nope.trace"), "no such file");
  ExpectBadInput("schedule " + DenseTrace(), "--scheme");
  ExpectBadInput("info /etc/hostname", "not an SQLite file");
  ExpectBadInput("validate " + dir(), "not a regular file");
}

TEST_F(AnalyzeCli, InfoSummarisesTheRun) {
  const CommandResult r = Analyze("info " + Trace());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SYNTHETIC"), std::string::npos);
  EXPECT_NE(r.out.find("resnet18"), std::string::npos);
  EXPECT_NE(r.out.find("62 ("), std::string::npos) << r.out;  // 62 layers
  EXPECT_NE(r.out.find("30 of 30 epochs"), std::string::npos) << r.out;
  const CommandResult j = Analyze("info --format json " + Trace());
  ASSERT_EQ(j.exit_code, 0);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["layers"], 62);
  EXPECT_EQ(doc["parameters"], 11173962);  // ResNet-18 on CIFAR-10, the paper's Table 8
}

TEST_F(AnalyzeCli, InfoDescribesARunThatDiedInItsFirstEpoch) {
  const std::string path = Path("died.trace");
  TraceWriter::Create(path, synthetic::MlpRun("fashion-mnist", 60000, 128, 20), synthetic::MlpLayers(), true)
      ->Finish(RunStatus::kFailed);
  const CommandResult r = Analyze("info " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("failed, 0 of 20 epochs recorded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("final epoch: none finished"), std::string::npos) << r.out;
  ExpectBadInput("schedule " + path + " --scheme powersgd", "no finished epoch");
}

TEST_F(AnalyzeCli, ValidateAcceptsAGoodTraceAndRefusesADamagedOne) {
  const CommandResult ok = Analyze("validate " + Trace());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind("OK ", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find("warning: synthetic"), std::string::npos) << ok.out;
  const std::string broken = Path("broken.trace");
  std::filesystem::copy_file(Trace(), broken, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(broken, std::filesystem::file_size(broken) / 3);
  ExpectBadInput("validate " + broken, "truncated");
}

TEST_F(AnalyzeCli, ScheduleTablePrintsLevelsAndSavings) {
  // Checks every 5 epochs: at the default 10 the check at 10 still sees the
  // warm-up and the post-decay hold covers epochs 20-29, so no layer is high.
  const CommandResult r = Analyze("schedule " + Trace() + " --interval 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rank 2"), std::string::npos);
  EXPECT_NE(r.out.find("Accordion / static low"), std::string::npos);
  // Epoch 0 is critical: convolutions low, batch-norm vectors make no difference.
  EXPECT_NE(r.out.find("62/62     8.061e+06  L..L..L"), std::string::npos) << r.out;
  // After the first comparison the flattening norms switch layers to high.
  EXPECT_NE(r.out.find("H..H"), std::string::npos) << r.out;
}

TEST_F(AnalyzeCli, ScheduleCsvHasARowPerEpochAndLayer) {
  const CommandResult r = Analyze("schedule " + Trace() + " --format csv --interval 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 1 + 30 * 62);
  EXPECT_EQ(r.out.rfind("epoch,layer_id,layer,", 0), 0u);
}

TEST_F(AnalyzeCli, ScheduleJsonRatiosMoveWithEta) {
  auto ratio = [](const std::string& args) {
    const CommandResult r = RunCommand(kAnalyze + " schedule " + Trace() + " --format json --interval 5 " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["ratio_vs_static_low"].get<double>();
  };
  const double paper = ratio("");
  EXPECT_GT(paper, 0.5);  // floats of rank 1 are about half those of rank 2
  EXPECT_LT(paper, 1.0);
  // A huge eta never sees a critical regime after the first check.
  EXPECT_LT(ratio("--eta 100"), paper);
  // Switching between rank 4 and rank 1 instead.
  const CommandResult r = Analyze("schedule " + Trace() + " --format json --low 4 --high 1");
  EXPECT_EQ(nlohmann::json::parse(r.out)["level_low"], 4.0);
}

TEST_F(AnalyzeCli, DenseTraceCanBeScheduledUnderAnyScheme) {
  const CommandResult r = Analyze("schedule " + DenseTrace() + " --scheme topk --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["scheme"], "topk");
  EXPECT_EQ(doc["level_low"], 0.99);
  EXPECT_EQ(doc["level_high"], 0.1);
}

TEST_F(AnalyzeCli, TableGroupsRunsIntoPaperRows) {
  const std::string low = Path("static2.trace"), high = Path("static1.trace");
  ASSERT_EQ(RunCommand(kSynth + " " + low + " --epochs 30 --decay 20 --policy static --low 2").exit_code, 0);
  ASSERT_EQ(RunCommand(kSynth + " " + high + " --epochs 30 --decay 20 --policy static --low 1").exit_code, 0);
  const CommandResult r = Analyze("table " + low + " " + high + " " + Trace() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["setting"], "rank 2");
  EXPECT_EQ(rows[0]["floats_ratio"], 1.0);
  EXPECT_EQ(rows[2]["setting"], "Accordion (rank 2 / rank 1)");
  const CommandResult md = Analyze("table " + low + " " + high);
  EXPECT_NE(md.out.find("| resnet18 | synthetic | 4 | 30 | powersgd | rank 1 | 1 |"), std::string::npos) << md.out;
  // Pinned: rank 2's row divides every row of its training.
  const CommandResult pinned =
      Analyze("table " + low + " " + high + " " + Trace() + " --baseline " + low + " --format json");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  const auto pinned_rows = nlohmann::json::parse(pinned.out);
  EXPECT_EQ(pinned_rows[0]["is_baseline"], true);
  EXPECT_EQ(pinned_rows[1]["baseline"], "rank 2");
  EXPECT_EQ(pinned_rows[1]["floats_vs_baseline"], pinned_rows[1]["floats_ratio"]);
  ExpectBadInput("table " + low + " --baseline " + high, "not one of the traces");
  ExpectBadInput("table", "traces");
  ExpectBadInput("table " + low + " /etc/hostname", "not an SQLite file");
}

TEST_F(AnalyzeCli, RegimesComparesGradientNormsWithTheHessian) {
  // The synthetic trace measures the eigenvalue every 5 epochs.
  const CommandResult r = Analyze("regimes " + Trace() + " --interval 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 2 + 1 + 30 + 3) << r.out;
  EXPECT_NE(r.out.find("Epochs both detectors labelled: 26"), std::string::npos) << r.out;
  ExpectBadInput("regimes " + Trace() + " --hessian-threshold 0", "--hessian-threshold");
}

TEST_F(AnalyzeCli, ExportWritesCsvAndJson) {
  const std::string out = Path("csv");
  const CommandResult r = Analyze("export " + Trace() + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 11);  // one CSV per table of schema v4
  EXPECT_TRUE(std::filesystem::exists(out + "/epoch_layers.csv"));
  EXPECT_TRUE(std::filesystem::exists(out + "/network_probe.csv"));
  const CommandResult j = Analyze("export " + Trace() + " --format json --out -");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["epochs"].size(), 30u);
}

// No tool writes over what it reads, nor over an existing file unless told.
TEST_F(AnalyzeCli, ExportNeverWritesOverItsTraceNorOverOldFilesUnlessTold) {
  const std::string trace = Path("mine.trace");
  std::filesystem::copy_file(Trace(), trace, std::filesystem::copy_options::overwrite_existing);
  const std::string before = test_support::ReadFile(trace);
  std::filesystem::create_symlink(trace, Path("alias.trace"));
  for (const std::string& out : {trace, Path("alias.trace")}) {
    ExpectBadInput("export " + trace + " --format json --out " + out, "is the input");
    ExpectBadInput("export " + trace + " --format json --out " + out + " --overwrite", "is the input");
  }
  EXPECT_EQ(test_support::ReadFile(trace), before);

  const std::string json = Path("old.json");
  test_support::RunCommand("echo precious > " + json);
  ExpectBadInput("export " + trace + " --format json --out " + json, "--overwrite replaces it");
  EXPECT_EQ(test_support::ReadFile(json), "precious\n");
  ExpectBadInput("export " + trace + " --format json --out " + dir(), "is a directory");
  ExpectBadInput("export " + trace + " --format json --out " + Path("no/such/dir.json"), "does not exist");
  const CommandResult replaced = Analyze("export " + trace + " --format json --out " + json + " --overwrite");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_NE(test_support::ReadFile(json), "precious\n");
  const CommandResult devnull = Analyze("export " + trace + " --format json --out /dev/null");
  EXPECT_EQ(devnull.exit_code, 0) << devnull.err;

  const std::string csv = Path("csv-again");
  ASSERT_EQ(Analyze("export " + trace + " --out " + csv).exit_code, 0);
  ExpectBadInput("export " + trace + " --out " + csv, "--overwrite replaces it");
  EXPECT_EQ(Analyze("export " + trace + " --out " + csv + " --overwrite").exit_code, 0);
  ExpectBadInput("export " + trace + " --out " + json, "not a directory");
}

// A full disk (here a file-size limit, which fails a write the same way
// without root) in the middle of a CSV export: one line, exit 2, no
// ".partial" left behind and the earlier export untouched - not some tables
// new and some old - so the same command runs again once there is room.
TEST_F(AnalyzeCli, AFullDiskDuringAnExportLeavesTheEarlierExportAndNoPartialFile) {
  const std::string trace = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-powersgd-accordion.trace";
  const std::string out = Path("csv-full");
  ASSERT_EQ(Analyze("export " + trace + " --out " + out).exit_code, 0);
  std::map<std::string, std::string> before;
  for (const auto& e : std::filesystem::directory_iterator(out)) before[e.path()] = test_support::ReadFile(e.path());
  // Another run's export into it, with 16 KiB files at most: its small
  // tables fit, grad_ready and collectives do not.
  const std::string other = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-powersgd-static-1.trace";
  const CommandResult full = RunCommand("bash -c \"trap '' XFSZ; ulimit -f 16; exec " + kAnalyze + " export " + other +
                                        " --out " + out + " --overwrite\"");
  EXPECT_EQ(full.exit_code, kExitIoFailure) << full.err;  // the machine's failure, not the input's
  EXPECT_EQ(CountLines(full.err), 1) << full.err;
  EXPECT_NE(full.err.find("nothing was replaced"), std::string::npos) << full.err;
  std::map<std::string, std::string> after;
  for (const auto& e : std::filesystem::directory_iterator(out)) after[e.path()] = test_support::ReadFile(e.path());
  EXPECT_EQ(after, before);  // the first export's files and bytes, no .partial
  EXPECT_EQ(Analyze("export " + other + " --out " + out + " --overwrite").exit_code, 0);
}

// Results written to standard output that cannot take them (/dev/full
// stands for a full disk) are an error, not a success with the output lost.
TEST_F(AnalyzeCli, AStandardOutputThatCannotBeWrittenIsAnErrorNotASuccess) {
  for (const std::string& command : std::vector<std::string>{
           "info " + Trace(), "schedule " + Trace(), "schedule " + Trace() + " --format csv", "regimes " + Trace(),
           "table " + Trace(), "export " + Trace() + " --format json --out -", "validate " + Trace(), "--help"}) {
    ExpectBadInput(command + " > /dev/full", "cannot write standard output (", kExitIoFailure);
  }
  ExpectBadInput("export " + Trace() + " --format json --out /dev/full", "write failed", kExitIoFailure);
  const CommandResult closed = Analyze("info " + Trace() + " >&-");
  EXPECT_EQ(closed.exit_code, kExitIoFailure) << closed.err;
  EXPECT_NE(closed.err.find("cannot write standard output"), std::string::npos) << closed.err;
}

// A FIFO no process reads, as an output, would block for ever; as an input
// (the trace) it is refused as before.
TEST_F(AnalyzeCli, AFifoThatNoProcessReadsIsRefusedNotWaitedOn) {
  const std::string fifo = Path("export-fifo.json");
  ASSERT_EQ(RunCommand("mkfifo " + fifo).exit_code, 0);
  const std::string limit = "timeout 20 ";
  for (const std::string overwrite : {"", " --overwrite"}) {
    const CommandResult r =
        RunCommand(limit + kAnalyze + " export " + Trace() + " --format json --out " + fifo + overwrite);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("a FIFO that no process reads"), std::string::npos) << r.err;
  }
  const CommandResult input = RunCommand(limit + kAnalyze + " info " + fifo);
  EXPECT_EQ(input.exit_code, 2) << input.err;
  EXPECT_NE(input.err.find("not a regular file (a FIFO)"), std::string::npos) << input.err;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

TEST_F(AnalyzeCli, LevelsOutOfRangeAreRefusedBeforeTheyBecomeIntegers) {
  ExpectBadInput("schedule " + Trace() + " --low 1e308", "--low must be a PowerSGD rank");
  ExpectBadInput("schedule " + Trace() + " --high -1e308", "--high must be a PowerSGD rank");
  ExpectBadInput("schedule " + Trace() + " --scheme batch --low 1e300", "--low must be a batch size");
}

TEST_F(AnalyzeCli, TheSyntheticTraceMakerWritesOnlyNewFilesOrWhatItIsToldTo) {
  auto make = [](const std::string& args) { return RunCommand(kSynth + " " + args); };
  const std::string existing = Path("existing.trace");
  std::filesystem::copy_file(Trace(), existing, std::filesystem::copy_options::overwrite_existing);
  const std::string before = test_support::ReadFile(existing);
  const std::string fifo = Path("fifo");
  ASSERT_EQ(RunCommand("mkfifo " + fifo).exit_code, 0);
  for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
           {existing + " --model mlp", "--overwrite replaces it"},
           {fifo + " --model mlp", "not a regular file"},
           {fifo + " --model mlp --overwrite", "not a regular file"},
           {dir() + " --model mlp --overwrite", "is a directory"},
           {"/dev/null --model mlp --overwrite", "not a regular file"},
           {Path("huge.trace") + " --epochs 100000 --workers 1000", "above the limit"}}) {
    const CommandResult r = make(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_EQ(test_support::ReadFile(existing), before);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_FALSE(std::filesystem::exists(Path("huge.trace")));
  const CommandResult replaced = make(existing + " --model mlp --epochs 3 --overwrite");
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_EQ(Analyze("validate " + existing).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(existing + ".partial"));
}

// A run recorded at eta 0.3 and a check every 2 epochs: schedule and
// regimes derive with those, not the controller's defaults (0.5, 10), and
// the schedule is the one the run had; a flag still overrides.
TEST_F(AnalyzeCli, ScheduleAndRegimesTakeTheTracesEtaAndInterval) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 16;
  o.eta = 0.3;
  o.interval = 2;
  o.decay_epochs = {9};
  const std::string trace = Path("eta-0.3-interval-2.trace");
  synthetic::WriteSyntheticTrace(trace, o);
  std::vector<std::vector<double>> recorded(o.epochs);
  for (const EpochLayerRecord& r : TraceReader::Open(trace)->EpochLayers()) recorded[r.epoch].push_back(r.level);

  const CommandResult r = Analyze("schedule " + trace + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["eta"], 0.3);
  EXPECT_EQ(j["interval"], 2);
  ASSERT_EQ(j["epochs"].size(), recorded.size());
  for (size_t e = 0; e < recorded.size(); ++e) {
    EXPECT_EQ(j["epochs"][e]["levels"].get<std::vector<double>>(), recorded[e]) << "epoch " << e;
  }
  const CommandResult table = Analyze("schedule " + trace);
  EXPECT_NE(table.out.find("eta 0.3, check every 2 epochs"), std::string::npos) << table.out;
  const CommandResult flagged = Analyze("schedule " + trace + " --format json --eta 0.5 --interval 10");
  ASSERT_EQ(flagged.exit_code, 0) << flagged.err;
  EXPECT_EQ(nlohmann::json::parse(flagged.out)["interval"], 10);

  const CommandResult regimes = Analyze("regimes " + trace);
  ASSERT_EQ(regimes.exit_code, 0) << regimes.err;
  EXPECT_NE(regimes.out.find("(eta 0.3, every 2 epochs)"), std::string::npos) << regimes.out;
  for (const std::string command : {"schedule", "regimes"}) {
    const std::string help = Analyze(command + " --help").out;
    EXPECT_NE(help.find("default: the trace's run.eta"), std::string::npos) << help;
    EXPECT_NE(help.find("default: the trace's run.interval"), std::string::npos) << help;
  }
}

// The Python hook given no test accuracy: "—", never "0.00%"; null in JSON.
TEST_F(AnalyzeCli, AMetricTheRunDidNotRecordShowsAsADash) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 4;
  o.writer = kWriterPythonHook;
  o.record_test_metrics = false;
  const std::string trace = Path("no-test-accuracy.trace");
  synthetic::WriteSyntheticTrace(trace, o);
  EXPECT_EQ(Analyze("validate " + trace).exit_code, 0);
  const CommandResult info = Analyze("info " + trace);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("test accuracy —, test loss —"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("0.00%"), std::string::npos) << info.out;
  const nlohmann::json j = nlohmann::json::parse(Analyze("info " + trace + " --format json").out);
  EXPECT_TRUE(j["final_test_accuracy"].is_null()) << j.dump();
  EXPECT_TRUE(j["final_test_loss"].is_null()) << j.dump();
  // In the results table beside a run that did record it: left out of the
  // mean, the run still counted.
  const CommandResult table = Analyze("table " + trace);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("| 1 | — |"), std::string::npos) << table.out;
  synthetic::SyntheticTraceOptions seed2 = o;
  seed2.seed = 2;
  seed2.record_test_metrics = true;
  const std::string recorded = Path("with-test-accuracy.trace");
  synthetic::WriteSyntheticTrace(recorded, seed2);
  const CommandResult both = Analyze("table " + trace + " " + recorded);
  EXPECT_NE(both.out.find("| 2 | "), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("(1 of 2 runs)"), std::string::npos) << both.out;
  const nlohmann::json rows = nlohmann::json::parse(Analyze("table " + trace + " --format json").out);
  EXPECT_TRUE(rows[0]["accuracy"].is_null()) << rows.dump();
}

}  // namespace
}  // namespace accordion
