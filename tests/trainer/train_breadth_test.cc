// accordion-train beyond the compressors, end to end with real worker
// processes over real Gloo: batch size under Accordion, gradient
// accumulation, the Hessian eigenvalue, the LSTM on a text file, VGG-19-BN on
// CIFAR files, and bad data refused before any worker starts.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "analysis/communication_accounting.h"
#include "analysis/schedule.h"
#include "analysis/trace_view.h"
#include "tests/trainer/data_writers.h"
#include "tests/trainer/train_support.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::kAnalyze;
using test_support::Near;
using test_support::ReadTrace;
using test_support::RunCommand;
using test_support::TraceContent;
using test_support::Train;

using TrainBreadth = test_support::TempDirTest;

// 512 synthetic samples, global batch 64 growing to 256; checks every epoch;
// LR warm-up over 2 epochs and a decay at epoch 5.
const std::string kBatchAccordion =
    " --dataset synthetic --limit-samples 512 --model mlp --lr 0.05 --seed 3 --nproc 2 --epochs 7"
    " --scheme batch --policy accordion --low 64 --high 256 --interval 1 --warmup-epochs 2 --decay-epochs 5";

TEST_F(TrainBreadth, BatchAccordionGrowsTheBatchWhereTheControllerSaysAndScalesTheLr) {
  const std::string trace = Path("batch.trace");
  const CommandResult r =
      Train(kBatchAccordion + " --trace-iterations 2 --hessian-every 2 --hessian-blocks --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TraceSummary summary = ValidateTrace(trace);
  EXPECT_EQ(summary.epochs, 7);
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.scheme, Scheme::kBatch);
  EXPECT_EQ(t.run.batch_size, 64);

  // The levels are what accordion-analyze schedule replays from the
  // recorded norms and LRs, in C++ and from the command line.
  const Schedule replay = DeriveAccordionSchedule(
      LoadTraceView(trace), Scheme::kBatch, AccordionOptions().eta(0.5).interval(1).level_low(64).level_high(256));
  const CommandResult cli = RunCommand(kAnalyze + " schedule " + trace + " --interval 1 --format json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const nlohmann::json json = nlohmann::json::parse(cli.out);
  int64_t previous = 0;
  std::set<int64_t> used;
  int64_t numel = 0;
  for (const LayerInfo& l : t.layers) numel += l.numel;
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    const EpochRecord& rec = t.epochs[e];
    const auto batch = rec.batch_size;
    for (size_t l = 0; l < t.layers.size(); ++l) {
      EXPECT_EQ(t.layer_rows[e][l].level, replay.levels[e][l]) << "epoch " << e;
      EXPECT_EQ(t.layer_rows[e][l].critical, replay.critical[e][l]) << "epoch " << e;
      EXPECT_EQ(t.layer_rows[e][l].level, static_cast<double>(batch));
    }
    EXPECT_EQ(json.at("epochs").at(e).at("levels").at(0).get<double>(), static_cast<double>(batch)) << e;
    EXPECT_EQ(json.at("epochs").at(e).at("steps").get<int64_t>(), rec.iterations) << e;
    // Steps at the epoch's global batch; one dense all-reduce of every
    // parameter per step.
    EXPECT_EQ(rec.iterations, StepsPerEpoch(512, batch, 2)) << e;
    EXPECT_DOUBLE_EQ(rec.floats_sent, static_cast<double>(numel * rec.iterations)) << e;
    // LR: warm-up, decay, times batch / low.
    const double base = 0.05 * (e < 2 ? (e + 1) / 2.0 : 1.0) * (e >= 5 ? 0.1 : 1.0);
    EXPECT_TRUE(Near(rec.lr, base * static_cast<double>(batch) / 64, 1e-12)) << e << ": " << rec.lr;
    // The batch only grows - not even the LR decay at epoch 5 shrinks it.
    EXPECT_GE(batch, previous) << e;
    previous = batch;
    used.insert(batch);
  }
  EXPECT_EQ(t.epochs[0].batch_size, 64);
  EXPECT_EQ(used, (std::set<int64_t>{64, 256})) << "the run should have grown its batch";
  EXPECT_TRUE(t.layer_rows[5][0].critical) << "the decay is still detected";

  // The Hessian table: epochs 0, 2, 4, 6; the whole model and fc1..fc3.
  auto reader = TraceReader::Open(trace);
  std::map<int, std::set<std::string>> blocks;
  for (const HessianRecord& h : reader->Hessian()) {
    blocks[h.epoch].insert(h.block);
    EXPECT_TRUE(std::isfinite(h.eigenvalue));
    EXPECT_GT(h.eigenvalue, 0) << "a cross-entropy Hessian's top eigenvalue is positive";
    EXPECT_GE(h.iterations, 1);
    EXPECT_LE(h.iterations, 100);
    EXPECT_GT(h.seconds, 0);
  }
  ASSERT_EQ(blocks.size(), 4u);
  for (int e : {0, 2, 4, 6}) EXPECT_EQ(blocks[e], (std::set<std::string>{"", "fc1", "fc2", "fc3"})) << e;
  EXPECT_EQ(summary.hessian_rows, 16);
}

TEST_F(TrainBreadth, AccumulatedMicroBatchesInTwoProcessesEqualOneLargeBatchInOne) {
  // Global batch 128: two workers accumulating two micro-batches of 32
  // each, against one worker taking all 128 at once.
  const std::string common =
      " --dataset synthetic --limit-samples 512 --model mlp --lr 0.05 --seed 3 --epochs 3"
      " --scheme batch --level 128 --threads 1";
  ASSERT_EQ(Train(common + " --nproc 2 --micro-batch 64 --trace " + Path("acc.trace")).exit_code, 0);
  ASSERT_EQ(Train(common + " --nproc 1 --trace " + Path("one.trace")).exit_code, 0);
  const TraceContent acc = ReadTrace(Path("acc.trace"));
  const TraceContent one = ReadTrace(Path("one.trace"));
  ASSERT_EQ(acc.epochs.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(acc.epochs[e].iterations, one.epochs[e].iterations);
    EXPECT_TRUE(Near(acc.epochs[e].train_loss, one.epochs[e].train_loss, 1e-4))
        << e << ": " << acc.epochs[e].train_loss << " vs " << one.epochs[e].train_loss;
    EXPECT_TRUE(Near(acc.epochs[e].test_loss, one.epochs[e].test_loss, 1e-4)) << e;
    for (size_t l = 0; l < acc.layers.size(); ++l) {
      // Norms are summed over workers: twice the one-worker mean gradient.
      EXPECT_TRUE(Near(acc.layer_rows[e][l].grad_norm, 2 * one.layer_rows[e][l].grad_norm, 1e-4)) << e << " " << l;
    }
  }
  EXPECT_LT(one.epochs[2].train_loss, 0.95 * one.epochs[0].train_loss) << "learning happened";
}

TEST_F(TrainBreadth, LstmLearnsATextFileWithTiedWeightsClippingAndTopK) {
  std::ofstream(Path("corpus.txt")) << test_support::TestCorpus(400);
  const std::string trace = Path("lstm.trace");
  const CommandResult r =
      Train("--model lstm --dataset tokens --data-file " + Path("corpus.txt") +
            " --lstm-size 32 --dropout 0.1 --tie-weights --bptt 12 --batch-size 8 --clip 0.5 --lr 20 --momentum 0"
            " --weight-decay 0 --nproc 2 --epochs 6 --scheme topk --policy accordion --interval 1"
            " --hessian-every 3 --hessian-batch 8 --trace " +
            trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.model, "lstm");
  EXPECT_EQ(t.layers.front().name, "encoder.weight");
  EXPECT_EQ(t.layers.back().name, "decoder.bias");
  // run.train_samples counts (stream, window) sequences, so the analysis'
  // step count is the run's.
  EXPECT_EQ(StepsPerEpoch(t.run.train_samples, 8, 2), t.epochs[0].iterations);
  // Per-token cross-entropy: perplexity falls from about the vocabulary size
  // (24 words) towards the corpus's few choices per position.
  const double first = std::exp(t.epochs[0].test_loss), last = std::exp(t.epochs[5].test_loss);
  EXPECT_LT(last, first);
  EXPECT_LT(last, 6.0) << "perplexity " << last;
  EXPECT_GT(t.epochs[5].test_acc, 0.3);
  EXPECT_EQ(TraceReader::Open(trace)->Hessian().size(), 2u);  // epochs 0 and 3, whole model
}

TEST_F(TrainBreadth, Vgg19BnTrainsOnCifarFilesWithAugmentation) {
  test_support::WriteCifarDir(dir_, CifarVariant::kCifar10, 8, 10);
  const std::string trace = Path("vgg.trace");
  const CommandResult r = Train("--model vgg19bn --dataset cifar10 --data-dir " + dir_ +
                                " --augment --batch-size 8 --nproc 2 --epochs 1 --scheme powersgd --level 2"
                                " --lr 0.01 --trace-iterations 1 --trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  int64_t parameters = 0;
  for (const LayerInfo& l : t.layers) parameters += l.numel;
  EXPECT_EQ(parameters, 20565834);
  EXPECT_EQ(t.run.train_samples, 40);
  EXPECT_EQ(t.epochs[0].iterations, 5);
  EXPECT_LT(t.epochs[0].floats_sent, 0.1 * static_cast<double>(parameters) * 5) << "PowerSGD compresses";
}

TEST_F(TrainBreadth, BadDataAndCombinationsAreOneLineExitTwoBeforeAnyWorker) {
  // Three broken CIFAR-10 directories and two broken text files.
  for (const char* name : {"truncated", "label", "missing"}) {
    std::filesystem::create_directory(Path(name));
    test_support::WriteCifarDir(Path(name), CifarVariant::kCifar10, 2, 2);
  }
  std::filesystem::resize_file(Path("truncated/data_batch_3.bin"), 5000);
  test_support::WriteBytes(Path("label/test_batch.bin"), test_support::CifarBytes(CifarVariant::kCifar10, {1, 12}));
  std::filesystem::remove(Path("missing/test_batch.bin"));
  test_support::WriteBytes(Path("binary.txt"), std::string("words\n\0\0\0\n", 10));
  std::ofstream(Path("words.txt")) << test_support::TestCorpus(50);
  const std::string trace = Path("bad.trace");
  const std::string lstm = "--model lstm --dataset tokens --data-file ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--dataset cifar10 --data-dir " + Path("truncated"), "not a whole number of 3073-byte CIFAR-10 records"},
      {"--dataset cifar10 --data-dir " + Path("label"), "has label 12"},
      {"--dataset cifar10 --data-dir " + Path("missing"), "test_batch.bin not found"},
      {"--dataset cifar100 --data-dir " + Path("label"), "train.bin not found"},
      {lstm + Path("nothing.txt"), "no such file"},
      {lstm + Path("binary.txt"), "not a text file"},
      {lstm + Path("words.txt") + " --batch-size 1000", "too few"},
      {lstm + Path("words.txt") + " --scheme batch", "--scheme batch is for the image models"},
      {"--dataset synthetic --model lstm", "--dataset tokens"},
      // Without the NCCL communicator that is said first; with it, that no GPU is here.
      {"--dataset synthetic --backend nccl --device cuda", ACCORDION_EXPECT_NCCL ? "sees no CUDA device" : "NCCL"},
      {"--dataset synthetic --device cuda --backend gloo", "sees no CUDA device"},
      {"--dataset synthetic --scheme batch --policy accordion --low 64 --high 200", "whole number of micro-batches"},
      {"--dataset synthetic --scheme batch --policy accordion --low 256 --high 64", "batch only grows"},
      {"--dataset synthetic --scheme batch --level 128 --micro-batch 48", "whole number of micro-batches"},
      {"--dataset synthetic --hessian-every 2 --hessian-iterations 0", "--hessian-iterations"},
  };
  for (const auto& [args, fragment] : cases) {
    const CommandResult r = Train("--nproc 2 --trace " + trace + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(test_support::CountLines(r.err), 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("accordion-train: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(trace)) << args;
  }
}

}  // namespace
}  // namespace accordion
