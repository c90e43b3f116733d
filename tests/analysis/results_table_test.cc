#include "analysis/results_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "tests/support/temp_dir_test.h"
#include "tests/support/synthetic_trace.h"

namespace accordion {
namespace {

TEST(MeanWithCi95, UsesStudentsTForSmallSamples) {
  const MeanCi m = MeanWithCi95({1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(m.mean, 2.0);
  // sd = 1, t(2 df) = 4.303: half-width = 4.303 / sqrt(3).
  EXPECT_NEAR(m.half_width, 4.303 / std::sqrt(3.0), 1e-12);
  EXPECT_EQ(m.n, 3);
  EXPECT_EQ(MeanWithCi95({5.0}).half_width, 0.0);
  EXPECT_EQ(MeanWithCi95({}).n, 0);
}

class ResultsTableTest : public test_support::TempDirTest {
 protected:
  std::string Run(Policy policy, double low, double high, uint64_t seed) {
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 40;
    o.decay_epochs = {30};
    o.policy = policy;
    o.level_low = low;
    o.level_high = high;
    o.seed = seed;
    const std::string path = dir_ + "/" + std::to_string(paths_.size()) + ".trace";
    synthetic::WriteSyntheticTrace(path, o);
    paths_.push_back(path);
    return path;
  }

  std::vector<std::string> paths_;
};

TEST_F(ResultsTableTest, GroupsSeedsIntoPaperRowsWithRatiosAgainstStaticLow) {
  for (uint64_t seed : {1, 2, 3}) {
    Run(Policy::kStatic, 2, 2, seed);
    Run(Policy::kStatic, 1, 1, seed);
    Run(Policy::kAccordion, 2, 1, seed);
  }
  const auto rows = BuildResultsTable(paths_);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].setting, "rank 2");
  EXPECT_EQ(rows[1].setting, "rank 1");
  EXPECT_EQ(rows[2].setting, "Accordion (rank 2 / rank 1)");
  for (const auto& r : rows) EXPECT_EQ(r.accuracy.n, 3);
  EXPECT_DOUBLE_EQ(rows[0].floats_ratio.value(), 1.0);
  // Rank 1 sends fewer floats than rank 2; Accordion lies between.
  EXPECT_GT(rows[1].floats_ratio.value(), rows[2].floats_ratio.value());
  EXPECT_GT(rows[2].floats_ratio.value(), 1.0);
  EXPECT_DOUBLE_EQ(rows[1].floats_ratio.value(), rows[0].floats.mean / rows[1].floats.mean);
  // Floats do not depend on the seed: no spread.
  EXPECT_DOUBLE_EQ(rows[0].floats.half_width, 0.0);
  std::stringstream md;
  WriteResultsMarkdown(rows, md);
  EXPECT_NE(md.str().find("| mlp | synthetic | 4 | 40 | powersgd | rank 1 | 3 |"), std::string::npos) << md.str();
  // Three runs: an interval.
  EXPECT_TRUE(rows[0].accuracy.has_ci());
  EXPECT_LT(md.str().find(" ± "), md.str().find("\n\n"));
}

// A 1-worker and a 2-worker run of one setting are two rows, never one
// averaged "85.34 ± 74.01"; two runs are a mean without an interval.
TEST_F(ResultsTableTest, RunsOfAnotherTrainingAreNotSeeds) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 12;
  o.decay_epochs = {8};
  auto write = [&](int workers, int epochs, uint64_t seed) {
    o.world_size = workers;
    o.epochs = epochs;
    o.seed = seed;
    const std::string path =
        dir_ + "/w" + std::to_string(workers) + "-e" + std::to_string(epochs) + "-s" + std::to_string(seed) + ".trace";
    synthetic::WriteSyntheticTrace(path, o);
    paths_.push_back(path);
  };
  write(1, 12, 1);
  write(2, 12, 1);
  write(2, 12, 2);
  write(2, 6, 3);  // fewer epochs: another training too
  const auto rows = BuildResultsTable(paths_);
  ASSERT_EQ(rows.size(), 3u);
  std::map<std::pair<int, int>, ResultsRow> by;
  for (const ResultsRow& r : rows) by[{r.workers, r.epochs}] = r;
  const std::pair<int, int> one{1, 12}, two{2, 12}, short_run{2, 6};
  ASSERT_EQ(by.count(one) + by.count(two) + by.count(short_run), 3u);
  EXPECT_EQ(by[one].traces.size(), 1u);
  EXPECT_EQ(by[two].traces.size(), 2u);
  // Two seeds: the mean, no interval (t = 12.7 would make one up).
  EXPECT_EQ(by[two].accuracy.n, 2);
  EXPECT_FALSE(by[two].accuracy.has_ci());
  EXPECT_EQ(by[two].accuracy.half_width, 0.0);
  std::stringstream md;
  WriteResultsMarkdown(rows, md);
  const std::string table = md.str().substr(0, md.str().find("\n\n"));  // the rows, not the footnote
  EXPECT_EQ(table.find(" ± "), std::string::npos) << md.str();
}

// Accordion beside dense, with no static run: no "1.00x" against itself,
// and its floats against dense's.
TEST_F(ResultsTableTest, RatiosAgainstDenseAndNoneWithoutTheSchemesStaticRow) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 12;
  o.decay_epochs = {8};
  o.scheme = Scheme::kDense;
  o.policy = Policy::kStatic;
  o.level_low = o.level_high = 0;
  const std::string dense = dir_ + "/dense.trace";
  synthetic::WriteSyntheticTrace(dense, o);
  o.scheme = Scheme::kPowerSgd;
  o.policy = Policy::kAccordion;
  o.level_low = 2;
  o.level_high = 1;
  const std::string accordion = dir_ + "/accordion.trace";
  synthetic::WriteSyntheticTrace(accordion, o);
  const auto rows = BuildResultsTable({dense, accordion});
  ASSERT_EQ(rows.size(), 2u);
  const ResultsRow& d = rows[0].scheme == Scheme::kPowerSgd ? rows[1] : rows[0];
  const ResultsRow& a = rows[0].scheme == Scheme::kPowerSgd ? rows[0] : rows[1];
  EXPECT_DOUBLE_EQ(d.floats_vs_baseline.value(), 1.0);
  EXPECT_TRUE(d.is_baseline);
  EXPECT_EQ(a.baseline, "dense");
  EXPECT_DOUBLE_EQ(a.floats_vs_baseline.value(), d.floats.mean / a.floats.mean);
  EXPECT_GT(a.floats_vs_baseline.value(), 10.0);  // PowerSGD rank 2 / 1 sends far less
  EXPECT_FALSE(a.floats_ratio.has_value());       // no static PowerSGD row to be 1x
  EXPECT_DOUBLE_EQ(d.floats_ratio.value(), 1.0);
  std::stringstream md;
  WriteResultsMarkdown(rows, md);
  EXPECT_NE(md.str().find("| — |"), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("vs dense"), std::string::npos) << md.str();

  // Pinned: the Accordion run is the baseline; dense is now its multiple.
  const auto pinned = BuildResultsTable({dense, accordion}, ResultsTableOptions().baseline(accordion));
  const ResultsRow& pd = pinned[0].scheme == Scheme::kPowerSgd ? pinned[1] : pinned[0];
  const ResultsRow& pa = pinned[0].scheme == Scheme::kPowerSgd ? pinned[0] : pinned[1];
  EXPECT_TRUE(pa.is_baseline);
  EXPECT_FALSE(pd.is_baseline);
  EXPECT_EQ(pd.baseline, "Accordion (rank 2 / rank 1)");
  EXPECT_DOUBLE_EQ(pa.floats_vs_baseline.value(), 1.0);
  EXPECT_DOUBLE_EQ(pd.floats_vs_baseline.value(), pa.floats.mean / pd.floats.mean);
  EXPECT_LT(pd.floats_vs_baseline.value(), 0.1);
  EXPECT_EQ(BaselineHeader(pinned), "Accordion (rank 2 / rank 1)");
  std::stringstream pinned_md;
  WriteResultsMarkdown(pinned, pinned_md);
  EXPECT_NE(pinned_md.str().find("| vs Accordion (rank 2 / rank 1) |"), std::string::npos) << pinned_md.str();
  EXPECT_NE(pinned_md.str().find("Accordion (rank 2 / rank 1) (baseline)"), std::string::npos) << pinned_md.str();
  // A baseline that is not among the traces is an input error.
  EXPECT_THROW(BuildResultsTable({dense}, ResultsTableOptions().baseline(accordion)), InputError);
}

TEST_F(ResultsTableTest, APinnedBaselineOfAnotherTrainingLeavesTheOthersOnDense) {
  synthetic::SyntheticTraceOptions o;
  o.epochs = 6;
  o.scheme = Scheme::kDense;
  o.policy = Policy::kStatic;
  o.level_low = o.level_high = 0;
  o.world_size = 2;
  const std::string dense2 = dir_ + "/dense-2w.trace";
  synthetic::WriteSyntheticTrace(dense2, o);
  o.world_size = 4;
  const std::string dense4 = dir_ + "/dense-4w.trace";
  synthetic::WriteSyntheticTrace(dense4, o);
  o.scheme = Scheme::kTopK;
  o.level_low = o.level_high = 0.1;
  const std::string topk4 = dir_ + "/topk-4w.trace";
  synthetic::WriteSyntheticTrace(topk4, o);
  const auto rows = BuildResultsTable({dense2, dense4, topk4}, ResultsTableOptions().baseline(topk4));
  ASSERT_EQ(rows.size(), 3u);
  for (const ResultsRow& r : rows) {
    EXPECT_EQ(r.baseline, r.workers == 4 ? "TopK 10%" : "dense") << r.setting << " at " << r.workers;
  }
  EXPECT_EQ(BaselineHeader(rows), "baseline");
}

}  // namespace
}  // namespace accordion
