// A live run's files are untouchable: every tool that writes an output, told
// to --overwrite a trace a live TraceWriter holds, or to write into a
// directory a live run holds (LockDirectory: a trainer's --checkpoint-dir),
// refuses in one line with exit code 2 and leaves the file as it was.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/output_file.h"
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

const std::string kBin = ACCORDION_BIN_DIR;
const std::string kSynth = kBin + "/accordion-make-synthetic-trace";
const std::string kAnalyze = kBin + "/accordion-analyze";
const std::string kSim = kBin + "/accordion-sim";
const std::string kBench = kBin + "/accordion-bench-collectives";

bool Built(const std::string& tool) { return ::access(tool.c_str(), X_OK) == 0; }

// Every tool that writes a file, told to write `out` (with --overwrite);
// `input` is a finished trace to read, `bench` collective timings in
// accordion-bench-collectives' format that calibrate fits. The simulator and the collective
// benchmark are in the list where they are built.
std::vector<std::string> EveryWriter(const std::string& input, const std::string& bench, const std::string& out) {
  std::vector<std::string> commands = {
      kSynth + " " + out + " --model mlp --epochs 2 --samples 1 --overwrite",
      kAnalyze + " export " + input + " --format json --out " + out + " --overwrite",
  };
  if (Built(kSim)) {
    commands.push_back(kSim + " replay " + input + " --out " + out + " --overwrite");
    commands.push_back(kSim + " replay " + input + " --timeline " + out + " --overwrite");
    commands.push_back(kSim + " sweep " + input + " --bandwidth-gbps 1,10 --out " + out + " --overwrite");
    commands.push_back(kSim + " calibrate " + bench + " --segments 1e12 --out " + out + " --overwrite");
  }
  if (Built(kBench)) {
    commands.push_back(kBench + " --nproc 1 --max-bytes 4K --warmup 1 --iters 1 --out " + out + " --overwrite");
  }
  return commands;
}

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st;
}

class LiveFiles : public test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const CommandResult r = RunCommand(kSynth + " " + Input() + " --model mlp --workers 2 --epochs 3 --samples 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // 2 ranks, all-reduce, o = 60 us, B = 0.9375 GB/s: a fit calibrate accepts.
    std::ofstream bench(Bench());
    bench << R"({"format": "accordion-bench-collectives", "samples": [)";
    for (int64_t bytes = 4096; bytes <= 64000000; bytes *= 4) {
      bench << (bytes == 4096 ? "" : ",") << R"({"op": "allreduce", "world_size": 2, "bytes": )" << bytes
            << R"(, "median_s": )" << 60e-6 + static_cast<double>(bytes) / 0.9375e9 << "}";
    }
    bench << "]}\n";
  }
  std::string Input() const { return Path("finished.trace"); }
  std::string Bench() const { return Path("bench.json"); }

  // Exit 2, one line on stderr holding `fragment`.
  static void ExpectRefused(const std::string& command, const std::string& fragment) {
    const CommandResult r = RunCommand(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << command << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << command << "\n" << r.err;
  }
};

TEST_F(LiveFiles, NoToolsOverwriteReplacesATraceALiveRunIsWriting) {
  const std::string live = Path("live.trace");
  auto writer = TraceWriter::Create(live, synthetic::MlpRun("synthetic", 512, 64, 30), synthetic::MlpLayers());
  ASSERT_TRUE(TraceBeingWritten(live));
  const struct stat before = StatOf(live);
  for (const std::string& command : EveryWriter(Input(), Bench(), live)) {
    ExpectRefused(command, "is being written by another process");
    const struct stat after = StatOf(live);
    EXPECT_EQ(after.st_ino, before.st_ino) << command << ": the live trace was replaced";
    EXPECT_EQ(after.st_size, before.st_size) << command;
    EXPECT_TRUE(TraceBeingWritten(live)) << command;
    EXPECT_FALSE(std::filesystem::exists(live + ".partial")) << command;
  }
  // The run goes on and ends with its own trace, complete.
  writer->Finish(RunStatus::kComplete);
  writer.reset();
  auto reader = TraceReader::Open(live);
  EXPECT_EQ(reader->run().status, RunStatus::kComplete);
  EXPECT_EQ(reader->run().epochs_planned, 30);
  // Once the run is over, --overwrite replaces the finished trace as before.
  const CommandResult r = RunCommand(kSynth + " " + live + " --model mlp --epochs 2 --samples 1 --overwrite");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LiveFiles, NoToolWritesIntoADirectoryALiveRunHolds) {
  const std::string held = Path("ckpt");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // a run holding its checkpoint directory, as accordion-train does
    LockDirectory(held, "--checkpoint-dir " + held);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(DirectoryInUse(held));
  // A second holder is refused in one line.
  EXPECT_THROW(LockDirectory(held, "--checkpoint-dir " + held), InputError);
  const std::string manifest = held + "/checkpoint.json";
  std::ofstream(manifest) << "{}\n";
  for (const std::string& command : EveryWriter(Input(), Bench(), manifest)) {
    ExpectRefused(command, "is in use by a running accordion-train");
    EXPECT_EQ(test_support::ReadFile(manifest), "{}\n") << command;
  }
  ::kill(pid, SIGKILL);  // the lock dies with its process, however it ends
  ::waitpid(pid, nullptr, 0);
  EXPECT_FALSE(DirectoryInUse(held));
  const CommandResult r = RunCommand(kAnalyze + " export " + Input() + " --format json --out " + held + "/x.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace accordion
