// accordion-bench-collectives end to end: real worker processes, real Gloo,
// its table, its JSON, and that JSON through accordion-sim calibrate into a
// platform accordion-sim replay accepts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::CountLines;
using test_support::RunCommand;

const std::string kBench = std::string(ACCORDION_BIN_DIR) + "/accordion-bench-collectives";
const std::string kSim = std::string(ACCORDION_BIN_DIR) + "/accordion-sim";
const std::string kMakeTrace = std::string(ACCORDION_BIN_DIR) + "/accordion-make-synthetic-trace";

struct Row {
  int64_t size = 0;
  int64_t count = 0;
  std::string type, op;
  double time_us = 0, min_us = 0, algbw = 0, busbw = 0;
};

// The table's rows (lines not starting with '#'), after the header line.
std::vector<Row> ParseTable(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream in(out);
  std::string line;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = line.find("busbw(GB/s)") != std::string::npos;
      continue;
    }
    Row r;
    std::istringstream fields(line);
    fields >> r.size >> r.count >> r.type >> r.op >> r.time_us >> r.min_us >> r.algbw >> r.busbw;
    if (fields) rows.push_back(r);
  }
  return rows;
}

using BenchCli = test_support::TempDirTest;

TEST_F(BenchCli, TwoRanksTimeEverySizeAndOpAndFeedCalibrate) {
  const std::string json = Path("bench.json");
  // Up to 4 MiB, so that size shows through a loaded machine's noise and
  // calibrate can fit a bandwidth.
  const CommandResult r = RunCommand(kBench + " --nproc 2 --min-bytes 1K --max-bytes 4M --factor 16 --warmup 1" +
                                     " --iters 2 --out " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::vector<Row> rows = ParseTable(r.out);
  std::set<std::pair<std::string, int64_t>> seen;
  for (const Row& row : rows) {
    seen.insert({row.op, row.size});
    EXPECT_EQ(row.type, "float");
    EXPECT_EQ(row.count * 4, row.size);
    EXPECT_GT(row.time_us, 0);
    EXPECT_LE(row.min_us, row.time_us);
    // algbw = size / time, in GB/s; busbw by nccl-tests' factors for n = 2.
    EXPECT_NEAR(row.algbw, row.size / (row.time_us * 1e-6) / 1e9, 0.0006 + 0.002 * row.algbw) << row.op;
    const double factor = row.op == "allreduce" ? 2.0 * (2 - 1) / 2 : row.op == "allgather" ? 0.5 : 1.0;
    EXPECT_NEAR(row.busbw, row.algbw * factor, 0.0011 + 0.001 * row.algbw) << row.op << " " << row.size;
  }
  EXPECT_EQ(rows.size(), 12u) << r.out;
  for (const char* op : {"allreduce", "allgather", "broadcast"}) {
    for (int64_t size : {1024, 16384, 262144, 4194304}) EXPECT_TRUE(seen.count({op, size})) << op << " " << size;
  }

  // Every sample, in the simulator's bytes.
  ASSERT_TRUE(std::filesystem::exists(json));
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json));
  EXPECT_EQ(j.at("format"), "accordion-bench-collectives");
  EXPECT_EQ(j.at("world_size"), 2);
  ASSERT_EQ(j.at("samples").size(), 12u);
  for (const nlohmann::json& s : j.at("samples")) {
    EXPECT_EQ(s.at("world_size"), 2);
    EXPECT_EQ(s.at("iterations"), 2);
    EXPECT_LE(s.at("min_s").get<double>(), s.at("median_s").get<double>());
    const int64_t size = s.at("size_bytes");
    EXPECT_EQ(s.at("bytes").get<int64_t>(), s.at("op") == "allgather" ? size / 2 : size);
  }
  EXPECT_FALSE(std::filesystem::exists(json + ".partial"));

  // An existing --out is not replaced without --overwrite, and no worker starts.
  const CommandResult again = RunCommand(kBench + " --nproc 2 --max-bytes 4K --out " + json);
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_EQ(CountLines(again.err), 1) << again.err;
  EXPECT_NE(again.err.find("--overwrite"), std::string::npos) << again.err;
  EXPECT_TRUE(again.out.empty()) << again.out;

  if (!std::filesystem::exists(kSim)) GTEST_SKIP() << "accordion-sim is not built: calibrate not checked";
  // Loopback beside other tests on a 2-core machine is no network to fit
  // well: this checks that the file feeds calibrate, not the fit's quality.
  const CommandResult cal =
      RunCommand(kSim + " calibrate " + json + " --segments 1e12 --max-rms-error 10 --out " + Path("platform.json"));
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("12 at 2 ranks"), std::string::npos) << cal.out;
  EXPECT_NE(cal.out.find("o (per collective)"), std::string::npos) << cal.out;
  const CommandResult trace = RunCommand(kMakeTrace + " " + Path("mlp.trace") + " --model mlp --workers 2 --epochs 3");
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  const CommandResult replay = RunCommand(kSim + " replay " + Path("mlp.trace") + " --platform " +
                                          Path("platform.json") + " --workers 4 --interval 2 --bandwidth-gbps 5");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find("star of 4 hosts"), std::string::npos) << replay.out;
}

TEST_F(BenchCli, BadFlagsAreOneLineAndExitTwo) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--factor 1", "--factor"},
      {"--min-bytes 1X", "not a size"},
      {"--min-bytes 64K --max-bytes 1K", "--max-bytes"},
      {"--ops allreduce,scatter", "scatter"},
      {"--iters 0", "--iters"},
      {"--backend mpi", "--backend"},
      {"--no-such-flag", "no-such-flag"},
      {"--nproc 0", "--nproc"},
      {"--out " + Path("missing/dir/b.json"), "does not exist"},
      {"--bind-addr 192.0.2.1", "--bind-addr 192.0.2.1 is not an address of this machine"},
  };
  for (const auto& [args, fragment] : cases) {
    const CommandResult r = RunCommand(kBench + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("accordion-bench-collectives: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
  const CommandResult help = RunCommand(kBench + " --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--ops", "--min-bytes", "--max-bytes", "--factor", "--warmup", "--iters", "--out"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
}

// --nproc 1000 forked ~100 MB workers until memory ran out; what the
// machine cannot hold is refused before any worker starts, and --help says
// what it holds (checked first: a launcher without the check forks them all).
TEST_F(BenchCli, MoreWorkersThanTheMachineHoldsAreRefusedBeforeAnyStarts) {
  const CommandResult help = RunCommand(kBench + " --help");
  ASSERT_NE(help.out.find("at most 8 per core, one per 128 MiB of available memory, within the process limit"),
            std::string::npos)
      << help.out;
  for (const std::string nproc : {"1000", "2000000000"}) {
    const CommandResult r = RunCommand("timeout -k 5 60 " + kBench + " --nproc " + nproc);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("accordion-bench-collectives: error: --nproc " + nproc + ": this machine has "),
              std::string::npos)
        << r.err;
  }
}

// --out on a read-only or full file system is refused before any worker
// starts; it was found after the whole benchmark had run. A tmpfs in a
// mount namespace of the test's own stands in for the disk (needs root).
TEST_F(BenchCli, AReadOnlyOrFullOutDirectoryIsRefusedBeforeAnyWorkerStarts) {
  if (::geteuid() != 0 || RunCommand("unshare -m true").exit_code != 0) {
    GTEST_SKIP() << "needs root and unshare for a small file system of its own";
  }
  const std::string mnt = Path("small");
  std::filesystem::create_directories(mnt);
  const std::string fill = "dd if=/dev/zero of=" + mnt + "/fill bs=1k count=4096 2>/dev/null; ";
  for (const auto& [mount, fragment, code] : std::vector<std::tuple<std::string, std::string, int>>{
           {"ro,size=1m", "cannot write in", 2}, {"size=4m", "is full (0 KiB free", 4}}) {
    const CommandResult r = RunCommand("unshare -m sh -c 'mount -t tmpfs -o " + mount + " tmpfs " + mnt + " && " +
                                       (mount == "size=4m" ? fill : std::string()) + "exec " + kBench +
                                       " --nproc 2 --max-bytes 4K --out " + mnt + "/b.json'");
    EXPECT_EQ(r.exit_code, code) << mount << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << mount << "\n" << r.err;
    EXPECT_NE(r.err.find("--out " + mnt + "/b.json: " + (code == 2 ? "" : "the file system of ")), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << mount << "\n" << r.err;
    EXPECT_EQ(r.out.find("# "), std::string::npos) << "no worker ran: " << r.out;
  }
}

}  // namespace
}  // namespace accordion
