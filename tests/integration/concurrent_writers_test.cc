// Two writers of one output, started together, many times: one claims the
// output (common/output_file.h), the other is refused in one line with exit
// code 2 before it writes anything, and what is there afterwards is always
// one run's whole output - for every tool that writes. And a writer stopped
// by a signal leaves nothing that blocks its rerun; one killed outright
// leaves stale partial files that the rerun replaces.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::CountLines;
using test_support::ReadFile;
using test_support::RunCommand;

const std::string kBin = ACCORDION_BIN_DIR;
const std::string kSamples = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/";
const std::string kSim = kBin + "/accordion-sim";
const std::string kAnalyze = kBin + "/accordion-analyze";
const std::string kReport = kBin + "/accordion-report";
const std::string kSynth = kBin + "/accordion-make-synthetic-trace";

bool Built(const std::string& tool) { return ::access(tool.c_str(), X_OK) == 0; }

// Starts `command` under /bin/sh, its output into `log`; returns its pid.
pid_t Start(const std::string& command, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// The exit code, or 128 + the signal that ended it.
int Wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every regular file under `path` (itself, if a file) with its bytes,
// by its path relative to `path`.
std::map<std::string, std::string> Contents(const std::string& path) {
  std::map<std::string, std::string> files;
  if (std::filesystem::is_regular_file(path)) {
    files[""] = ReadFile(path);
  } else if (std::filesystem::is_directory(path)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(path)) {
      if (e.is_regular_file()) files[std::filesystem::relative(e.path(), path).string()] = ReadFile(e.path().string());
    }
  }
  return files;
}

// Whatever a writer of `out` leaves beside it while it works: "<out>.partial",
// "<dir>/<table>.csv.partial", a report's hidden ".<name>.partial-XXXXXX".
std::vector<std::string> Leftovers(const std::string& out) {
  std::vector<std::string> found;
  const std::filesystem::path p(out);
  for (const std::filesystem::path& dir : {p.parent_path(), p}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().filename().string().find(".partial") != std::string::npos) found.push_back(e.path().string());
    }
  }
  return found;
}

struct Writer {
  std::string name;
  std::string a, b;   // two commands writing OUT (a placeholder) differently
  bool slow = false;  // runs long enough that starting together must overlap
};

class ConcurrentWriters : public test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    // Two traces large enough that an export takes most of a second.
    for (const char* name : {"big-a.trace", "big-b.trace"}) {
      const CommandResult r = RunCommand(kSynth + " " + Path(name) + " --model resnet18 --epochs 60 --samples 40 " +
                                         (std::string(name) == "big-a.trace" ? "--seed 1" : "--seed 2"));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    for (const auto& [name, scale] : {std::pair{"bench-a.json", 1.0}, std::pair{"bench-b.json", 2.0}}) {
      std::ofstream bench(Path(name));
      bench << R"({"format": "accordion-bench-collectives", "samples": [)";
      for (int64_t bytes = 4096; bytes <= 64000000; bytes *= 4) {
        bench << (bytes == 4096 ? "" : ",") << R"({"op": "allreduce", "world_size": 2, "bytes": )" << bytes
              << R"(, "median_s": )" << scale * (60e-6 + static_cast<double>(bytes) / 0.9375e9) << "}";
      }
      bench << "]}\n";
    }
  }

  std::vector<Writer> Writers() const {
    const std::string powersgd = kSamples + "fmnist-mlp-powersgd-accordion.trace";
    const std::string topk = kSamples + "fmnist-mlp-topk-accordion.trace";
    std::vector<Writer> w = {
        {"export csv", kAnalyze + " export " + Path("big-a.trace") + " --out OUT --overwrite",
         kAnalyze + " export " + Path("big-b.trace") + " --out OUT --overwrite", true},
        {"export json", kAnalyze + " export " + Path("big-a.trace") + " --format json --out OUT --overwrite",
         kAnalyze + " export " + Path("big-b.trace") + " --format json --out OUT --overwrite", true},
    };
    if (Built(kSim)) {
      const std::string grid = " --bandwidth-gbps 1,2,3,4,5,6,7,8 --timing simulate --out OUT --overwrite";
      w.push_back({"sweep", kSim + " sweep " + powersgd + grid, kSim + " sweep " + topk + grid, true});
      w.push_back({"replay", kSim + " replay " + powersgd + " --format json --out OUT --overwrite",
                   kSim + " replay " + topk + " --format json --out OUT --overwrite"});
      w.push_back({"timeline", kSim + " replay " + powersgd + " --timeline OUT --overwrite",
                   kSim + " replay " + topk + " --timeline OUT --overwrite"});
      w.push_back({"calibrate", kSim + " calibrate " + Path("bench-a.json") + " --out OUT --overwrite",
                   kSim + " calibrate " + Path("bench-b.json") + " --out OUT --overwrite"});
    }
    if (Built(kReport)) {
      w.push_back({"report", kReport + " " + powersgd + " --out OUT --overwrite",
                   kReport + " " + topk + " --out OUT --overwrite", true});
    }
    return w;
  }

  static std::string With(std::string command, const std::string& out) {
    return command.replace(command.find("OUT"), 3, out);
  }
};

TEST_F(ConcurrentWriters, TwoWritersOfOneOutputLeaveOneRunsWholeOutput) {
  constexpr int kRounds = 4;
  for (const Writer& w : Writers()) {
    SCOPED_TRACE(w.name);
    std::string tag = w.name;
    std::replace(tag.begin(), tag.end(), ' ', '-');
    // What each writes alone.
    const std::string alone_a = Path(tag + "-alone-a"), alone_b = Path(tag + "-alone-b");
    ASSERT_EQ(RunCommand(With(w.a, alone_a)).exit_code, 0);
    ASSERT_EQ(RunCommand(With(w.b, alone_b)).exit_code, 0);
    const auto whole_a = Contents(alone_a), whole_b = Contents(alone_b);
    ASSERT_NE(whole_a, whole_b);
    int refused = 0;
    for (int round = 0; round < kRounds; ++round) {
      const std::string out = Path(tag + "-together." + std::to_string(round));
      const pid_t pa = Start(With(w.a, out), Path("a.log")), pb = Start(With(w.b, out), Path("b.log"));
      const int ra = Wait(pa), rb = Wait(pb);
      for (const auto& [code, log] : {std::pair{ra, Path("a.log")}, std::pair{rb, Path("b.log")}}) {
        if (code == 0) continue;
        const std::string said = ReadFile(log);
        EXPECT_EQ(code, 2) << said;
        EXPECT_NE(said.find("is being written by another process"), std::string::npos) << said;
        EXPECT_EQ(CountLines(said), 1) << said;
        ++refused;
      }
      EXPECT_TRUE(ra == 0 || rb == 0) << "both refused";
      auto got = Contents(out);
      if (w.name == "report") {
        // The report names its --out in its command line: compare which
        // trace it shows, and that every file of its own list is there.
        const std::string& index = got["index.html"];
        EXPECT_NE(index.find("powersgd") != std::string::npos, index.find("topk-accordion") != std::string::npos);
        EXPECT_EQ(got.size(), (index.find("topk-accordion") != std::string::npos ? whole_b : whole_a).size());
      } else {
        EXPECT_TRUE(got == whole_a || got == whole_b) << "round " << round << ": a mix of both, or neither";
      }
      EXPECT_TRUE(Leftovers(out).empty()) << Leftovers(out).front();
    }
    // Started together, runs this long overlap: the claim was contested.
    if (w.slow) {
      EXPECT_GT(refused, 0);
    }
  }
}

TEST_F(ConcurrentWriters, AStoppedWriterLeavesNothingThatBlocksItsRerun) {
  for (const Writer& w : Writers()) {
    if (!w.slow || w.name == "export json") continue;
    SCOPED_TRACE(w.name);
    std::string tag = w.name;
    std::replace(tag.begin(), tag.end(), ' ', '-');
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGKILL}) {
      SCOPED_TRACE(signal);
      const std::string out = Path(tag + "-stopped." + std::to_string(signal));
      const pid_t pid = Start(With(w.a, out), Path("stopped.log"));
      // Once it holds its claim (the first partial appears) and a little more.
      for (int i = 0; i < 500 && Leftovers(out).empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      ::kill(pid, signal);
      const int code = Wait(pid);
      if (code == 0) continue;  // it finished first: nothing to check
      EXPECT_EQ(code, 128 + signal) << ReadFile(Path("stopped.log"));
      if (signal != SIGKILL) {
        EXPECT_TRUE(Leftovers(out).empty()) << Leftovers(out).front();
      }
      // The rerun is not blocked; a SIGKILL's stale partial files are replaced.
      const CommandResult rerun = RunCommand(With(w.a, out));
      EXPECT_EQ(rerun.exit_code, 0) << rerun.err;
      EXPECT_TRUE(Leftovers(out).empty()) << Leftovers(out).front();
    }
  }
}

// A partial file whose claim is held is another writer's: refused, and left
// as it is. One nobody holds that the toolkit made (its mark, as a SIGKILL
// leaves it) is a stopped run's: replaced.
TEST_F(ConcurrentWriters, AHeldPartialIsRefusedAndAStaleOneReplaced) {
  if (!Built(kSim)) GTEST_SKIP() << "accordion-sim not built";
  const std::string out = Path("held.csv");
  const std::string command = kSim + " sweep " + kSamples +
                              "fmnist-mlp-powersgd-accordion.trace --bandwidth-gbps 1 --timing analytic --out " + out;
  std::ofstream(out + ".partial") << "half a row";
  const int fd = ::open((out + ".partial").c_str(), O_RDWR);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const CommandResult held = RunCommand(command);
  EXPECT_EQ(held.exit_code, 2);
  EXPECT_EQ(CountLines(held.err), 1) << held.err;
  EXPECT_NE(held.err.find("is being written by another process (it holds " + out + ".partial)"), std::string::npos)
      << held.err;
  EXPECT_EQ(ReadFile(out + ".partial"), "half a row");
  EXPECT_FALSE(std::filesystem::exists(out));
  ::close(fd);  // the holder is gone: what it left is stale
  ASSERT_EQ(::setxattr((out + ".partial").c_str(), "user.accordion.output-claim", "accordion-toolkit", 17, 0), 0);
  const CommandResult stale = RunCommand(command);
  EXPECT_EQ(stale.exit_code, 0) << stale.err;
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
  EXPECT_EQ(ReadFile(out).rfind("bandwidth_gbps,", 0), 0u) << ReadFile(out);
}

// What sits at "<out>.partial" without the toolkit's mark is not a stopped
// run's: a hard link there (to the very trace the tool reads) and a file of
// the user's are refused in one line and left as they were. A hard link was
// once truncated in place, emptying the file it linked; a user's notes were
// renamed into the output.
TEST_F(ConcurrentWriters, APartialTheToolkitDidNotMakeIsRefusedAndLeftAsItIs) {
  if (!Built(kSim)) GTEST_SKIP() << "accordion-sim not built";
  const std::string input = Path("in.trace");
  std::filesystem::copy_file(kSamples + "fmnist-mlp-powersgd-accordion.trace", input);
  const std::string before = ReadFile(input);
  const std::string linked = Path("linked.txt");
  ASSERT_EQ(::link(input.c_str(), (linked + ".partial").c_str()), 0);
  const CommandResult hard = RunCommand(kSim + " advise " + input + " --out " + linked);
  EXPECT_EQ(hard.exit_code, 2);
  EXPECT_EQ(CountLines(hard.err), 1) << hard.err;
  EXPECT_NE(hard.err.find("is a hard link to another file"), std::string::npos) << hard.err;
  EXPECT_EQ(ReadFile(input), before) << "the input behind the link must be whole";
  EXPECT_FALSE(std::filesystem::exists(linked));

  const std::string noted = Path("advice.txt");
  std::ofstream(noted + ".partial") << "my notes\n";
  const CommandResult own = RunCommand(kSim + " advise " + input + " --out " + noted);
  EXPECT_EQ(own.exit_code, 2);
  EXPECT_EQ(CountLines(own.err), 1) << own.err;
  EXPECT_NE(own.err.find("exists and was not made by this toolkit"), std::string::npos) << own.err;
  EXPECT_EQ(ReadFile(noted + ".partial"), "my notes\n");
  EXPECT_FALSE(std::filesystem::exists(noted));
}

// --out FIFO with an ordinary reader (cat FIFO > file): the reader gets the
// whole output. The up-front check once opened and closed the FIFO, so the
// reader saw its end before anything was written.
TEST_F(ConcurrentWriters, AFifoWithAnOrdinaryReaderGetsTheWholeOutput) {
  if (!Built(kSim)) GTEST_SKIP() << "accordion-sim not built";
  const std::string fifo = Path("out.fifo");
  const std::string got = Path("got.txt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t reader = ::fork();
  if (reader == 0) {
    ::execl("/bin/sh", "sh", "-c", ("cat " + fifo + " > " + got).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // cat blocks in open() until a writer comes; until it is there, the tool
  // says the FIFO has no reader (and leaves it be): try again shortly.
  CommandResult advised;
  const std::string command =
      kSim + " advise " + kSamples + "policies/seed-1/fmnist-mlp-powersgd-accordion.trace --out " + fifo;
  for (int attempt = 0; attempt < 50; ++attempt) {
    advised = RunCommand(command);
    if (advised.err.find("no process reads") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  int status = 0;
  ::waitpid(reader, &status, 0);
  EXPECT_EQ(advised.exit_code, 0) << advised.err;
  const std::string text = ReadFile(got);
  EXPECT_GT(text.size(), 100u) << text;
  EXPECT_NE(text.find("eta"), std::string::npos) << text;
}

}  // namespace
}  // namespace accordion
