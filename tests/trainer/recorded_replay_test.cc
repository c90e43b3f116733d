// The route a user takes: record a real run (2 Gloo workers on loopback, the
// network probe on by default), then replay it with no flags at all. The
// replay is anchored on the network the trace measured, so it reproduces
// the measured median step for every scheme; and a run without the probe
// says so. Drives accordion-train and accordion-sim as a user would.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_command.h"
#include "tests/trainer/train_support.h"
#include "traces/schema.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::kQuickRun;
using test_support::RunCommand;
using test_support::Train;

const std::string kSim = std::string(ACCORDION_BIN_DIR) + "/accordion-sim";

using test_support::TempDirTest;

class RecordedReplayTest : public TempDirTest {
 protected:
  // Records `scheme_flags` and returns the trace's path.
  std::string Record(const std::string& name, const std::string& scheme_flags, const std::string& extra = "") {
    const std::string trace = Path(name + ".trace");
    const CommandResult r =
        Train(kQuickRun + " --epochs 4 --nproc 2 --threads 1 --trace " + trace + " " + scheme_flags + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return trace;
  }
  // accordion-sim replay's JSON, with no flags but the format.
  static nlohmann::json Replay(const std::string& trace, const std::string& flags = "") {
    const CommandResult r = RunCommand(kSim + " replay " + trace + " --format json " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
};

TEST_F(RecordedReplayTest, AReplayWithNoFlagsReproducesTheMeasuredStepOfEveryScheme) {
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"dense", "--scheme dense"},
      {"powersgd-accordion", "--scheme powersgd --policy accordion --low 2 --high 1 --interval 1"},
      {"topk", "--scheme topk --level 0.1"},
      {"batch-accordion", "--scheme batch --policy accordion --low 64 --high 128 --interval 1"},
  };
  for (const auto& [name, flags] : runs) {
    const std::string trace = Record(name, flags);
    const nlohmann::json j = Replay(trace);
    ASSERT_TRUE(j.contains("measured_vs_replayed")) << name << ": " << j.dump();
    const double error = j["measured_vs_replayed"]["median_relative_error"];
    EXPECT_LT(std::abs(error), 0.02) << name << ": measured "
                                     << j["measured_vs_replayed"]["median_measured_iteration_s"] << " s, replayed "
                                     << j["measured_vs_replayed"]["median_replayed_iteration_s"] << " s";
    bool anchored = false;
    for (const auto& note : j["notes"]) anchored = anchored || note.get<std::string>().rfind("anchored", 0) == 0;
    EXPECT_TRUE(anchored) << name << ": " << j["notes"].dump();
  }
}

TEST_F(RecordedReplayTest, TheTraceNamesItsWriterAndItsProbeUnlessToldNotToProbe) {
  const std::string probed = Record("probed", "--scheme dense");
  const CommandResult info = RunCommand(test_support::kAnalyze + " info " + probed + " --format json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["schema_version"], kTraceSchemaVersion);
  EXPECT_EQ(j["writer"], "accordion-train");
  EXPECT_EQ(j["ranks_per_node"], 2);
  EXPECT_GE(j["network_probe_rows"].get<int>(), 20);  // two ops, at least two sizes, five repeats

  const std::string plain = Record("plain", "--scheme dense", "--no-network-probe");
  const CommandResult plain_info = RunCommand(test_support::kAnalyze + " info " + plain + " --format json");
  ASSERT_EQ(plain_info.exit_code, 0) << plain_info.err;
  EXPECT_EQ(nlohmann::json::parse(plain_info.out)["network_probe_rows"], 0);
  const nlohmann::json r = Replay(plain);
  for (const auto& note : r["notes"]) EXPECT_EQ(note.get<std::string>().rfind("anchored", 0), std::string::npos);
}

}  // namespace
}  // namespace accordion
