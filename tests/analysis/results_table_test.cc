#include "analysis/results_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

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
  EXPECT_DOUBLE_EQ(rows[0].floats_ratio, 1.0);
  // Rank 1 sends fewer floats than rank 2; Accordion lies between.
  EXPECT_GT(rows[1].floats_ratio, rows[2].floats_ratio);
  EXPECT_GT(rows[2].floats_ratio, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].floats_ratio, rows[0].floats.mean / rows[1].floats.mean);
  // Floats do not depend on the seed: no spread.
  EXPECT_DOUBLE_EQ(rows[0].floats.half_width, 0.0);
  std::stringstream md;
  WriteResultsMarkdown(rows, md);
  EXPECT_NE(md.str().find("| mlp | synthetic | powersgd | rank 1 | 3 |"), std::string::npos) << md.str();
}

}  // namespace
}  // namespace accordion
