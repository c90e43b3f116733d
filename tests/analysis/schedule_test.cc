#include "analysis/schedule.h"

#include <gtest/gtest.h>

#include "analysis/communication_accounting.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"
#include "tests/support/temp_dir_test.h"
#include "tests/support/synthetic_trace.h"

namespace accordion {
namespace {

class ScheduleTest : public test_support::TempDirTest {
 protected:
  TraceView Make(const synthetic::SyntheticTraceOptions& o) {
    const std::string path = dir_ + "/t" + std::to_string(counter_++) + ".trace";
    synthetic::WriteSyntheticTrace(path, o);
    return LoadTraceView(path);
  }

  int counter_ = 0;
};

AccordionOptions PaperOptions(double low, double high, int interval = 10) {
  return AccordionOptions().eta(0.5).interval(interval).level_low(low).level_high(high);
}

TEST_F(ScheduleTest, ReplayingRecordedNormsReproducesTheRecordedLevels) {
  synthetic::SyntheticTraceOptions o;
  o.epochs = 40;
  o.interval = 5;
  o.decay_epochs = {25};
  const TraceView view = Make(o);
  const Schedule s = DeriveAccordionSchedule(view, Scheme::kPowerSgd, PaperOptions(2, 1, 5));
  ASSERT_EQ(s.num_epochs(), 40);
  for (int e = 0; e < 40; ++e) EXPECT_EQ(s.levels[e], view.levels[e]) << "epoch " << e;
}

TEST_F(ScheduleTest, CriticalAtStartAndAfterLrDecayHighInBetween) {
  synthetic::SyntheticTraceOptions o;
  o.epochs = 40;
  o.decay_epochs = {25};
  const TraceView view = Make(o);
  const Schedule s = DeriveAccordionSchedule(view, Scheme::kPowerSgd, PaperOptions(2, 1));
  // Epochs 0..10 are critical by construction (no comparison before epoch 10).
  for (int e = 0; e <= 10; ++e) EXPECT_EQ(s.levels[e][0], 2) << e;
  // Norms fall by > 50 % between epochs 0 and 10, so 11..20 stay low; they
  // flatten between 10 and 20, so 21..24 switch to high.
  EXPECT_EQ(s.levels[15][0], 2);
  EXPECT_EQ(s.levels[22][0], 1);
  // The LR decays after epoch 24: epoch 25 is critical for every layer.
  EXPECT_TRUE(s.lr_decay[24]);
  for (int l = 0; l < view.num_layers(); ++l) EXPECT_EQ(s.levels[25][l], 2);
}

TEST_F(ScheduleTest, StaticCostIsStepsTimesPerStepFloats) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 3;
  o.train_samples = 60000;
  o.batch_size = 512;
  o.world_size = 4;
  const TraceView view = Make(o);
  const ScheduleCost cost = CostOf(view, StaticSchedule(view, Scheme::kPowerSgd, 1));
  // MLP at rank 1: fc1 256+784, fc2 128+256, fc3 10x128 stays dense
  // (2 * 138 = 276 < 1280 -> compressed: 138), biases 256 + 128 + 10.
  const double per_step = (256 + 784) + 256 + (128 + 256) + 128 + (10 + 128) + 10;
  EXPECT_EQ(cost.steps[0], 118);
  EXPECT_DOUBLE_EQ(cost.epoch_floats[0], per_step * 118);
  EXPECT_DOUBLE_EQ(cost.total_floats, per_step * 118 * 3);
}

TEST_F(ScheduleTest, AccordionCostLiesBetweenStaticHighAndStaticLow) {
  synthetic::SyntheticTraceOptions o;
  o.epochs = 60;
  o.decay_epochs = {40};
  const TraceView view = Make(o);
  const ScheduleComparison c = CompareSchedules(view, Scheme::kPowerSgd, PaperOptions(2, 1));
  EXPECT_LT(c.accordion_cost.total_floats, c.low_cost.total_floats);
  EXPECT_GT(c.accordion_cost.total_floats, c.high_cost.total_floats);
}

TEST_F(ScheduleTest, HigherEtaSwitchesToHighCompressionMoreOften) {
  synthetic::SyntheticTraceOptions o;
  o.epochs = 60;
  o.decay_epochs = {40};
  const TraceView view = Make(o);
  const double strict =
      CostOf(view, DeriveAccordionSchedule(view, Scheme::kPowerSgd, PaperOptions(2, 1).eta(0.05))).total_floats;
  const double loose =
      CostOf(view, DeriveAccordionSchedule(view, Scheme::kPowerSgd, PaperOptions(2, 1).eta(10))).total_floats;
  EXPECT_GT(strict, loose);
}

TEST_F(ScheduleTest, BatchScheduleGrowsOnceAndCutsSteps) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.scheme = Scheme::kBatch;
  o.level_low = 512;
  o.level_high = 4096;
  o.epochs = 40;
  o.interval = 5;
  o.decay_epochs = {30};
  const TraceView view = Make(o);
  const Schedule s = DeriveAccordionSchedule(view, Scheme::kBatch, PaperOptions(512, 4096, 5));
  bool grown = false;
  for (int e = 0; e < s.num_epochs(); ++e) {
    if (grown) {
      EXPECT_EQ(s.levels[e][0], 4096) << "batch shrank at epoch " << e;
    }
    grown = grown || s.levels[e][0] == 4096;
  }
  EXPECT_TRUE(grown);
  EXPECT_TRUE(s.lr_decay[29]);
  EXPECT_TRUE(s.critical[30][0]);    // the decay is still detected ...
  EXPECT_EQ(s.levels[30][0], 4096);  // ... but the batch stays large
  const ScheduleCost cost = CostOf(view, s);
  EXPECT_EQ(cost.steps[0], StepsPerEpoch(o.train_samples, 512, o.world_size));
  EXPECT_EQ(cost.steps[39], StepsPerEpoch(o.train_samples, 4096, o.world_size));
  EXPECT_LT(cost.steps[39], cost.steps[0]);
}

TEST_F(ScheduleTest, RefusesDenseAndLevelsOfTheWrongKind) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 2;
  const TraceView view = Make(o);
  EXPECT_THROW(DeriveAccordionSchedule(view, Scheme::kDense, PaperOptions(2, 1)), InputError);
  EXPECT_THROW(DeriveAccordionSchedule(view, Scheme::kPowerSgd, PaperOptions(1.5, 1)), InputError);
  EXPECT_THROW(DeriveAccordionSchedule(view, Scheme::kTopK, PaperOptions(2, 0.1)), InputError);
  EXPECT_THROW(StaticSchedule(view, Scheme::kBatch, 0), InputError);
}

// A trace recorded with --topk-dense-vectors: its schedules count the 1-D
// tensors dense, as the run sent them; another scheme, or a configuration
// that does not say, takes the defaults.
TEST(RecordedScheme, SchedulesCountWhatTheRunsTensorsSent) {
  TraceView view;
  view.run.scheme = Scheme::kTopK;
  view.run.train_samples = 1000;
  view.run.batch_size = 100;
  view.run.world_size = 2;
  view.run.config_json = R"({"scheme": "topk", "topk_dense_vectors": true, "topk_error_feedback": "off"})";
  view.layers = synthetic::MlpLayers();
  view.epochs.resize(1);
  view.grad_norms.assign(1, std::vector<double>(view.layers.size(), 1.0));
  const CommunicationScheme recorded = RecordedScheme(view.run, Scheme::kTopK);
  EXPECT_TRUE(recorded.topk_dense_vectors());
  EXPECT_FALSE(recorded.topk_error_feedback());
  EXPECT_FALSE(RecordedScheme(view.run, Scheme::kPowerSgd).topk_dense_vectors());
  const Schedule s = StaticSchedule(view, Scheme::kTopK, 0.1);
  EXPECT_TRUE(s.scheme.topk_dense_vectors());
  // Per step: 2k of each matrix, the biases whole.
  const double per_step = 2 * (20071 + 3277 + 128) + (256 + 128 + 10);
  EXPECT_EQ(CostOf(view, s).total_floats, per_step * 10);  // 10 steps of 50 samples per rank

  view.run.config_json = R"({"scheme": "topk", "bucket_mb": 25})";  // a trace from before the choice
  EXPECT_FALSE(RecordedScheme(view.run, Scheme::kTopK).topk_dense_vectors());
  EXPECT_TRUE(RecordedScheme(view.run, Scheme::kTopK).topk_error_feedback());
  view.run.config_json = "not json";
  EXPECT_FALSE(RecordedScheme(view.run, Scheme::kTopK).topk_dense_vectors());
}

TEST(LevelName, NamesLevelsAsPeopleSayThem) {
  EXPECT_EQ(LevelName(Scheme::kPowerSgd, 2), "rank 2");
  EXPECT_EQ(LevelName(Scheme::kTopK, 0.25), "TopK 25%");
  EXPECT_EQ(LevelName(Scheme::kBatch, 4096), "batch 4096");
  EXPECT_EQ(LevelName(Scheme::kDense, 0), "dense");
}

}  // namespace
}  // namespace accordion

namespace accordion {
namespace {

// A ResNet-18 / CIFAR-10 run as in the paper's Table 1: 4 workers, global
// batch 512, 50,000 samples, 300 epochs. No file needed: a view in memory.
TraceView PaperResNet18View() {
  TraceView v;
  v.run.model = "resnet18";
  v.run.train_samples = 50000;
  v.run.batch_size = 512;
  v.run.world_size = 4;
  v.layers = synthetic::ResNet18Layers(10);
  v.epochs.resize(300);
  for (int e = 0; e < 300; ++e) {
    v.epochs[e].epoch = e;
    v.epochs[e].lr = 0.1;
  }
  v.grad_norms.assign(300, std::vector<double>(v.layers.size(), 1.0));
  return v;
}

TEST(PaperTables, PowerSgdFloatsMatchTable1ForResNet18) {
  const TraceView v = PaperResNet18View();
  const double rank2 = CostOf(v, StaticSchedule(v, Scheme::kPowerSgd, 2)).total_floats;
  const double rank1 = CostOf(v, StaticSchedule(v, Scheme::kPowerSgd, 1)).total_floats;
  // Table 1 "Data Sent (Million Floats)": rank 2 2418.4, rank 1 1350.4.
  EXPECT_NEAR(rank2 / 1e6, 2418.4, 2418.4 * 1e-3);
  EXPECT_NEAR(rank1 / 1e6, 1350.4, 1350.4 * 1e-3);
}

TEST(PaperTables, TopK10FloatsOfAllFourWorkersMatchTable3ForResNet18) {
  const TraceView v = PaperResNet18View();
  const double per_worker = CostOf(v, StaticSchedule(v, Scheme::kTopK, 0.1)).total_floats;
  // Table 3 "Data Sent (Billion Floats)", TopK 10 %: 262.8, summed over workers.
  EXPECT_NEAR(4 * per_worker / 1e9, 262.8, 262.8 * 1e-3);
}

}  // namespace
}  // namespace accordion
