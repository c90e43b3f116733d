// accordion-train when things go wrong: a worker killed outright, Ctrl-C,
// and resuming from the checkpoint afterwards.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "tests/trainer/data_writers.h"
#include "tests/trainer/train_support.h"
#include "traces/trace_validator.h"
#include "trainer/launcher.h"

namespace accordion {
namespace {

using testing::BackgroundRun;
using testing::CommandResult;
using testing::CountLines;
using testing::kQuickRun;
using testing::ReadTrace;
using testing::Train;
using testing::TraceContent;

using TrainRobustness = testing::TempDirTest;

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
  const CommandResult r =
      Train("--dataset synthetic --limit-samples 512 --model mlp --batch-size 64 --seed 3 --nproc 2 --epochs 3"
            " --lr 1e8 --checkpoint-dir " + Path("ckpt") + " --trace " + trace);
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
std::set<double> ExpectInterruptThenResumeReproduces(testing::TempDirTest& test, const std::string& config) {
  constexpr int kEpochs = 12;
  const std::string common = config + " --nproc 2 --epochs 12 --threads 1 ";
  auto path = [&](const std::string& name) { return test.Path(name); };
  const CommandResult whole = Train(common + "--trace " + path("whole.trace") + " --checkpoint-dir " + path("ckpt-whole"));
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
      *this, " --dataset synthetic --limit-samples 1024 --model mlp --batch-size 64 --lr 0.05 --seed 3"
             " --scheme powersgd --policy accordion --interval 1 --eta 0.3 --decay-epochs 3 9");
  EXPECT_EQ(levels.size(), 2u) << "both PowerSGD ranks should have been used, so the warm Q switched";
}

// Batch size under Accordion: the grown batch, its scaled LR and the
// sampler's step count must continue where they were.
TEST_F(TrainRobustness, InterruptThenResumeKeepsTheGrownBatch) {
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this, " --dataset synthetic --limit-samples 1024 --model mlp --lr 0.05 --seed 3"
             " --scheme batch --policy accordion --low 64 --high 256 --interval 1 --decay-epochs 3 9");
  EXPECT_EQ(levels, (std::set<double>{64, 256}));
}

// Dropout draws from each rank's own generator (WorkerSeed): a resume must
// give every rank back its own stream, or the continued epochs differ.
TEST_F(TrainRobustness, InterruptThenResumeKeepsEachRanksDropoutStream) {
  std::ofstream(Path("corpus.txt")) << testing::TestCorpus(400);
  const std::set<double> levels = ExpectInterruptThenResumeReproduces(
      *this, " --model lstm --dataset tokens --data-file " + Path("corpus.txt") +
                 " --lstm-size 32 --dropout 0.3 --bptt 12 --batch-size 8 --clip 0.5 --lr 20 --momentum 0"
                 " --weight-decay 0 --seed 3");
  EXPECT_EQ(levels.size(), 1u);  // dense
}

}  // namespace
}  // namespace accordion
