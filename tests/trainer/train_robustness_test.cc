// accordion-train when things go wrong: a worker killed outright, Ctrl-C,
// and resuming from the checkpoint afterwards.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "common/errors.h"
#include "common/output_file.h"
#include "tests/trainer/data_writers.h"
#include "tests/trainer/torchscript_files.h"
#include "tests/trainer/train_support.h"
#include "traces/trace_validator.h"
#include "trainer/launcher.h"

namespace accordion {
namespace {

using test_support::BackgroundRun;
using test_support::CommandResult;
using test_support::CountLines;
using test_support::kQuickRun;
using test_support::ReadTrace;
using test_support::TraceContent;
using test_support::Train;

using TrainRobustness = test_support::TempDirTest;

TEST_F(TrainRobustness, AKilledWorkerEndsTheRunWithAnErrorNotAHang) {
  const std::string trace = Path("killed.trace");
  BackgroundRun run(kQuickRun + " --nproc 2 --epochs 500 --trace " + trace, dir_);
  ASSERT_TRUE(run.WaitForOutput("epoch 1/500", std::chrono::seconds(120))) << run.err();
  const std::vector<pid_t> workers = run.Workers();
  ASSERT_EQ(workers.size(), 2u);
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(workers[1], SIGKILL), 0);
  const int code = run.WaitForExit(std::chrono::seconds(60));
  const auto took = std::chrono::steady_clock::now() - killed_at;
  ASSERT_NE(code, -1) << "the run was still going a minute after a worker died";
  EXPECT_NE(code, 0);
  EXPECT_LT(took, std::chrono::seconds(30));
  const std::string err = run.err();
  EXPECT_NE(err.find("killed by signal 9"), std::string::npos) << err;
  // The launcher's verdict is the last line; every line is one message.
  EXPECT_NE(err.rfind("accordion-train: error: worker rank"), std::string::npos) << err;
  // The finished epochs stay, and the trace says the run failed.
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.status, RunStatus::kFailed);
  EXPECT_GE(t.epochs.size(), 1u);
  EXPECT_NO_THROW(ValidateTrace(trace));
}

// A run whose loss turns NaN or Inf stops at once with its own exit code,
// one line saying where, and a trace marked failed that still validates. The
// LR makes it diverge within the first epoch whatever the machine's
// arithmetic, so the test does not depend on how far an unstable run gets.
TEST_F(TrainRobustness, ADivergingRunStopsWithItsOwnExitCodeOneLineAndAFailedTrace) {
  const std::string trace = Path("diverged.trace");
  const CommandResult r = Train(
      "--dataset synthetic --limit-samples 512 --model mlp --batch-size 64 --seed 3 --nproc 2 --epochs 3"
      " --lr 1e8 --checkpoint-dir " +
      Path("ckpt") + " --trace " + trace);
  EXPECT_EQ(r.exit_code, kExitDiverged) << r.err;
  // Progress bars aside, one line says what happened, and it is the last.
  const size_t error_at = r.err.find("accordion-train: error: ");
  ASSERT_NE(error_at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("accordion-train: error: ", error_at + 1), std::string::npos) << r.err;
  EXPECT_EQ(CountLines(r.err.substr(error_at)), 1) << r.err;
  EXPECT_EQ(r.err.find("accordion-train: error: training diverged at epoch 1, step "), error_at) << r.err;
  EXPECT_NE(r.err.find(" of 8 (the loss of rank "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0 finished epoch(s) kept, trace marked failed"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("epoch 1/3  lr"), std::string::npos) << "the diverged epoch must not be reported\n" << r.out;
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.status, RunStatus::kFailed);
  EXPECT_TRUE(t.epochs.empty());
  EXPECT_NO_THROW(ValidateTrace(trace));
  // No checkpoint of the diverged epoch: nothing to resume into NaN weights.
  EXPECT_FALSE(std::filesystem::exists(Path("ckpt/checkpoint.json")));
}

// Ctrl-C keeps the finished epochs; --resume then continues from the last
// checkpoint and reproduces the uninterrupted run's numbers. Returns the
// levels the run used (epoch_layers.level), to check both were exercised.
// Twelve epochs: after "epoch 2/12" there is ample time for the interrupt to
// land mid-run, even on a fast machine.
std::set<double> ExpectInterruptThenResumeReproduces(test_support::TempDirTest& test, const std::string& config) {
  constexpr int kEpochs = 12;
  const std::string common = config + " --nproc 2 --epochs 12 --threads 1 ";
  auto path = [&](const std::string& name) { return test.Path(name); };
  const CommandResult whole =
      Train(common + "--trace " + path("whole.trace") + " --checkpoint-dir " + path("ckpt-whole"));
  EXPECT_EQ(whole.exit_code, 0) << whole.err;

  const std::string part = common + "--trace " + path("part.trace") + " --checkpoint-dir " + path("ckpt-part");
  {
    BackgroundRun run(part, test.dir());
    EXPECT_TRUE(run.WaitForOutput("epoch 2/12", std::chrono::seconds(120))) << run.err();
    ::kill(run.pid(), SIGINT);
    EXPECT_EQ(run.WaitForExit(std::chrono::seconds(60)), kExitInterrupted) << run.err();
  }
  const TraceContent stopped = ReadTrace(path("part.trace"));
  EXPECT_EQ(stopped.run.status, RunStatus::kInterrupted);
  const size_t kept = stopped.epochs.size();
  EXPECT_GE(kept, 2u);
  EXPECT_LT(kept, static_cast<size_t>(kEpochs)) << "the run finished before the interrupt arrived";
  EXPECT_NO_THROW(ValidateTrace(path("part.trace")));

  const CommandResult resumed = Train(part + " --resume");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("epoch " + std::to_string(kept + 1) + "/12"), std::string::npos) << resumed.out;
  EXPECT_EQ(resumed.out.find("epoch 1/12"), std::string::npos) << "resume must not start over";

  const TraceContent a = ReadTrace(path("whole.trace"));
  const TraceContent b = ReadTrace(path("part.trace"));
  EXPECT_EQ(b.run.status, RunStatus::kComplete);
  std::set<double> levels;
  if (a.epochs.size() != static_cast<size_t>(kEpochs) || b.epochs.size() != static_cast<size_t>(kEpochs)) {
    ADD_FAILURE() << "incomplete traces: " << a.epochs.size() << " and " << b.epochs.size() << " epochs";
    return levels;
  }
  for (size_t e = 0; e < static_cast<size_t>(kEpochs); ++e) {
    EXPECT_EQ(a.epochs[e].train_loss, b.epochs[e].train_loss) << "epoch " << e;
    EXPECT_EQ(a.epochs[e].test_loss, b.epochs[e].test_loss) << "epoch " << e;
    EXPECT_EQ(a.epochs[e].test_acc, b.epochs[e].test_acc) << "epoch " << e;
    EXPECT_EQ(a.epochs[e].batch_size, b.epochs[e].batch_size) << "epoch " << e;
    EXPECT_EQ(a.epochs[e].lr, b.epochs[e].lr) << "epoch " << e;
    for (size_t l = 0; l < a.layers.size(); ++l) {
      EXPECT_EQ(a.layer_rows[e][l].grad_norm, b.layer_rows[e][l].grad_norm) << "epoch " << e << " layer " << l;
      EXPECT_EQ(a.layer_rows[e][l].level, b.layer_rows[e][l].level) << "epoch " << e << " layer " << l;
      levels.insert(a.layer_rows[e][l].level);
    }
  }
  EXPECT_NO_THROW(ValidateTrace(path("part.trace")));
  // A finished run has nothing left to resume.
  const CommandResult again = Train(part + " --resume");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("nothing is left"), std::string::npos) << again.err;
  return levels;
}

// PowerSGD under Accordion: memories, warm Qs and the controller must all survive.
TEST_F(TrainRobustness, InterruptThenResumeReproducesTheUninterruptedRun) {
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this,
      " --dataset synthetic --limit-samples 1024 --model mlp --batch-size 64 --lr 0.05 --seed 3"
      " --scheme powersgd --policy accordion --interval 1 --eta 0.3 --decay-epochs 3 9");
  EXPECT_EQ(levels.size(), 2u) << "both PowerSGD ranks should have been used, so the warm Q switched";
}

// Batch size under Accordion: the grown batch, its scaled LR and the
// sampler's step count must continue where they were.
TEST_F(TrainRobustness, InterruptThenResumeKeepsTheGrownBatch) {
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this,
      " --dataset synthetic --limit-samples 1024 --model mlp --lr 0.05 --seed 3"
      " --scheme batch --policy accordion --low 64 --high 256 --interval 1 --decay-epochs 3 9");
  EXPECT_EQ(levels, (std::set<double>{64, 256}));
}

// AdaQS: its MSDR reference and level live in the checkpoint (policy.*).
TEST_F(TrainRobustness, InterruptThenResumeKeepsAdaqsWhereItWas) {
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this,
      " --dataset synthetic --limit-samples 1024 --model mlp --batch-size 64 --lr 0.05 --seed 3"
      " --scheme powersgd --policy adaqs --low 8 --high 1 --interval 1 --msdr-factor 1.01");
  EXPECT_GT(levels.size(), 1u) << "AdaQS should have halved the compression at least once";
}

// Smith et al.: the batch a decay grew continues after a resume.
TEST_F(TrainRobustness, InterruptThenResumeKeepsSmithsBatch) {
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this,
      " --dataset synthetic --limit-samples 1024 --model mlp --lr 0.05 --seed 3"
      " --scheme batch --policy smith --low 64 --high 256 --decay-epochs 3 9 --decay-factor 0.5");
  EXPECT_EQ(levels, (std::set<double>{64, 128, 256}));
}

// Dropout draws from each rank's own generator (WorkerSeed): a resume must
// give every rank back its own stream, or the continued epochs differ.
TEST_F(TrainRobustness, InterruptThenResumeKeepsEachRanksDropoutStream) {
  std::ofstream(Path("corpus.txt")) << test_support::TestCorpus(400);
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this, " --model lstm --dataset tokens --data-file " + Path("corpus.txt") +
                 " --lstm-size 32 --dropout 0.3 --bptt 12 --batch-size 8 --clip 0.5 --lr 20 --momentum 0"
                 " --weight-decay 0 --seed 3");
  EXPECT_EQ(levels.size(), 1u);  // dense
}

// A TorchScript model's state is checkpointed parameter by parameter like a
// built-in one's: its BatchNorm statistics, dropout stream and PowerSGD
// memories survive the resume.
TEST_F(TrainRobustness, InterruptThenResumeReproducesAnExportedTorchScriptModel) {
  if (!test_support::PythonHasTorch())
    GTEST_SKIP() << test_support::kPython << " has no torch (scripts/install-deps.sh)";
  std::string error;
  const std::string models = test_support::TorchScriptModelsDir(&error);
  ASSERT_FALSE(models.empty()) << error;
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this, " --model " + models +
                 "/net.pt --dataset synthetic --limit-samples 1024 --batch-size 64 --lr 0.05"
                 " --seed 3 --scheme powersgd --level 2 --no-network-probe");
  EXPECT_EQ(levels, (std::set<double>{2}));
}

// A full disk while saving a checkpoint (here a file-size limit, which fails
// the write the same way without root) ends the run with one line per rank
// and exit 4 (the machine's failure, not bad input's 2), keeps the finished epoch readable, and leaves no half-written
// file behind. LibTorch's writer alone would abort with a backtrace.
TEST_F(TrainRobustness, AFullDiskEndsTheRunInOneLineKeepsTheEpochAndLeavesNoPartialFile) {
  const std::string trace = Path("full.trace");
  const CommandResult r = test_support::RunCommand(
      "bash -c \"trap '' XFSZ; ulimit -f 1000; exec " + test_support::kTrain + kQuickRun +
      " --nproc 2 --epochs 2 --threads 1 --trace " + trace + " --checkpoint-dir " + Path("ckpt") + "\"");
  EXPECT_EQ(r.exit_code, kExitIoFailure) << r.err;
  EXPECT_EQ(r.err.find("frame #"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
  const size_t error_at = r.err.find("accordion-train: error: rank ");
  ASSERT_NE(error_at, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot write the checkpoint (File too large)"), std::string::npos) << r.err;
  // Once, by rank 0: every rank meets it, and each used to say so.
  EXPECT_EQ(CountLines(r.err.substr(error_at)), 1) << r.err;
  for (const auto& entry : std::filesystem::directory_iterator(Path("ckpt"))) {
    if (entry.path() == DirectoryLockPath(Path("ckpt"))) continue;  // the run's lock, empty
    ADD_FAILURE() << "left behind: " << entry.path();
  }
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.status, RunStatus::kFailed);
  EXPECT_EQ(t.epochs.size(), 1u);
  EXPECT_NO_THROW(ValidateTrace(trace));
}

// --resume proves, before touching anything, that the trace is the
// checkpoint's (a run id in both) and that every state file is the one the
// manifest committed (size and CRC-32).
TEST_F(TrainRobustness, ResumeRefusesAnotherRunsTraceAndADamagedCheckpointTouchingNothing) {
  const std::string run = kQuickRun + " --nproc 2 --epochs 40 --threads 1 --checkpoint-dir " + Path("ckpt");
  {
    BackgroundRun a(run + " --trace " + Path("a.trace"), dir_);
    ASSERT_TRUE(a.WaitForOutput("epoch 2/40", std::chrono::seconds(120))) << a.err();
    ::kill(a.pid(), SIGINT);
    ASSERT_EQ(a.WaitForExit(std::chrono::seconds(60)), kExitInterrupted) << a.err();
  }
  const CommandResult b = Train(kQuickRun + " --nproc 2 --epochs 2 --threads 1 --trace " + Path("b.trace"));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto b_written = std::filesystem::last_write_time(Path("b.trace"));

  const CommandResult wrong_trace = Train(run + " --trace " + Path("b.trace") + " --resume");
  EXPECT_EQ(wrong_trace.exit_code, 2) << wrong_trace.err;
  EXPECT_EQ(CountLines(wrong_trace.err), 1) << wrong_trace.err;
  EXPECT_NE(wrong_trace.err.find("is not the one of the checkpoint"), std::string::npos) << wrong_trace.err;
  EXPECT_EQ(std::filesystem::last_write_time(Path("b.trace")), b_written);
  EXPECT_EQ(ReadTrace(Path("b.trace")).run.status, RunStatus::kComplete);

  // 4 KB of zeros in the middle of rank 1's state file.
  const TraceContent before = ReadTrace(Path("a.trace"));
  const std::string state = Path("ckpt/epoch-" + std::to_string(before.epochs.size() - 1) + ".rank-1.pt");
  const auto size = std::filesystem::file_size(state);
  {
    std::fstream f(state, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(std::string(4096, '\0').data(), 4096);
  }
  const CommandResult damaged = Train(run + " --trace " + Path("a.trace") + " --resume");
  EXPECT_EQ(damaged.exit_code, 2) << damaged.err;
  EXPECT_EQ(CountLines(damaged.err), 1) << damaged.err;
  EXPECT_NE(damaged.err.find("rank-1.pt is damaged"), std::string::npos) << damaged.err;
  const TraceContent after = ReadTrace(Path("a.trace"));
  EXPECT_EQ(after.run.status, RunStatus::kInterrupted);
  EXPECT_EQ(after.epochs.size(), before.epochs.size());

  // Rank 1's state file gone: refused before any worker starts, and the
  // trace is not marked failed for it (it was, by the worker that found it).
  std::filesystem::remove(state);
  const CommandResult missing = Train(run + " --trace " + Path("a.trace") + " --resume");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_EQ(CountLines(missing.err), 1) << missing.err;
  EXPECT_NE(missing.err.find("rank-1.pt: no such file"), std::string::npos) << missing.err;
  EXPECT_EQ(ReadTrace(Path("a.trace")).run.status, RunStatus::kInterrupted);
}

// A live run's trace is locked: a second run on the same path is refused in
// one line, even with --overwrite, and the first finishes unharmed; two
// runs started on a fresh path at once leave exactly one winner whose trace
// is not marked failed by the loser.
TEST_F(TrainRobustness, ASecondRunOnALiveTraceIsRefusedAndTheFirstIsUnharmed) {
  const std::string trace = Path("live.trace");
  const std::string quick = kQuickRun + " --nproc 2 --threads 1 ";
  std::filesystem::create_directories(Path("first"));
  BackgroundRun first(quick + "--epochs 500 --trace " + trace, Path("first"));
  ASSERT_TRUE(first.WaitForOutput("epoch 1/500", std::chrono::seconds(120))) << first.err();
  const CommandResult second = Train(quick + "--epochs 2 --overwrite --trace " + trace);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_EQ(CountLines(second.err), 1) << second.err;
  EXPECT_NE(second.err.find("is being written by a running accordion-train"), std::string::npos) << second.err;
  ::kill(first.pid(), SIGINT);
  EXPECT_EQ(first.WaitForExit(std::chrono::seconds(60)), kExitInterrupted) << first.err();
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.status, RunStatus::kInterrupted);
  EXPECT_GE(t.epochs.size(), 1u);
  EXPECT_EQ(t.run.epochs_planned, 500);

  const std::string race = Path("race.trace");
  std::filesystem::create_directories(Path("x"));
  std::filesystem::create_directories(Path("y"));
  BackgroundRun x(quick + "--epochs 3 --trace " + race, Path("x"));
  BackgroundRun y(quick + "--epochs 3 --trace " + race, Path("y"));
  const int cx = x.WaitForExit(std::chrono::seconds(120));
  const int cy = y.WaitForExit(std::chrono::seconds(120));
  EXPECT_TRUE((cx == 0 && cy == 2) || (cx == 2 && cy == 0)) << cx << " " << cy << "\n" << x.err() << y.err();
  EXPECT_EQ(ReadTrace(race).run.status, RunStatus::kComplete);
  EXPECT_EQ(ReadTrace(race).epochs.size(), 3u);
}

// A live run holds its --checkpoint-dir (a lock file inside it) for its
// lifetime: a second run on it, with --overwrite or --resume, is refused in
// one line before any worker starts, and so is another tool's --overwrite of
// its trace or an output into its directory; the first run can then resume.
TEST_F(TrainRobustness, ALiveRunsCheckpointDirectoryAndTraceAreRefusedToEveryOtherWriter) {
  const std::string quick = kQuickRun + " --nproc 2 --threads 1 ";
  const std::string ckpt = Path("ckpt");
  const std::string trace = Path("live.trace");
  const std::string run = quick + "--epochs 500 --trace " + trace + " --checkpoint-dir " + ckpt;
  std::filesystem::create_directories(Path("first"));
  {
    BackgroundRun first(run, Path("first"));
    ASSERT_TRUE(first.WaitForOutput("epoch 2/500", std::chrono::seconds(120))) << first.err();
    for (const std::string& flags :
         std::vector<std::string>{"--overwrite", "--overwrite --trace " + Path("other.trace"), "--resume"}) {
      const CommandResult second = Train(quick + "--epochs 500 --checkpoint-dir " + ckpt + " " + flags);
      EXPECT_EQ(second.exit_code, 2) << flags << "\n" << second.err;
      EXPECT_EQ(CountLines(second.err), 1) << flags << "\n" << second.err;
      EXPECT_NE(second.err.find("--checkpoint-dir " + ckpt + " is in use by a running accordion-train"),
                std::string::npos)
          << flags << "\n"
          << second.err;
      EXPECT_FALSE(std::filesystem::exists(Path("other.trace"))) << flags;
    }
    const std::string synth = std::string(ACCORDION_BIN_DIR) + "/accordion-make-synthetic-trace";
    const CommandResult replace = test_support::RunCommand(synth + " " + trace + " --model mlp --epochs 2 --overwrite");
    EXPECT_EQ(replace.exit_code, 2) << replace.err;
    EXPECT_NE(replace.err.find("is being written by another process"), std::string::npos) << replace.err;
    const CommandResult into = test_support::RunCommand(synth + " " + ckpt + "/x.trace --model mlp --epochs 2");
    EXPECT_EQ(into.exit_code, 2) << into.err;
    EXPECT_NE(into.err.find("is in use by a running accordion-train"), std::string::npos) << into.err;
    // A second run's trace in the first run's directory: it was accepted and
    // written there (the checkpoint directory was only held against checkpoints).
    const CommandResult trace_into = Train(quick + "--epochs 1 --trace " + ckpt + "/second.trace");
    EXPECT_EQ(trace_into.exit_code, 2) << trace_into.err;
    EXPECT_EQ(CountLines(trace_into.err), 1) << trace_into.err;
    EXPECT_NE(trace_into.err.find("is the --checkpoint-dir of a running accordion-train"), std::string::npos)
        << trace_into.err;
    EXPECT_FALSE(std::filesystem::exists(ckpt + "/second.trace"));
    ::kill(first.pid(), SIGINT);
    ASSERT_EQ(first.WaitForExit(std::chrono::seconds(60)), kExitInterrupted) << first.err();
  }
  EXPECT_FALSE(DirectoryInUse(ckpt));
  const TraceContent before = ReadTrace(trace);
  EXPECT_EQ(before.run.status, RunStatus::kInterrupted);
  EXPECT_EQ(before.run.epochs_planned, 500);
  // Nothing the refused writers did stands in the way of the first run's resume.
  BackgroundRun resumed(run + " --resume", Path("first"));
  ASSERT_TRUE(
      resumed.WaitForOutput("epoch " + std::to_string(before.epochs.size() + 2) + "/500", std::chrono::seconds(120)))
      << resumed.err();
  ::kill(resumed.pid(), SIGINT);
  EXPECT_EQ(resumed.WaitForExit(std::chrono::seconds(60)), kExitInterrupted) << resumed.err();
  EXPECT_GT(ReadTrace(trace).epochs.size(), before.epochs.size());
}

// Where a run writes is checked before any worker starts: a read-only or
// full file system under --trace or --checkpoint-dir was found by rank 0
// after the rendezvous and the data (or at the first epoch's end), and its
// peer then said "Connection reset by peer" too. A tmpfs in a mount
// namespace of the test's own stands in for the small disk (needs root).
TEST_F(TrainRobustness, AReadOnlyOrFullOutputFileSystemIsRefusedBeforeAnyWorkerStarts) {
  if (::geteuid() != 0 || test_support::RunCommand("unshare -m true").exit_code != 0) {
    GTEST_SKIP() << "needs root and unshare for a small file system of its own";
  }
  const std::string mnt = Path("small");
  std::filesystem::create_directories(mnt);
  const auto in_small_fs = [&](const std::string& mount_options, const std::string& prepare, const std::string& args) {
    return test_support::RunCommand("unshare -m sh -c 'mount -t tmpfs -o " + mount_options + " tmpfs " + mnt + " && " +
                                    prepare + " exec " + test_support::kTrain + kQuickRun +
                                    " --nproc 2 --threads 1 --epochs 2 " + args + "'");
  };
  struct Case {
    std::string mount_options, prepare, args, fragment;
    int code;
  };
  const std::string fill = "dd if=/dev/zero of=" + mnt + "/fill bs=1k count=4096 2>/dev/null;";
  for (const Case& c : std::vector<Case>{
           {"ro,size=1m", "", "--trace " + mnt + "/a.trace", "--trace " + mnt + "/a.trace: cannot write in", 2},
           {"ro,size=1m", "", "--checkpoint-dir " + mnt + "/ck", "--checkpoint-dir " + mnt + "/ck: cannot write in", 2},
           {"size=4m", fill, "--trace " + mnt + "/a.trace", "is full (0 KiB free", kExitIoFailure},
           {"size=4m", fill, "--checkpoint-dir " + mnt + "/ck", "is full (0 KiB free", kExitIoFailure}}) {
    const CommandResult r = in_small_fs(c.mount_options, c.prepare, c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("rank"), std::string::npos) << "refused before any worker started: " << r.err;
  }
}

// A full disk that only rank 0 meets, its trace's (a file-size limit stands
// in for it): rank 0 says so and its peer, which only lost the connection to
// it, says nothing. Rank 1 used to add "Connection reset by peer".
TEST_F(TrainRobustness, AFullDiskIsReportedByTheRankThatMetItNotBlamedOnThePeer) {
  const std::string trace = Path("full.trace");
  const CommandResult r =
      test_support::RunCommand("bash -c \"trap '' XFSZ; ulimit -f 200; exec " + test_support::kTrain + kQuickRun +
                               " --nproc 2 --epochs 200 --threads 1 --trace-iterations 64 "
                               "--trace " +
                               trace + "\"");
  EXPECT_EQ(r.exit_code, kExitIoFailure) << r.err;
  const size_t error_at = r.err.find("accordion-train: error: ");
  ASSERT_NE(error_at, std::string::npos) << r.err;
  EXPECT_EQ(CountLines(r.err.substr(error_at)), 1) << r.err;
  EXPECT_NE(r.err.find("accordion-train: error: rank 0: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("peer"), std::string::npos) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  EXPECT_GT(ReadTrace(trace).epochs.size(), 0u);
}

}  // namespace
}  // namespace accordion
