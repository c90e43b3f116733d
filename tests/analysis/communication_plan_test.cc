#include "analysis/communication_plan.h"

#include <gtest/gtest.h>

#include "analysis/communication_accounting.h"
#include "tests/support/synthetic_trace.h"

namespace accordion {
namespace {

int64_t TotalBytes(const std::vector<PlannedCollective>& plan) {
  int64_t sum = 0;
  for (const auto& c : plan) sum += c.bytes;
  return sum;
}

TEST(AssignBuckets, GoesInReverseOrderAndClosesBucketsAtTheLimit) {
  const auto layers = synthetic::MlpLayers();  // fc1 (200704), fc1.b, fc2 (32768), ...
  const auto buckets = AssignBuckets(layers, 4 * 34000);
  ASSERT_EQ(buckets.size(), 2u);
  // fc3.bias, fc3, fc2.bias hold 1418 floats, fc2 takes the bucket to 34186
  // >= 34000 and closes it; fc1.bias and fc1 make the second.
  EXPECT_EQ(buckets[0].layers, (std::vector<int>{5, 4, 3, 2}));
  EXPECT_EQ(buckets[1].layers, (std::vector<int>{1, 0}));
  EXPECT_EQ(buckets[0].dense_bytes + buckets[1].dense_bytes, 4 * (200704 + 256 + 32768 + 128 + 1280 + 10));
  // The default 25 MB holds the whole MLP in one bucket.
  EXPECT_EQ(AssignBuckets(layers).size(), 1u);
}

TEST(PlanStep, PayloadsMatchTheAccountingForEveryScheme) {
  const auto layers = synthetic::ResNet18Layers();
  const auto buckets = AssignBuckets(layers);
  for (Scheme scheme : {Scheme::kDense, Scheme::kPowerSgd, Scheme::kTopK}) {
    for (double level : scheme == Scheme::kTopK    ? std::vector<double>{0.1, 0.99}
                        : scheme == Scheme::kDense ? std::vector<double>{0}
                                                   : std::vector<double>{1, 2, 4}) {
      const std::vector<double> levels(layers.size(), level);
      double floats = 0;
      for (const auto& l : layers) floats += FloatsPerStep(scheme, l.shape, level);
      EXPECT_EQ(TotalBytes(PlanStep(scheme, layers, buckets, levels)), static_cast<int64_t>(4 * floats))
          << ToString(scheme) << " " << level;
    }
  }
  const CommunicationScheme reference = CommunicationScheme(Scheme::kTopK).topk_dense_vectors(true);
  const std::vector<double> levels(layers.size(), 0.1);
  double floats = 0;
  for (const auto& l : layers) floats += FloatsPerStep(reference, l.shape, 0.1);
  EXPECT_EQ(TotalBytes(PlanStep(reference, layers, buckets, levels)), static_cast<int64_t>(4 * floats));
}

TEST(PlanStep, PowerSgdSendsDenseThenPThenQPerBucket) {
  const auto layers = synthetic::MlpLayers();
  const auto buckets = AssignBuckets(layers);
  const auto plan = PlanStep(Scheme::kPowerSgd, layers, buckets, std::vector<double>(6, 2));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].tag, "dense");
  EXPECT_EQ(plan[0].layers, (std::vector<int>{5, 3, 1}));  // the biases
  EXPECT_EQ(plan[1].tag, "powersgd-p");
  EXPECT_EQ(plan[1].bytes, 4 * (10 + 128 + 256) * 2);
  EXPECT_EQ(plan[2].tag, "powersgd-q");
  EXPECT_EQ(plan[2].bytes, 4 * (128 + 256 + 784) * 2);
}

// The trainer sends every Q after backward and after its bucket's P: a Q
// placed between buckets would let the plan's consumers (the simulator)
// hide it behind the rest of backward.
TEST(PlanStep, PowerSgdSendsEveryQAfterBackwardAndAfterItsBucketsP) {
  const auto layers = synthetic::MlpLayers();
  const auto buckets = AssignBuckets(layers, 4 * 34000);
  ASSERT_EQ(buckets.size(), 2u);
  const auto plan = PlanStep(Scheme::kPowerSgd, layers, buckets, std::vector<double>(6, 2));
  std::vector<std::string> order;
  for (const PlannedCollective& c : plan) order.push_back(c.tag + "/" + std::to_string(c.bucket));
  EXPECT_EQ(order, (std::vector<std::string>{"dense/0", "powersgd-p/0", "dense/1", "powersgd-p/1", "powersgd-q/0",
                                             "powersgd-q/1"}));
  for (size_t i = 0; i < plan.size(); ++i) {
    const bool q = plan[i].tag == "powersgd-q";
    EXPECT_EQ(plan[i].after_backward, q) << order[i];
    if (!q) {
      EXPECT_EQ(plan[i].after, -1) << order[i];
      continue;
    }
    ASSERT_GE(plan[i].after, 0);
    ASSERT_LT(plan[i].after, static_cast<int>(i));
    EXPECT_EQ(plan[plan[i].after].tag, "powersgd-p");
    EXPECT_EQ(plan[plan[i].after].bucket, plan[i].bucket);
  }
}

TEST(PlanStep, TopKIsOneAllGatherPerBucketAndDenseOneAllReduce) {
  const auto layers = synthetic::MlpLayers();
  const auto buckets = AssignBuckets(layers, 4 * 34000);
  const auto topk = PlanStep(Scheme::kTopK, layers, buckets, std::vector<double>(6, 0.1));
  ASSERT_EQ(topk.size(), 2u);
  EXPECT_EQ(topk[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(topk[1].bucket, 1);
  const auto dense = PlanStep(Scheme::kDense, layers, buckets, std::vector<double>(6, 0));
  ASSERT_EQ(dense.size(), 2u);
  EXPECT_EQ(dense[0].op, CollectiveOp::kAllReduce);
}

// With dense vectors a TopK bucket sends its 1-D tensors first, in one
// all-reduce as PowerSGD does, then the all-gather of the rest; a bucket of
// 1-D tensors only has no all-gather.
TEST(PlanStep, TopKWithDenseVectorsAllReducesTheBiasesThenGathersTheRest) {
  const auto layers = synthetic::MlpLayers();  // fc1, fc1.bias, fc2, fc2.bias, fc3, fc3.bias
  const CommunicationScheme reference = CommunicationScheme(Scheme::kTopK).topk_dense_vectors(true);
  const auto plan = PlanStep(reference, layers, AssignBuckets(layers, 4 * 34000), std::vector<double>(6, 0.1));
  std::vector<std::string> order;
  for (const PlannedCollective& c : plan) order.push_back(c.tag + "/" + std::to_string(c.bucket));
  EXPECT_EQ(order, (std::vector<std::string>{"dense/0", "topk/0", "dense/1", "topk/1"}));
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(plan[0].layers, (std::vector<int>{5, 3}));
  EXPECT_EQ(plan[0].bytes, 4 * (10 + 128));
  EXPECT_EQ(plan[1].op, CollectiveOp::kAllGather);
  EXPECT_EQ(plan[1].layers, (std::vector<int>{4, 2}));
  EXPECT_EQ(plan[1].bytes, 4 * 2 * (128 + 3277));
  EXPECT_EQ(plan[2].layers, (std::vector<int>{1}));
  EXPECT_EQ(plan[3].layers, (std::vector<int>{0}));
  for (const PlannedCollective& c : plan) {
    EXPECT_EQ(c.after, -1);
    EXPECT_FALSE(c.after_backward);
  }
  // The default sparsifies every tensor: one all-gather per bucket.
  const auto sparse = PlanStep(Scheme::kTopK, layers, AssignBuckets(layers, 4 * 34000), std::vector<double>(6, 0.1));
  ASSERT_EQ(sparse.size(), 2u);
  EXPECT_EQ(sparse[0].layers, (std::vector<int>{5, 4, 3, 2}));
  // Buckets of one bias each: nothing to gather.
  const auto biases_alone = PlanStep(reference, layers, AssignBuckets(layers, 1), std::vector<double>(6, 0.1));
  order.clear();
  for (const PlannedCollective& c : biases_alone) order.push_back(c.tag + "/" + std::to_string(c.bucket));
  EXPECT_EQ(order, (std::vector<std::string>{"dense/0", "topk/1", "dense/2", "topk/3", "dense/4", "topk/5"}));
}

}  // namespace
}  // namespace accordion
