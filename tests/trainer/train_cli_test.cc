// accordion-train end to end: real worker processes, real Gloo, real traces.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "analysis/schedule.h"
#include "analysis/trace_view.h"
#include "common/errors.h"
#include "tests/trainer/train_support.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"
#include "trainer/communicator_options.h"
#include "trainer/hessian_options.h"
#include "trainer/launcher.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::CountLines;
using test_support::kAnalyze;
using test_support::kQuickRun;
using test_support::Near;
using test_support::ReadTrace;
using test_support::TraceContent;
using test_support::Train;

using TrainCli = test_support::TempDirTest;

// A TCP socket listening on a free loopback port (-1 on failure), the port
// in `port`: what takes a MASTER_PORT before a run.
int ListenOnLoopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(fd, 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  *port = ntohs(sa.sin_port);
  return fd;
}

TEST_F(TrainCli, HelpAndVersion) {
  const CommandResult v = Train("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("accordion-train 0."), std::string::npos) << v.out;
  // It names the LibTorch it was built with and whether --backend nccl can work.
  EXPECT_NE(v.out.find("(LibTorch " TORCH_VERSION_TEXT "."), std::string::npos) << v.out;
  EXPECT_NE(v.out.find(ACCORDION_EXPECT_NCCL ? "NCCL communicator linked, NCCL " : "NCCL communicator not linked"),
            std::string::npos)
      << v.out;
  const CommandResult h = Train("--help");
  EXPECT_EQ(h.exit_code, 0);
  for (const char* flag : {"--scheme", "--policy", "--nproc", "--trace-iterations", "--resume", "--bucket-mb"}) {
    EXPECT_NE(h.out.find(flag), std::string::npos) << flag;
  }
}

// A run given none of their flags records the defaults of the options classes
// that own those settings (accordion-train nests or reads them, and states
// none of its own): a changed default there reaches the command line, the
// trace and the run together.
TEST_F(TrainCli, ARunWithoutFlagsRecordsTheDefaultsOfTheOptionsClassesThatOwnThem) {
  const std::string trace = Path("defaults.trace");
  const CommandResult r =
      Train("--dataset synthetic --limit-samples 256 --epochs 1 --no-network-probe --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TraceContent t = ReadTrace(trace);
  const nlohmann::json config = nlohmann::json::parse(t.run.config_json);
  EXPECT_EQ(config.at("eta").get<double>(), AccordionOptions().eta());
  EXPECT_EQ(config.at("interval").get<int>(), AccordionOptions().interval());
  EXPECT_EQ(t.run.eta, AccordionOptions().eta());
  EXPECT_EQ(t.run.interval, AccordionOptions().interval());
  EXPECT_EQ(config.at("hessian_tolerance").get<double>(), HessianOptions().tolerance());
  EXPECT_EQ(config.at("hessian_max_iterations").get<int>(), HessianOptions().max_iterations());
  EXPECT_EQ(config.at("timeout_s").get<double>(), std::chrono::duration<double>(RendezvousOptions().timeout()).count());
  EXPECT_EQ(config.at("bind_addr").get<std::string>(), GlooOptions().bind_addr());
  EXPECT_EQ(config.at("bucket_mb").get<double>() * 1024 * 1024, static_cast<double>(kDefaultBucketBytes));
}

TEST_F(TrainCli, BadConfigurationIsOneLineExitTwoAndLeavesNothing) {
  const std::string trace = Path("bad.trace");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--model vgg", "--model"},
      {"--scheme fancy", "--scheme"},
      {"--dataset imagenet", "--dataset"},
      {"--dataset mnist --data-dir " + Path("nothing-here"), "not found"},
      {"--dataset fashion-mnist --data-dir " + dir_, "not found"},
      {"--dataset synthetic --batch-size 63 --nproc 2", "split evenly"},
      {"--dataset synthetic --policy accordion", "--policy accordion chooses levels: it needs the"},
      {"--dataset synthetic --scheme powersgd --level 0.5", "PowerSGD rank"},
      {"--dataset synthetic --scheme topk --policy accordion --high 1.5", "TopK fraction"},
      {"--dataset synthetic --epochs 0", "--epochs"},
      {"--dataset synthetic --resume", "--resume"},
      {"--dataset synthetic --checkpoint-dir " + Path("none/deeper"), "does not exist"},
      {"--dataset synthetic --no-such-flag", "no-such-flag"},
      {"--dataset synthetic --topk-dense-vectors", "--topk-dense-vectors belongs to --scheme topk"},
      {"--dataset synthetic --scheme powersgd --topk-error-feedback off", "--topk-error-feedback belongs"},
      {"--dataset synthetic --scheme topk --topk-error-feedback maybe", "--topk-error-feedback"},
      // Gloo bound it in every worker and failed in a rendezvous error, exit 1.
      {"--dataset synthetic --bind-addr 999.1.1.1", "--bind-addr 999.1.1.1: cannot resolve it"},
      {"--dataset synthetic --bind-addr 192.0.2.1", "--bind-addr 192.0.2.1 is not an address of this machine"},
      // CLI11 made it 2^63 - 1 without a word.
      {"--dataset synthetic --seed 18446744073709551616", "18446744073709551616 is outside the 64-bit integers"},
  };
  for (const auto& [args, fragment] : cases) {
    const CommandResult r = Train("--trace " + trace + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("accordion-train: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
    // Refused before any worker started: no trace, no checkpoint directory.
    EXPECT_FALSE(std::filesystem::exists(trace)) << args;
    EXPECT_FALSE(std::filesystem::exists(Path("none"))) << args;
  }
}

TEST_F(TrainCli, TwoProcessDenseEqualsOneProcessOnTheSameGlobalBatch) {
  for (int nproc : {1, 2}) {
    const CommandResult r = Train(kQuickRun + " --epochs 3 --nproc " + std::to_string(nproc) + " --trace " +
                                  Path("dense" + std::to_string(nproc) + ".trace"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const TraceContent one = ReadTrace(Path("dense1.trace"));
  const TraceContent two = ReadTrace(Path("dense2.trace"));
  EXPECT_EQ(one.run.world_size, 1);
  EXPECT_EQ(two.run.world_size, 2);
  ASSERT_EQ(one.epochs.size(), 3u);
  ASSERT_EQ(two.epochs.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    const EpochRecord &a = one.epochs[e], &b = two.epochs[e];
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_TRUE(Near(a.train_loss, b.train_loss, 1e-4)) << e << ": " << a.train_loss << " vs " << b.train_loss;
    EXPECT_TRUE(Near(a.test_loss, b.test_loss, 1e-4)) << e << ": " << a.test_loss << " vs " << b.test_loss;
    EXPECT_NEAR(a.train_acc, b.train_acc, 1.0 / 512);
    EXPECT_NEAR(a.test_acc, b.test_acc, 1.0 / 512);
    // Gradient norms are summed over workers: two workers' mean gradients add
    // up to twice the global mean gradient of the one-process run.
    for (size_t l = 0; l < one.layers.size(); ++l) {
      EXPECT_TRUE(Near(2 * one.layer_rows[e][l].grad_norm, two.layer_rows[e][l].grad_norm, 1e-4))
          << "epoch " << e << " layer " << l;
    }
  }
  // Learning happened at all (the comparison is not between two no-ops).
  EXPECT_LT(two.epochs[2].train_loss, 0.9 * two.epochs[0].train_loss);
}

// Every sampled iteration issued exactly the collectives analysis' plan
// describes for the epoch's levels, in its order, on every rank, with grad-ready rows
// for every layer.
void ExpectTracedCommunicationFollowsThePlan(const std::string& path, const TraceContent& t, int sampled_iterations,
                                             double bucket_mb) {
  const auto buckets = AssignBuckets(t.layers, static_cast<int64_t>(bucket_mb * 1024 * 1024));
  std::map<std::tuple<int, int64_t, int>, std::map<int, std::string>> got;  // by seq: issue order
  std::map<std::tuple<int, int64_t, int>, std::map<int, CollectiveRecord>> records;
  std::map<std::tuple<int, int64_t, int>, int> ready;
  auto reader = TraceReader::Open(path);
  reader->ForEachCollective([&](const CollectiveRecord& c) {
    got[{c.epoch, c.iteration, c.rank}][c.seq] =
        std::string(ToString(c.op)) + "/" + std::to_string(c.bucket) + "/" + c.tag + "/" + std::to_string(c.bytes);
    records[{c.epoch, c.iteration, c.rank}][c.seq] = c;
  });
  reader->ForEachGradReady([&](const GradReadyRecord& g) { ++ready[{g.epoch, g.iteration, g.rank}]; });
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    std::vector<double> levels;
    for (const EpochLayerRecord& r : t.layer_rows[e]) levels.push_back(r.level);
    std::map<int, std::string> want;
    const std::vector<PlannedCollective> plan =
        PlanStep(RecordedScheme(t.run, t.run.scheme), t.layers, buckets, levels);
    for (const PlannedCollective& c : plan) {
      want[static_cast<int>(want.size())] =
          std::string(ToString(c.op)) + "/" + std::to_string(c.bucket) + "/" + c.tag + "/" + std::to_string(c.bytes);
    }
    for (int it = 0; it < sampled_iterations; ++it) {
      for (int rank = 0; rank < t.run.world_size; ++rank) {
        const auto key = std::make_tuple(static_cast<int>(e), static_cast<int64_t>(it), rank);
        EXPECT_EQ(got[key], want) << "epoch " << e << " iteration " << it << " rank " << rank;
        EXPECT_EQ(ready[key], static_cast<int>(t.layers.size())) << "epoch " << e << " rank " << rank;
        if (got[key] != want) continue;
        // Nothing started before the collective whose result it needs had completed.
        for (size_t i = 0; i < plan.size(); ++i) {
          if (plan[i].after < 0) continue;
          const CollectiveRecord& needed = records[key][plan[i].after];
          EXPECT_GE(records[key][static_cast<int>(i)].start_s, needed.start_s + needed.duration_s - 1e-6)
              << want[static_cast<int>(i)] << ", epoch " << e << " rank " << rank;
        }
      }
    }
  }
}

TEST_F(TrainCli, AccordionSwitchesLevelsExactlyWhereTheControllerSays) {
  const std::string trace = Path("accordion.trace");
  // Small buckets: the plan's order across buckets (every Q after every
  // bucket's P) is checked against what the workers did.
  const CommandResult r = Train(kQuickRun +
                                " --nproc 2 --epochs 7 --scheme powersgd --policy accordion "
                                "--interval 2 --decay-epochs 4 --trace-iterations 2 --bucket-mb 0.1 "
                                "--trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TraceSummary summary = ValidateTrace(trace);
  EXPECT_EQ(summary.epochs, 7);
  EXPECT_EQ(summary.iteration_rows, 7 * 2 * 2);

  // Replaying the recorded norms and LRs through the controller, as
  // accordion-analyze does, must give the levels the run used.
  const TraceView view = LoadTraceView(trace);
  const Schedule replay = DeriveAccordionSchedule(view, Scheme::kPowerSgd,
                                                  AccordionOptions().eta(0.5).interval(2).level_low(2).level_high(1));
  const TraceContent t = ReadTrace(trace);
  std::set<double> used;
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    for (size_t l = 0; l < t.layers.size(); ++l) {
      EXPECT_EQ(t.layer_rows[e][l].level, replay.levels[e][l]) << "epoch " << e << " layer " << l;
      EXPECT_EQ(t.layer_rows[e][l].critical, replay.critical[e][l]) << "epoch " << e << " layer " << l;
      EXPECT_EQ(t.layer_rows[e][l].ratio.has_value(), replay.ratios[e][l].has_value());
      used.insert(t.layer_rows[e][l].level);
    }
  }
  EXPECT_EQ(used, (std::set<double>{1, 2})) << "the run should have switched levels";
  // The LR decay after epoch 3 makes every layer critical in epoch 4.
  for (size_t l = 0; l < t.layers.size(); ++l) EXPECT_TRUE(t.layer_rows[4][l].critical);
  ExpectTracedCommunicationFollowsThePlan(trace, t, 2, 0.1);

  const CommandResult schedule = test_support::RunCommand(kAnalyze + " schedule " + trace + " --interval 2");
  EXPECT_EQ(schedule.exit_code, 0) << schedule.err;
}

TEST_F(TrainCli, TopKTraceFollowsThePlanAcrossBuckets) {
  const std::string trace = Path("topk.trace");
  // Tiny buckets: the MLP's six tensors travel in several all-gathers.
  const CommandResult r = Train(kQuickRun +
                                " --nproc 2 --epochs 2 --scheme topk --level 0.2 --bucket-mb 0.1 "
                                "--trace-iterations 3 --trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  EXPECT_GT(AssignBuckets(t.layers, static_cast<int64_t>(0.1 * 1024 * 1024)).size(), 1u);
  ExpectTracedCommunicationFollowsThePlan(trace, t, 3, 0.1);
  double floats = 0;
  for (const EpochLayerRecord& row : t.layer_rows[0]) floats += row.floats_sent;
  EXPECT_DOUBLE_EQ(floats, t.epochs[0].floats_sent);
  EXPECT_LT(t.epochs[0].floats_sent, 0.5 * 235146 * static_cast<double>(t.epochs[0].iterations));
}

// The reference code's TopK: biases dense in their bucket's all-reduce, no
// error feedback. The trace says so, counts every bias whole, and the
// workers issued the plan's dense all-reduces and all-gathers.
TEST_F(TrainCli, TopKWithDenseVectorsRecordsWhatItSent) {
  const std::string trace = Path("topk-reference.trace");
  const CommandResult r = Train(kQuickRun +
                                " --nproc 2 --epochs 2 --scheme topk --level 0.2 --bucket-mb 0.1 "
                                "--topk-dense-vectors --topk-error-feedback off --trace-iterations 2 "
                                "--trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  const CommunicationScheme recorded = RecordedScheme(t.run, t.run.scheme);
  EXPECT_TRUE(recorded.topk_dense_vectors());
  EXPECT_FALSE(recorded.topk_error_feedback());
  ExpectTracedCommunicationFollowsThePlan(trace, t, 2, 0.1);
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    const auto steps = static_cast<double>(t.epochs[e].iterations);
    for (size_t l = 0; l < t.layers.size(); ++l) {
      const LayerInfo& layer = t.layers[l];
      const double per_step = layer.shape.size() == 1 ? static_cast<double>(layer.numel)
                                                      : 2.0 * static_cast<double>(TopKCount(layer.numel, 0.2));
      EXPECT_EQ(t.layer_rows[e][l].floats_sent, per_step * steps) << layer.name << " epoch " << e;
      EXPECT_EQ(layer.floats_high, per_step) << layer.name;
    }
  }
  // The same run's collectives carry the biases in "dense" all-reduces.
  std::set<std::string> tags;
  TraceReader::Open(trace)->ForEachCollective([&](const CollectiveRecord& c) { tags.insert(c.tag); });
  EXPECT_EQ(tags, (std::set<std::string>{"dense", "topk"}));
}

TEST_F(TrainCli, WorkersRendezvousFromTorchrunStyleEnvironment) {
  const int port = PickFreePort("127.0.0.1");
  const std::string trace = Path("env.trace");
  auto worker = [&](int rank) {
    return "RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank) +
           " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " + test_support::kTrain +
           kQuickRun + " --epochs 1 --threads 1 --trace " + trace;
  };
  const CommandResult r =
      test_support::RunCommand(worker(1) + " & other=$!; " + worker(0) + "; mine=$?; wait $other; exit $((mine | $?))");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.status, RunStatus::kComplete);
  EXPECT_EQ(t.run.world_size, 2);
  // Under torchrun, --nproc would start workers inside workers: refused.
  const CommandResult nested = test_support::RunCommand("RANK=0 WORLD_SIZE=1 MASTER_PORT=1 " + test_support::kTrain +
                                                        " --dataset synthetic --nproc 2");
  EXPECT_EQ(nested.exit_code, 2) << nested.err;
  EXPECT_NE(nested.err.find("--nproc"), std::string::npos) << nested.err;
}

// Workers started by hand with different flags (here --trace on rank 0
// only, as a hand-written Slurm script easily does) are refused at the
// rendezvous, naming the flag, instead of hanging on mismatched collectives.
TEST_F(TrainCli, WorkersStartedWithDifferentFlagsAreRefusedAtTheRendezvous) {
  const int port = PickFreePort("127.0.0.1");
  auto worker = [&](int rank, const std::string& extra) {
    return "RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank) +
           " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " + test_support::kTrain +
           kQuickRun + " --epochs 1 --threads 1 --timeout 120" + extra;
  };
  const auto started = std::chrono::steady_clock::now();
  const CommandResult r =
      test_support::RunCommand(worker(1, "") + " 2>" + Path("err1") + " & other=$!; " +
                               worker(0, " --trace " + Path("t.trace")) + "; mine=$?; wait $other; echo \"$mine $?\"");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  EXPECT_NE(r.out.find("2 2"), std::string::npos) << r.out << r.err;
  const std::string want = "--trace is given on rank 0 and none on rank 1";
  EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  EXPECT_EQ(test_support::CountLines(r.err), 1) << r.err;
  EXPECT_NE(test_support::ReadFile(Path("err1")).find(want), std::string::npos) << test_support::ReadFile(Path("err1"));
  EXPECT_FALSE(std::filesystem::exists(Path("t.trace"))) << "nothing is written before the workers agree";
}

// A MASTER_PORT someone already listens on is named in one line, before any
// worker starts (c10d would say it in several lines of its log).
TEST_F(TrainCli, ABusyMasterPortIsOneLine) {
  int port = 0;
  const int fd = ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  const CommandResult r = test_support::RunCommand("MASTER_PORT=" + std::to_string(port) + " " + test_support::kTrain +
                                                   kQuickRun + " --nproc 2 --epochs 1");
  ::close(fd);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(test_support::CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("MASTER_PORT " + std::to_string(port) + " is already in use"), std::string::npos) << r.err;
}

// What one machine cannot hold is refused in one line before anything
// starts: --nproc 1000 forked ~100 MB workers until memory ran out,
// --threads 100000 ran at load 450, --lstm-size 1000000 asked for 64 TB.
TEST_F(TrainCli, WhatTheMachineCannotHoldIsRefusedBeforeAnythingStarts) {
  const std::string trace = Path("never.trace");
  for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"--nproc 1000", "--nproc 1000: this machine has "},
           {"--nproc 2000000000", "--nproc 2000000000: this machine has "},
           {"--threads 100000", "--threads 100000 is above 4 per core (at most "},
           {"--threads -1", "--threads must be positive"},
           {"--lstm-size 1000000", "--lstm-size must be in 1..8192"}}) {
    const CommandResult r = test_support::RunCommand("timeout -k 5 60 " + test_support::kTrain + kQuickRun +
                                                     " --trace " + trace + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("accordion-train: error: " + fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(trace)) << args;
  }
  const std::string help = Train("--help").out;
  for (const std::string text : {"at most 8 per core, one per 128 MiB of available memory, within the process limit",
                                 "at most 4 per core", "(at most 8192"}) {
    EXPECT_NE(help.find(text), std::string::npos) << text << "\n" << help;
  }
}

// A FIFO where a data file is expected blocked the launcher for ever (gzopen
// of an IDX file, the checkpoint's manifest); each is refused in one line.
TEST_F(TrainCli, FifosWhereFilesAreExpectedAreRefusedNotWaitedOn) {
  const std::string idx = Path("idx");
  std::filesystem::create_directories(idx);
  for (const char* name :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    ASSERT_EQ(::mkfifo((idx + "/" + name).c_str(), 0600), 0);
  }
  const std::string ckpt = Path("ckpt");
  std::filesystem::create_directories(ckpt);
  ASSERT_EQ(::mkfifo((ckpt + "/checkpoint.json").c_str(), 0600), 0);
  const std::string text = Path("text.fifo");
  ASSERT_EQ(::mkfifo(text.c_str(), 0600), 0);
  for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"--dataset mnist --model mlp --data-dir " + idx, "train-images-idx3-ubyte: not a regular file (a FIFO)"},
           {kQuickRun + " --checkpoint-dir " + ckpt, "checkpoint.json: not a regular file (a FIFO)"},
           {"--dataset tokens --model lstm --data-file " + text, "text.fifo: not a regular file (a FIFO)"}}) {
    const CommandResult r = test_support::RunCommand("timeout -k 5 60 " + test_support::kTrain + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
  }
}

// SIGTERM while the workers are still starting (loading LibTorch, before
// their handlers exist) is a stop, not a failure: 130, as Ctrl-C later is.
TEST_F(TrainCli, SigtermWhileWorkersStartIsAStop) {
  for (const int sig : {SIGTERM, SIGINT}) {
    test_support::BackgroundRun run(kQuickRun + " --nproc 2 --epochs 50", dir_);
    for (int i = 0; i < 200 && run.Workers().size() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ::kill(run.pid(), sig);
    EXPECT_EQ(run.WaitForExit(std::chrono::seconds(60)), 130) << sig << "\n" << run.err();
    EXPECT_EQ(run.err().find("error"), std::string::npos) << run.err();
  }
}

// A worker whose MASTER_PORT is answered by another service (here one that
// sends bytes that are no c10d reply) reads them as a length: c10d's own
// thread threw std::length_error and the worker aborted (exit 134).
TEST_F(TrainCli, AMasterPortAnsweredByAnotherServiceIsOneLine) {
  int port = 0;
  const int fd = ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  std::atomic<bool> done{false};
  std::thread garbage([fd, &done] {
    const std::string reply = std::string(4096, '\xff') + "HTTP/1.0 200 OK\r\n\r\n";
    while (!done) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int client = ::accept(fd, nullptr, nullptr);
      if (client < 0) continue;
      ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::shutdown(client, SHUT_WR);
      // Kept open until the test ends: the worker reads what it was sent.
    }
  });
  const CommandResult r = test_support::RunCommand(
      "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
      " timeout -k 5 120 " + test_support::kTrain + kQuickRun + " --epochs 1 --timeout 20");
  done = true;
  garbage.join();
  ::close(fd);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(test_support::CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("accordion-train: error: rank 1: rendezvous of 2 workers at 127.0.0.1:" + std::to_string(port) +
                       " failed: what answers there is not a c10d store"),
            std::string::npos)
      << r.err;
}

// A service that sends one byte and holds the connection: c10d read the rest
// of its reply without a timeout, so the worker waited past --timeout for
// ever, and restarted the read after SIGTERM (only SIGKILL ended it).
TEST_F(TrainCli, AMasterPortThatSendsPartOfAReplyAndHoldsOnEndsAtTheTimeoutAndOnSigterm) {
  int port = 0;
  const int fd = ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  std::atomic<bool> done{false};
  std::atomic<int> accepted{0};
  std::thread one_byte([fd, &done, &accepted] {
    std::vector<int> held;
    while (!done) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int client = ::accept(fd, nullptr, nullptr);
      if (client < 0) continue;
      ::send(client, "\x01", 1, MSG_NOSIGNAL);
      held.push_back(client);
      ++accepted;
    }
    for (const int client : held) ::close(client);
  });
  const std::string worker =
      "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
      " " + test_support::kTrain + kQuickRun + " --epochs 1";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult timed = test_support::RunCommand("timeout -k 5 40 env " + worker + " --timeout 5");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(timed.exit_code, 2) << timed.err;
  EXPECT_EQ(CountLines(timed.err), 1) << timed.err;
  EXPECT_NE(
      timed.err.find("accordion-train: error: rank 1: rendezvous of 2 workers at 127.0.0.1:" + std::to_string(port) +
                     " failed: what answers there is not a c10d store (no whole reply within --timeout 5 s)"),
      std::string::npos)
      << timed.err;
  EXPECT_LT(took, std::chrono::seconds(12));
  // SIGTERM once the worker is at the rendezvous (it has connected: on a
  // loaded machine that can take seconds), long before its 60 s timeout: a
  // stop, exit 130, no line. The outer timeout's 124 is what a deaf worker gives.
  const int before = accepted;
  const std::string err = Path("stopped.err");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int out = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 2);
    ::execl("/bin/sh", "sh", "-c", ("exec env " + worker + " --timeout 60").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 3000 && accepted == before; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(accepted, before) << "the worker never reached the rendezvous";
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status << " " << test_support::ReadFile(err);
  EXPECT_EQ(test_support::ReadFile(err), "");
  done = true;
  one_byte.join();
  ::close(fd);
}

// Rendezvous failures of workers started by hand are our one line: c10d's
// log lines came first (seven for a name that does not resolve, retried
// until the timeout; four for a second rank 0), and workers of different
// WORLD_SIZE got Gloo's "[enforce fail at ./gloo/transport/tcp/address.cc:45]
// sizeof(impl_) == bytes.size(). 136 vs 272".
TEST_F(TrainCli, RendezvousFailuresOfWorkersStartedByHandAreOneLineEach) {
  int port = 0;
  const int fd = ListenOnLoopback(&port);
  ASSERT_GE(fd, 0);
  const auto worker = [&](int rank, int world, const std::string& addr) {
    return "RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world) + " MASTER_ADDR=" + addr +
           " MASTER_PORT=" + std::to_string(port) + " timeout -k 5 60 " + test_support::kTrain + kQuickRun +
           " --epochs 1 --timeout 3";
  };
  const auto expect_one_line = [](const CommandResult& r, int code, const std::string& fragment) {
    EXPECT_EQ(r.exit_code, code) << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  };
  // The port is taken, as by a first rank 0.
  expect_one_line(test_support::RunCommand(worker(0, 2, "127.0.0.1")), 2,
                  "rank 0: MASTER_PORT " + std::to_string(port) +
                      " is already in use on 127.0.0.1 (another run, or a second worker started with RANK 0?)");
  ::close(fd);
  expect_one_line(test_support::RunCommand(worker(1, 2, "no-such-host.invalid")), 2,
                  "rank 1: MASTER_ADDR no-such-host.invalid: cannot resolve it");
  // TEST-NET-1: nothing answers; c10d's own timeout, without its log lines.
  expect_one_line(test_support::RunCommand(worker(1, 2, "192.0.2.1")), 1,
                  "rank 1: rendezvous of 2 workers at 192.0.2.1:" + std::to_string(port) + " failed: ");
  const std::string err0 = Path("rank0.err");
  const CommandResult mismatch = test_support::RunCommand(worker(0, 2, "127.0.0.1") + " 2>" + err0 + " & sleep 0.5; " +
                                                          worker(1, 3, "127.0.0.1") + "; rc=$?; wait; exit $rc");
  expect_one_line(mismatch, 2, "rank 1: WORLD_SIZE is 3 for this worker and 2 for rank 0");
  const std::string rank0 = test_support::ReadFile(err0);
  EXPECT_EQ(CountLines(rank0), 1) << rank0;
  EXPECT_NE(rank0.find("rank 0: WORLD_SIZE is 2 for this worker and 3 for rank 1"), std::string::npos) << rank0;
}

// Standard output that cannot be written ends the run with one line and
// exit 4, and every epoch is in its trace. Piped into a reader that went
// away (`| head`), rank 0 died of SIGPIPE mid-run: "worker rank 0 ... was
// killed by signal 13", exit 1, and the trace marked failed at 2 of 5 epochs.
TEST_F(TrainCli, AStandardOutputThatCannotBeWrittenLosesNoEpoch) {
  for (const std::string into : {"full", "pipe"}) {
    const std::string trace = Path(into + ".trace"), rc = Path(into + ".rc");
    const std::string run =
        "timeout -k 5 120 " + test_support::kTrain + kQuickRun + " --nproc 2 --threads 1 --epochs 5 --trace " + trace;
    const CommandResult r = test_support::RunCommand(
        into == "full" ? run + " >/dev/full; echo $? >" + rc : "{ " + run + "; echo $? >" + rc + "; } | head -c 1");
    EXPECT_EQ(test_support::ReadFile(rc), std::to_string(kExitIoFailure) + "\n") << into << "\n" << r.err;
    const size_t error_at = r.err.find("accordion-train: error: ");
    ASSERT_NE(error_at, std::string::npos) << into << "\n" << r.err;
    EXPECT_EQ(CountLines(r.err.substr(error_at)), 1) << into << "\n" << r.err;
    EXPECT_NE(r.err.find("cannot write standard output"), std::string::npos) << into << "\n" << r.err;
    const TraceContent t = ReadTrace(trace);
    EXPECT_EQ(t.run.status, RunStatus::kComplete) << into;
    EXPECT_EQ(t.epochs.size(), 5u) << into;
  }
}

// A FIFO where a checkpoint's partial file goes is no leftover of a save, so
// nothing removed it, and the save at the first epoch's end opened it to
// write and blocked for ever (the launcher with it).
TEST_F(TrainCli, AFifoWhereACheckpointIsWrittenIsRefusedNotWaitedOn) {
  for (const std::string name : {"epoch-0.rank-1.pt.partial", "checkpoint.json.partial"}) {
    const std::string ckpt = Path("ckpt-" + name);
    std::filesystem::create_directories(ckpt);
    ASSERT_EQ(::mkfifo((ckpt + "/" + name).c_str(), 0600), 0);
    const CommandResult r = test_support::RunCommand("timeout -k 5 90 " + test_support::kTrain + kQuickRun +
                                                     " --nproc 2 --epochs 1 --checkpoint-dir " + ckpt);
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.err;
    const size_t error_at = r.err.find("accordion-train: error: ");  // after the epoch's progress bar
    ASSERT_NE(error_at, std::string::npos) << r.err;
    EXPECT_EQ(CountLines(r.err.substr(error_at)), 1) << name << "\n" << r.err;
    EXPECT_NE(r.err.find(ckpt + "/" + name + " is a FIFO, not a partial file a tool left; remove it"),
              std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace accordion
