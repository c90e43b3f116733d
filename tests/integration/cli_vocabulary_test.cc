// The toolkit's command lines speak one vocabulary: a flag that several
// tools take has one help line, renamed flags keep their old spelling as a
// deprecated alias that says so, and the one compare-policies prints the
// same thing from accordion-sim and accordion-analyze.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::RunCommand;

const std::string kBin = ACCORDION_BIN_DIR;
const std::string kSim = kBin + "/accordion-sim";
const std::string kAnalyze = kBin + "/accordion-analyze";
const std::string kReport = kBin + "/accordion-report";

bool Built(const std::string& tool) { return std::filesystem::exists(tool); }

// Each option's help description by flag name, from CLI11's help: the
// description starts at column 30, on the flag's line when its name and
// type fit before it, else on the next.
std::map<std::string, std::string> OptionHelp(const std::string& help) {
  std::map<std::string, std::string> options;
  std::istringstream in(help);
  std::string line, flag;
  while (std::getline(in, line)) {
    if (line.rfind("  -", 0) == 0) {
      const std::string names = line.substr(2, line.find(' ', 2) - 2);
      flag = names.substr(names.rfind(',') == std::string::npos ? 0 : names.rfind(',') + 1);
      // A name and type never hold two spaces in a row: the padding does.
      const size_t padding = line.find("  ", 2);
      if (padding != std::string::npos && padding < 30 && line.size() > 30) {
        options[flag] = line.substr(30);
        flag.clear();
      }
    } else if (!flag.empty() && line.size() > 30 && line.find_first_not_of(' ') == 30) {
      options[flag] = line.substr(30);
      flag.clear();
    } else {
      flag.clear();
    }
  }
  return options;
}

// The help sentence without its "(default: ...)": the default is the
// command's own (its options class's), the sentence the concept's.
std::string Sentence(const std::string& description) {
  const size_t d = description.rfind(" (default: ");
  return d == std::string::npos ? description : description.substr(0, d);
}

class CliVocabulary : public test_support::SuiteTempDirTest {
 protected:
  static void SetUpTestSuite() {
    SuiteTempDirTest::SetUpTestSuite();
    const CommandResult r =
        RunCommand(kBin + "/accordion-make-synthetic-trace " + Trace() + " --model mlp --epochs 6 --interval 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void SetUp() override {
    if (!Built(kSim)) GTEST_SKIP() << "accordion-sim is not built (no SimGrid)";
  }
  static std::string Trace() { return Path("mlp.trace"); }

  // Runs `tool args` twice, with the old and the new spelling: both exit 0
  // with the same stdout; the old one notes the new name on stderr, once.
  static void ExpectAlias(const std::string& tool, const std::string& old_args, const std::string& new_args,
                          const std::string& note) {
    const CommandResult old = RunCommand(tool + " " + old_args);
    const CommandResult now = RunCommand(tool + " " + new_args);
    ASSERT_EQ(old.exit_code, 0) << old_args << "\n" << old.err;
    ASSERT_EQ(now.exit_code, 0) << new_args << "\n" << now.err;
    EXPECT_FALSE(now.out.empty()) << new_args;
    EXPECT_EQ(old.out, now.out) << old_args << " | " << new_args;
    EXPECT_NE(old.err.find(note + "\n"), std::string::npos) << old.err;
    EXPECT_EQ(old.err.find(note), old.err.rfind(note)) << "the note twice: " << old.err;
    EXPECT_EQ(now.err.find("deprecated"), std::string::npos) << now.err;
  }
};

TEST_F(CliVocabulary, EveryFlagSharedBetweenToolsHasOneHelpLine) {
  std::map<std::string, std::vector<std::string>> commands = {
      {kSim, {"replay", "compare-policies", "advise", "calibrate", "sweep", "merge", "collective"}},
      {kAnalyze, {"info", "validate", "schedule", "compare-policies", "export", "table", "regimes"}},
      {kReport, {""}}};
  if (!Built(kReport)) commands.erase(kReport);
  // flag -> sentence -> where it was said
  std::map<std::string, std::map<std::string, std::string>> said;
  std::map<std::string, std::set<std::string>> tools_of;
  for (const auto& [tool, subcommands] : commands) {
    for (const std::string& sub : subcommands) {
      const CommandResult r = RunCommand(tool + " " + sub + " --help");
      ASSERT_EQ(r.exit_code, 0) << tool << " " << sub << "\n" << r.err;
      const std::map<std::string, std::string> options = OptionHelp(r.out);
      ASSERT_GT(options.size(), 1u) << tool << " " << sub << "\n" << r.out;
      for (const auto& [flag, description] : options) {
        said[flag][Sentence(description)] = tool + " " + sub;
        tools_of[flag].insert(std::filesystem::path(tool).filename().string());
      }
    }
  }
  // Where each command writes is its own; help and version are CLI11's.
  const std::set<std::string> own = {"--out", "--help", "--version"};
  int shared = 0;
  for (const auto& [flag, sentences] : said) {
    if (tools_of[flag].size() < 2 || own.count(flag)) continue;
    ++shared;
    std::string all;
    for (const auto& [sentence, where] : sentences) all += "\n  " + where + ": " + sentence;
    EXPECT_EQ(sentences.size(), 1u) << flag << " is said " << sentences.size() << " ways:" << all;
  }
  // Not vacuous: the schedule's flags are in all three tools, the cluster's in two.
  for (const std::string flag : {"--eta", "--interval", "--scheme", "--low", "--format", "--overwrite"}) {
    EXPECT_GE(tools_of[flag].size(), 2u) << flag;
  }
  if (Built(kReport)) {
    for (const std::string flag : {"--workers", "--bandwidth-gbps", "--topology", "--network-model", "--timing"}) {
      EXPECT_GE(tools_of[flag].size(), 2u) << flag;
    }
  }
  EXPECT_GE(shared, 10);
}

TEST_F(CliVocabulary, HelpShowsOnlyTheNewNames) {
  const std::string sweep = RunCommand(kSim + " sweep --help").out;
  EXPECT_NE(sweep.find("--etas "), std::string::npos) << sweep;
  EXPECT_EQ(sweep.find("--eta "), std::string::npos) << sweep;
  const std::string collective = RunCommand(kSim + " collective --help").out;
  EXPECT_NE(collective.find("--nccl-chunk-kib "), std::string::npos) << collective;
  EXPECT_EQ(collective.find("--nccl-chunk-kb "), std::string::npos) << collective;
  const std::string replay = RunCommand(kSim + " replay --help").out;
  EXPECT_EQ(replay.find("--model"), std::string::npos) << replay;
  if (Built(kReport)) {
    const std::string report = RunCommand(kReport + " --help").out;
    EXPECT_NE(report.find("--timing "), std::string::npos) << report;
    EXPECT_EQ(report.find("--simulate"), std::string::npos) << report;
  }
}

TEST_F(CliVocabulary, DeprecatedAliasesStillWorkAndSayTheNewName) {
  const std::string sweep = "sweep " + Trace() + " --timing analytic --workers 4 ";
  ExpectAlias(kSim, sweep + "--eta 0.3,0.5", sweep + "--etas 0.3,0.5",
              "accordion-sim: note: --eta is deprecated; use --etas");
  const std::string collective = "collective --workers 4 --bytes 1e6 --allreduce nccl-ring ";
  ExpectAlias(kSim, collective + "--nccl-chunk-kb 64", collective + "--nccl-chunk-kib 64",
              "accordion-sim: note: --nccl-chunk-kb is deprecated; use --nccl-chunk-kib");
  const std::string replay = "replay " + Trace() + " --workers 4 ";
  ExpectAlias(kSim, replay + "--model analytic", replay + "--timing analytic",
              "accordion-sim: note: --model is deprecated; use --timing");
  ExpectAlias(kAnalyze, "info " + Trace() + " --format text", "info " + Trace() + " --format table",
              "accordion-analyze: note: --format text is deprecated; use --format table");
  ExpectAlias(kAnalyze, "table " + Trace() + " --format markdown", "table " + Trace() + " --format table",
              "accordion-analyze: note: --format markdown is deprecated; use --format table");
  // The alias is the flag: its value is checked, and both at once is an error.
  EXPECT_NE(RunCommand(kSim + " " + sweep + "--eta 0.3,0").err.find("must be above 0"), std::string::npos);
  const CommandResult both = RunCommand(kSim + " " + sweep + "--eta 0.3 --etas 0.5");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("give only --etas"), std::string::npos) << both.err;
}

TEST_F(CliVocabulary, ReportSimulateIsTimingSimulate) {
  if (!Built(kReport)) GTEST_SKIP() << "accordion-report is not built (no Qt)";
  auto run = [&](const std::string& name, const std::string& flags) {
    const CommandResult r =
        RunCommand(kReport + " " + Trace() + " --out " + Path(name) + " --workers 4 --bandwidth-gbps 10 " + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.err;
    std::ifstream in(Path(name) + "/index.html");
    std::stringstream html;
    html << in.rdbuf();
    return std::make_pair(r.err, html.str());
  };
  const auto [old_err, old_html] = run("old", "--simulate");
  const auto [new_err, new_html] = run("new", "--timing simulate");
  const auto [plain_err, plain_html] = run("plain", "");
  EXPECT_NE(old_err.find("accordion-report: note: --simulate is deprecated; use --timing simulate\n"),
            std::string::npos)
      << old_err;
  EXPECT_EQ(new_err.find("deprecated"), std::string::npos) << new_err;
  const std::string simgrid = "<h3>SimGrid replay</h3>";
  EXPECT_NE(old_html.find(simgrid), std::string::npos);
  EXPECT_NE(new_html.find(simgrid), std::string::npos);
  EXPECT_EQ(plain_html.find(simgrid), std::string::npos);
}

// The timing method is "timing", never "model" (the trained network, or
// SimGrid's --network-model).
TEST_F(CliVocabulary, ReplaySaysTimingForTheTimingMethod) {
  const CommandResult r = RunCommand(kSim + " replay " + Trace() + " --workers 4 --timing analytic");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\ntiming:   analytic alpha-beta model"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nmodel:"), std::string::npos) << r.out;
  const CommandResult json = RunCommand(kSim + " replay " + Trace() + " --workers 4 --timing analytic --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"timing\": \"analytic\""), std::string::npos) << json.out;
}

TEST_F(CliVocabulary, ComparePoliciesIsOneCommandInBothTools) {
  for (const std::string format : {"table", "json"}) {
    const std::string args = " compare-policies " + Trace() + " --workers 4 --timing analytic --format " + format;
    const CommandResult sim = RunCommand(kSim + args);
    const CommandResult analyze = RunCommand(kAnalyze + args);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    ASSERT_EQ(analyze.exit_code, 0) << analyze.err;
    EXPECT_NE(sim.out.find("projected"), std::string::npos) << sim.out;  // the projection, not floats alone
    EXPECT_EQ(analyze.out, sim.out) << format;
  }
  const CommandResult bad = RunCommand(kAnalyze + " compare-policies " + Trace() + " --workers 0");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace accordion
