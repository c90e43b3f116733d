// CollectiveBench: sizes, shapes, nccl-tests' bandwidths, per-iteration
// timing across ranks, and the JSON calibrate reads (no processes here).
#include "trainer/collective_bench.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace accordion {
namespace {

TEST(CollectiveBench, ParsesSizesWithBinarySuffixes) {
  EXPECT_EQ(ParseByteSize("4096"), 4096);
  EXPECT_EQ(ParseByteSize("1K"), 1024);
  EXPECT_EQ(ParseByteSize("64M"), int64_t{64} << 20);
  EXPECT_EQ(ParseByteSize("2g"), int64_t{2} << 30);
  for (const char* bad : {"", "K", "1.5M", "-1", "1T", "12KB", "1 K", "9999999999999K"}) {
    EXPECT_THROW(ParseByteSize(bad), InputError) << bad;
  }
}

TEST(CollectiveBench, WritesSizesAsTheyAreParsed) {
  EXPECT_EQ(ByteSizeText(1024), "1K");
  EXPECT_EQ(ByteSizeText(int64_t{64} << 20), "64M");
  EXPECT_EQ(ByteSizeText(int64_t{3} << 30), "3G");
  EXPECT_EQ(ByteSizeText(1536), "1536");
  EXPECT_EQ(ByteSizeText(0), "0");
  for (int64_t bytes : {int64_t{4}, int64_t{4096}, int64_t{1000}, int64_t{5} << 20}) {
    EXPECT_EQ(ParseByteSize(ByteSizeText(bytes)), bytes) << bytes;
  }
}

TEST(CollectiveBench, SweepsFromMinToMaxByTheFactor) {
  EXPECT_EQ(CollectiveBenchOptions().Sizes().size(), 9u);  // 1K, 4K, ..., 64M
  EXPECT_EQ(CollectiveBenchOptions().Sizes().back(), int64_t{64} << 20);
  EXPECT_EQ(CollectiveBenchOptions().min_bytes(1024).max_bytes(65536).Sizes(),
            (std::vector<int64_t>{1024, 4096, 16384, 65536}));
  EXPECT_EQ(CollectiveBenchOptions().min_bytes(1000).max_bytes(9000).factor(3).Sizes(),
            (std::vector<int64_t>{1000, 3000, 9000}));
  EXPECT_EQ(CollectiveBenchOptions().min_bytes(4096).max_bytes(4096).Sizes(), (std::vector<int64_t>{4096}));
  EXPECT_NO_THROW(CollectiveBenchOptions().Validate());
  EXPECT_THROW(CollectiveBenchOptions().factor(1).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().min_bytes(2).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().min_bytes(4096).max_bytes(1024).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().max_bytes(int64_t{16} << 30).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().iters(0).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().warmup(-1).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().ops({}).Validate(), InputError);
  EXPECT_THROW(CollectiveBenchOptions().backend("mpi").Validate(), InputError);
}

TEST(CollectiveBench, ShapesFollowNcclTestsForSizeAndTheSimulatorForBytes) {
  const BenchShape ar = ShapeOf(CollectiveOp::kAllReduce, 4096, 4);
  EXPECT_EQ(ar.elements_per_rank, 1024);
  EXPECT_EQ(ar.size_bytes, 4096);
  EXPECT_EQ(ar.count, 1024);
  EXPECT_EQ(ar.bytes, 4096);
  // All-gather: the size is the whole output, the bytes one rank's share.
  const BenchShape ag = ShapeOf(CollectiveOp::kAllGather, 4096, 4);
  EXPECT_EQ(ag.elements_per_rank, 256);
  EXPECT_EQ(ag.size_bytes, 4096);
  EXPECT_EQ(ag.count, 1024);
  EXPECT_EQ(ag.bytes, 1024);
  // Rounded down to whole per-rank payloads, one element at least.
  EXPECT_EQ(ShapeOf(CollectiveOp::kAllGather, 1000, 3).size_bytes, 996);
  EXPECT_EQ(ShapeOf(CollectiveOp::kAllGather, 1024, 512).elements_per_rank, 1);
  EXPECT_EQ(ShapeOf(CollectiveOp::kBroadcast, 1023, 8).size_bytes, 1020);
}

TEST(CollectiveBench, BusBandwidthIsNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kBroadcast, 4), 1.0);
  BenchResult r;
  r.shape = ShapeOf(CollectiveOp::kAllReduce, int64_t{1} << 20, 8);
  r.median_s = 1e-3;
  EXPECT_DOUBLE_EQ(r.algbw_GBps(), 1.048576);
  EXPECT_DOUBLE_EQ(r.busbw_GBps(), 1.048576 * 2 * 7 / 8);
}

TEST(CollectiveBench, AnIterationTakesItsSlowestRank) {
  const BenchShape s = ShapeOf(CollectiveOp::kAllReduce, 1024, 2);
  // Per iteration the slower rank: 2, 5, 4 -> median 4, min 2.
  const BenchResult r = Summarise(s, {{1, 5, 3}, {2, 1, 4}});
  EXPECT_EQ(r.iterations, 3);
  EXPECT_DOUBLE_EQ(r.median_s, 4);
  EXPECT_DOUBLE_EQ(r.min_s, 2);
  EXPECT_DOUBLE_EQ(Summarise(s, {{1, 2, 3, 10}}).median_s, 2.5);
  EXPECT_THROW(Summarise(s, {{1, 2}, {1}}), std::invalid_argument);
}

TEST(CollectiveBench, TheTableAndTheJsonSayWhatWasMeasured) {
  const CollectiveBenchOptions o = CollectiveBenchOptions().iters(5).warmup(2);
  const std::string header = BenchTableHeader(o, 4);
  EXPECT_NE(header.find("gloo, 4 ranks, float32, 2 warm-up + 5 timed"), std::string::npos) << header;
  EXPECT_NE(header.find("busbw(GB/s)"), std::string::npos);
  BenchResult r = Summarise(ShapeOf(CollectiveOp::kAllGather, 4096, 4), {{1e-4, 2e-4}});
  const std::string row = BenchTableRow(r);
  EXPECT_NE(row.find("allgather"), std::string::npos) << row;
  EXPECT_NE(row.find("150.0"), std::string::npos) << row;
  const nlohmann::json j = BenchJson(o, 4, {r});
  EXPECT_EQ(j.at("format"), "accordion-bench-collectives");
  EXPECT_EQ(j.at("world_size"), 4);
  const nlohmann::json& s = j.at("samples").at(0);
  EXPECT_EQ(s.at("op"), "allgather");
  EXPECT_EQ(s.at("bytes"), 1024);  // one rank's payload, as Calibrator::Add counts it
  EXPECT_EQ(s.at("size_bytes"), 4096);
  EXPECT_DOUBLE_EQ(s.at("median_s").get<double>(), 1.5e-4);
  EXPECT_DOUBLE_EQ(s.at("min_s").get<double>(), 1e-4);
  EXPECT_EQ(s.at("iterations"), 2);
}

}  // namespace
}  // namespace accordion
