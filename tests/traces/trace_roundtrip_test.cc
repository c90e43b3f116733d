#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/support/synthetic_trace.h"
#include "tests/support/temp_dir_test.h"
#include "traces/schema.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"
#include "traces/trace_writer.h"

namespace accordion {
namespace {

RunInfo SmallRun() {
  RunInfo run = synthetic::MlpRun("fashion-mnist", 60000, 256, 4);
  run.scheme = Scheme::kPowerSgd;
  run.policy = Policy::kAccordion;
  run.level_low = 2;
  run.level_high = 1;
  run.eta = 0.5;
  run.interval = 2;
  run.world_size = 2;
  run.backend = "gloo";
  run.device = "cpu";
  run.seed = 7;
  run.config_json = R"({"lr": 0.1, "name": "a,b \"quoted\""})";
  run.versions_json = R"({"libtorch": "1.13.1"})";
  return run;
}

std::vector<LayerInfo> SmallLayers() {
  LayerInfo w;
  w.layer_id = 0;
  w.name = "fc.weight";
  w.shape = {10, 784};
  w.numel = 7840;
  w.compressible = true;
  w.floats_dense = 7840;
  w.floats_low = 1588;
  w.floats_high = 794;
  LayerInfo b;
  b.layer_id = 1;
  b.name = "fc.bias";
  b.shape = {10};
  b.numel = 10;
  b.floats_dense = b.floats_low = b.floats_high = 10;
  return {w, b};
}

EpochData SmallEpoch(int epoch) {
  EpochData d;
  d.epoch.epoch = epoch;
  d.epoch.lr = 0.1 / (epoch + 1);
  d.epoch.batch_size = 256;
  d.epoch.iterations = 235;
  d.epoch.critical = epoch == 0;
  d.epoch.model_grad_norm = 3.0 + epoch;
  d.epoch.train_loss = 0.5;
  d.epoch.train_acc = 0.8;
  d.epoch.test_loss = 0.6;
  d.epoch.test_acc = 0.75;
  d.epoch.compute_s = 10;
  d.epoch.compress_s = 1;
  d.epoch.comm_s = 2;
  d.epoch.total_s = 14;
  d.layers = {{epoch, 0, 2.5, std::nullopt, true, 2, 1588.0 * 235}, {epoch, 1, 0.25, 0.125, false, 1, 10.0 * 235}};
  d.epoch.floats_sent = (1588.0 + 10.0) * 235;
  for (int rank = 0; rank < 2; ++rank) {
    d.iterations.push_back({epoch, 0, rank, 0.01, 0.02, 0.001, 0.003, 0.035});
    d.grad_ready.push_back({epoch, 0, rank, 1, 0.001});
    d.grad_ready.push_back({epoch, 0, rank, 0, 0.015});
    d.collectives.push_back({epoch, 0, rank, 0, CollectiveOp::kAllReduce, 0, "powersgd-p", 6352, 0.016, 0.002});
    d.collectives.push_back({epoch, 0, rank, 1, CollectiveOp::kAllReduce, 0, "powersgd-q", 3176, 0.019, 0.001});
  }
  if (epoch % 2 == 0) d.hessian.push_back({epoch, "", 12.5, 17, 0.4});
  return d;
}

class TraceRoundTrip : public test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/run.trace";
  }

  std::string JournalMode() {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
    sqlite3_step(st);
    std::string mode = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return mode;
  }

  std::string path_;
};

TEST_F(TraceRoundTrip, EverythingWrittenIsReadBackUnchanged) {
  {
    auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
    for (int e = 0; e < 4; ++e) w->WriteEpoch(SmallEpoch(e));
    w->Finish(RunStatus::kComplete);
  }
  auto r = TraceReader::Open(path_);
  EXPECT_EQ(r->schema_version(), kTraceSchemaVersion);
  const RunInfo& run = r->run();
  const RunInfo want = SmallRun();
  EXPECT_EQ(run.status, RunStatus::kComplete);
  EXPECT_EQ(run.model, want.model);
  EXPECT_EQ(run.dataset, want.dataset);
  EXPECT_EQ(run.train_samples, want.train_samples);
  EXPECT_EQ(run.scheme, Scheme::kPowerSgd);
  EXPECT_EQ(run.policy, Policy::kAccordion);
  EXPECT_EQ(run.level_low, 2);
  EXPECT_EQ(run.level_high, 1);
  EXPECT_EQ(run.interval, 2);
  EXPECT_EQ(run.world_size, 2);
  EXPECT_EQ(run.batch_size, 256);
  EXPECT_EQ(run.seed, 7);
  EXPECT_EQ(run.config_json, want.config_json);
  EXPECT_EQ(run.versions_json, want.versions_json);
  EXPECT_FALSE(run.started_utc.empty());
  EXPECT_FALSE(run.finished_utc.empty());

  ASSERT_EQ(r->num_layers(), 2);
  EXPECT_EQ(r->layers()[0].name, "fc.weight");
  EXPECT_EQ(r->layers()[0].shape, (std::vector<int64_t>{10, 784}));
  EXPECT_TRUE(r->layers()[0].compressible);
  EXPECT_EQ(r->layers()[0].floats_low, 1588);
  EXPECT_EQ(r->layers()[1].shape, (std::vector<int64_t>{10}));

  const auto epochs = r->Epochs();
  ASSERT_EQ(epochs.size(), 4u);
  for (int e = 0; e < 4; ++e) {
    const EpochRecord want_e = SmallEpoch(e).epoch;
    EXPECT_EQ(epochs[e].epoch, e);
    EXPECT_DOUBLE_EQ(epochs[e].lr, want_e.lr);  // doubles round-trip exactly
    EXPECT_EQ(epochs[e].critical, want_e.critical);
    EXPECT_EQ(epochs[e].iterations, 235);
    EXPECT_DOUBLE_EQ(epochs[e].floats_sent, want_e.floats_sent);
  }
  const auto rows = r->EpochLayers();
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_FALSE(rows[0].ratio.has_value());  // NULL stays "no check"
  ASSERT_TRUE(rows[1].ratio.has_value());
  EXPECT_DOUBLE_EQ(*rows[1].ratio, 0.125);
  EXPECT_EQ(rows[1].level, 1);

  int iterations = 0;
  r->ForEachIteration([&](const IterationRecord& it) {
    EXPECT_EQ(it.rank, iterations % 2);  // key order: epoch, iteration, rank
    EXPECT_DOUBLE_EQ(it.backward_s, 0.02);
    ++iterations;
  });
  EXPECT_EQ(iterations, 8);
  std::vector<int> ready_layers;
  r->ForEachGradReady([&](const GradReadyRecord& g) { ready_layers.push_back(g.layer_id); });
  ASSERT_EQ(ready_layers.size(), 16u);
  EXPECT_EQ(ready_layers[0], 0);  // ordered by layer id within a rank
  std::vector<std::string> tags;
  r->ForEachCollective([&](const CollectiveRecord& c) { tags.push_back(c.tag); });
  ASSERT_EQ(tags.size(), 16u);
  EXPECT_EQ(tags[0], "powersgd-p");
  EXPECT_EQ(tags[1], "powersgd-q");
  const auto hessian = r->Hessian();
  ASSERT_EQ(hessian.size(), 2u);
  EXPECT_EQ(hessian[1].epoch, 2);
  EXPECT_DOUBLE_EQ(hessian[1].eigenvalue, 12.5);

  const TraceSummary summary = ValidateTrace(path_);
  EXPECT_EQ(summary.epochs, 4);
  EXPECT_EQ(summary.collective_rows, 16);
  EXPECT_TRUE(summary.warnings.empty());
}

TEST_F(TraceRoundTrip, RunsInWalAndFinishesAsOneSelfContainedFile) {
  auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
  w->WriteEpoch(SmallEpoch(0));
  EXPECT_EQ(JournalMode(), "wal");
  EXPECT_EQ(TraceReader::Open(path_)->run().status, RunStatus::kRunning);
  for (int e = 1; e < 4; ++e) w->WriteEpoch(SmallEpoch(e));
  w->Finish(RunStatus::kComplete);
  EXPECT_EQ(JournalMode(), "delete");
  EXPECT_FALSE(std::filesystem::exists(path_ + "-wal"));
}

TEST_F(TraceRoundTrip, RefusesBadRowsAndWritesNothingOfThatEpoch) {
  auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
  EXPECT_THROW(w->WriteEpoch(SmallEpoch(1)), TraceError);  // out of order
  EpochData nan = SmallEpoch(0);
  nan.layers[1].grad_norm = std::nan("");
  EXPECT_THROW(w->WriteEpoch(nan), TraceError);
  EpochData missing = SmallEpoch(0);
  missing.layers.pop_back();
  EXPECT_THROW(w->WriteEpoch(missing), TraceError);
  EpochData bad_rank = SmallEpoch(0);
  bad_rank.iterations[0].rank = 5;
  EXPECT_THROW(w->WriteEpoch(bad_rank), TraceError);
  EXPECT_EQ(TraceReader::Open(path_)->Epochs().size(), 0u);
  w->WriteEpoch(SmallEpoch(0));  // the writer is still usable
  EXPECT_EQ(TraceReader::Open(path_)->Epochs().size(), 1u);
}

TEST_F(TraceRoundTrip, CreateRefusesToOverwriteUnlessAsked) {
  TraceWriter::Create(path_, SmallRun(), SmallLayers())->Finish(RunStatus::kFailed);
  try {
    TraceWriter::Create(path_, SmallRun(), SmallLayers());
    FAIL() << "expected an error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.code(), TraceErrorCode::kNotWritable);
    EXPECT_EQ(e.exit_code(), kExitBadInput);  // the user's to fix, not the machine's failure
  }
  auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers(), /*overwrite=*/true);
  EXPECT_EQ(TraceReader::Open(path_)->run().status, RunStatus::kRunning);
}

TEST_F(TraceRoundTrip, ACrashLosesOnlyTheEpochBeingWritten) {
  // A child process writes two epochs, then dies without any cleanup.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
    w->WriteEpoch(SmallEpoch(0));
    w->WriteEpoch(SmallEpoch(1));
    _exit(3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 3);
  auto r = TraceReader::Open(path_);
  EXPECT_EQ(r->run().status, RunStatus::kRunning);  // never looks complete
  EXPECT_EQ(r->Epochs().size(), 2u);
  const TraceSummary s = ValidateTrace(path_);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("2 of 4 epochs"), std::string::npos) << s.warnings[0];
}

TEST_F(TraceRoundTrip, ResumeDropsLaterEpochsAndContinues) {
  {
    auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
    for (int e = 0; e < 3; ++e) w->WriteEpoch(SmallEpoch(e));
    w->Finish(RunStatus::kInterrupted);
  }
  auto w = TraceWriter::Resume(path_, 2);
  EXPECT_EQ(w->next_epoch(), 2);
  EXPECT_EQ(TraceReader::Open(path_)->Epochs().size(), 2u);
  EXPECT_EQ(TraceReader::Open(path_)->Hessian().size(), 1u);  // epoch 2's row is gone
  w->WriteEpoch(SmallEpoch(2));
  w->WriteEpoch(SmallEpoch(3));
  w->Finish(RunStatus::kComplete);
  EXPECT_EQ(ValidateTrace(path_).epochs, 4);
  EXPECT_THROW(TraceWriter::Resume(path_, 9), TraceError);
}

TraceErrorCode CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.code();
  }
  ADD_FAILURE() << "no TraceError";
  return TraceErrorCode::kIo;
}

TEST_F(TraceRoundTrip, ALiveWritersTraceCannotBeReplacedOrResumedByAnother) {
  auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
  w->WriteEpoch(SmallEpoch(0));
  EXPECT_TRUE(TraceBeingWritten(path_));
  EXPECT_EQ(CodeOf([&] { TraceWriter::Create(path_, SmallRun(), SmallLayers(), /*overwrite=*/true); }),
            TraceErrorCode::kBusy);
  EXPECT_EQ(CodeOf([&] { TraceWriter::Resume(path_, 0); }), TraceErrorCode::kBusy);
  // Readers are not blocked, and the live run lost nothing.
  EXPECT_EQ(TraceReader::Open(path_)->Epochs().size(), 1u);
  w->WriteEpoch(SmallEpoch(1));
  w.reset();
  EXPECT_FALSE(TraceBeingWritten(path_));
  EXPECT_EQ(TraceWriter::Resume(path_, 2)->next_epoch(), 2);
}

TEST_F(TraceRoundTrip, ALiveWriterInAnotherProcessHoldsTheTraceUntilItDies) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
    w->WriteEpoch(SmallEpoch(0));
    (void)!write(ready[1], "x", 1);
    pause();  // killed by the parent, as a crashed run would be
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  EXPECT_TRUE(TraceBeingWritten(path_));
  EXPECT_EQ(CodeOf([&] { TraceWriter::Create(path_, SmallRun(), SmallLayers(), /*overwrite=*/true); }),
            TraceErrorCode::kBusy);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_FALSE(TraceBeingWritten(path_));
  EXPECT_EQ(TraceWriter::Resume(path_, 1)->next_epoch(), 1);
  close(ready[0]);
  close(ready[1]);
}

TEST_F(TraceRoundTrip, ResumeProvesTheTraceBelongsToTheRunAndChangesNothingOtherwise) {
  RunInfo run = SmallRun();
  run.run_id = NewRunId();
  ASSERT_EQ(run.run_id.size(), 32u);
  EXPECT_NE(run.run_id, NewRunId());
  {
    auto w = TraceWriter::Create(path_, run, SmallLayers());
    for (int e = 0; e < 3; ++e) w->WriteEpoch(SmallEpoch(e));
    w->Finish(RunStatus::kComplete);
  }
  EXPECT_EQ(TraceReader::Open(path_)->run().run_id, run.run_id);
  EXPECT_EQ(CodeOf([&] { TraceWriter::Resume(path_, 1, NewRunId()); }), TraceErrorCode::kInconsistent);
  auto r = TraceReader::Open(path_);
  EXPECT_EQ(r->Epochs().size(), 3u);
  EXPECT_EQ(r->run().status, RunStatus::kComplete);
  r.reset();
  EXPECT_EQ(TraceWriter::Resume(path_, 1, run.run_id)->next_epoch(), 1);
}

TEST_F(TraceRoundTrip, CreateNeverReplacesWhatIsNotARegularFile) {
  ASSERT_EQ(mkfifo(path_.c_str(), 0644), 0);
  EXPECT_EQ(CodeOf([&] { TraceWriter::Create(path_, SmallRun(), SmallLayers(), /*overwrite=*/true); }),
            TraceErrorCode::kNotWritable);
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  const std::string dir = dir_ + "/sub";
  std::filesystem::create_directory(dir);
  EXPECT_EQ(CodeOf([&] { TraceWriter::Create(dir, SmallRun(), SmallLayers(), /*overwrite=*/true); }),
            TraceErrorCode::kNotWritable);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

// A writer stopped by a full disk may leave the main file shorter than its
// header's page count while the committed pages are in the WAL: that trace
// is whole, not truncated, and every tool reads its epochs.
TEST_F(TraceRoundTrip, PagesStillInTheWalAreNotATruncatedFile) {
  auto w = TraceWriter::Create(path_, SmallRun(), SmallLayers());
  w->WriteEpoch(SmallEpoch(0));
  w->WriteEpoch(SmallEpoch(1));
  // A snapshot of the live files, as a writer that died here leaves them.
  const std::string copy = dir_ + "/copy.trace";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::copy_file(path_ + suffix, copy + suffix);
  }
  w.reset();
  ASSERT_GT(std::filesystem::file_size(copy + "-wal"), 0u);
  {
    // The header claims 64 pages, with a change counter that makes it count.
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    const unsigned char pages[4] = {0, 0, 0, 64};
    const unsigned char counter[4] = {0, 0, 0, 7};
    f.seekp(24);
    f.write(reinterpret_cast<const char*>(counter), 4);
    f.seekp(28);
    f.write(reinterpret_cast<const char*>(pages), 4);
    f.seekp(92);
    f.write(reinterpret_cast<const char*>(counter), 4);
  }
  ASSERT_LT(std::filesystem::file_size(copy), 64u * 4096u);
  EXPECT_EQ(ValidateTrace(copy).epochs, 2);
  // Without its WAL the same file is what the header check exists for.
  std::filesystem::remove(copy + "-wal");
  std::filesystem::remove(copy + "-shm");
  EXPECT_EQ(CodeOf([&] { TraceReader::Open(copy); }), TraceErrorCode::kTruncated);
}

}  // namespace
}  // namespace accordion
