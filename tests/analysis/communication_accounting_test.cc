#include "analysis/communication_accounting.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace accordion {
namespace {

TEST(CommunicationAccounting, PowerSgdSendsPAndQForAMatrixView) {
  // conv 64x64x3x3 is a 64 x 576 matrix: rank r sends (64 + 576) r floats.
  EXPECT_EQ(FloatsPerStep(Scheme::kPowerSgd, {64, 64, 3, 3}, 1), 640);
  EXPECT_EQ(FloatsPerStep(Scheme::kPowerSgd, {64, 64, 3, 3}, 4), 2560);
  EXPECT_TRUE(PowerSgdCompresses({64, 64, 3, 3}, 4));
}

TEST(CommunicationAccounting, PowerSgdSendsDenseWhenTheFactorsWouldNotHalveIt) {
  // 10 x 512: rank 4 sends 2088 (2 * 2088 < 5120), rank 5 would send 2610.
  EXPECT_EQ(FloatsPerStep(Scheme::kPowerSgd, {10, 512}, 4), 2088);
  EXPECT_FALSE(PowerSgdCompresses({10, 512}, 5));
  EXPECT_EQ(FloatsPerStep(Scheme::kPowerSgd, {10, 512}, 5), 5120);
  // The rule is strict: 4 x 4 at rank 1 breaks even (2 * 8 == 16) and goes dense.
  EXPECT_FALSE(PowerSgdCompresses({4, 4}, 1));
  EXPECT_EQ(FloatsPerStep(Scheme::kPowerSgd, {4, 4}, 1), 16);
  // 1-D tensors (biases, batch norm) are never factorised.
  EXPECT_EQ(FloatsPerStep(Scheme::kPowerSgd, {512}, 1), 512);
  EXPECT_FALSE(IsCompressed(Scheme::kPowerSgd, {512}, 1));
}

TEST(CommunicationAccounting, TopKSendsValuesAndInt32Indices) {
  EXPECT_EQ(TopKCount(1000, 0.1), 100);
  EXPECT_EQ(FloatsPerStep(Scheme::kTopK, {1000}, 0.1), 200);
  EXPECT_EQ(FloatsPerStep(Scheme::kTopK, {1000}, 0.99), 1980);  // more than dense
  EXPECT_FALSE(IsCompressed(Scheme::kTopK, {1000}, 0.99));
  EXPECT_EQ(TopKCount(10, 0.001), 1);  // always at least one entry
  EXPECT_EQ(TopKCount(7, 1.0), 7);
  EXPECT_EQ(TopKCount(100, 0.07), 7);  // not 8 from 7.000000000000001
  EXPECT_EQ(TopKCount(101, 0.07), 8);  // 7.07 rounds up
}

TEST(CommunicationAccounting, TopKDenseVectorsSendBiasesWhole) {
  const CommunicationScheme reference = CommunicationScheme(Scheme::kTopK).topk_dense_vectors(true);
  // A bias: 2k words by default, its numel with dense vectors.
  EXPECT_EQ(FloatsPerStep(Scheme::kTopK, {256}, 0.1), 2 * 26);
  EXPECT_EQ(FloatsPerStep(reference, {256}, 0.1), 256);
  EXPECT_FALSE(IsCompressed(reference, {256}, 0.1));
  EXPECT_FALSE(TopKSparsifies(reference, {256}));
  EXPECT_TRUE(TopKSparsifies(Scheme::kTopK, {256}));
  // Matrices and convolutions are sparsified either way.
  EXPECT_EQ(FloatsPerStep(reference, {256, 784}, 0.1), 2 * 20071);
  EXPECT_TRUE(TopKSparsifies(reference, {64, 3, 3, 3}));
  // Error feedback changes nothing that is sent.
  EXPECT_EQ(FloatsPerStep(CommunicationScheme(Scheme::kTopK).topk_error_feedback(false), {256}, 0.1), 2 * 26);
  // The choice is TopK's: the other schemes ignore it.
  EXPECT_EQ(FloatsPerStep(CommunicationScheme(Scheme::kPowerSgd).topk_dense_vectors(true), {256, 784}, 1), 256 + 784);
  std::vector<LayerInfo> layers(2);
  layers[0].shape = {256, 784};
  layers[0].numel = 256 * 784;
  layers[1].shape = {256};
  layers[1].numel = 256;
  AnnotateLayers(reference, 0.99, 0.1, layers);
  EXPECT_TRUE(layers[0].compressible);
  EXPECT_EQ(layers[1].floats_low, 256);
  EXPECT_EQ(layers[1].floats_high, 256);
  EXPECT_FALSE(layers[1].compressible);
}

TEST(CommunicationAccounting, DenseAndBatchSendEveryEntry) {
  EXPECT_EQ(FloatsPerStep(Scheme::kDense, {64, 3, 3, 3}, 0), 1728);
  EXPECT_EQ(FloatsPerStep(Scheme::kBatch, {64, 3, 3, 3}, 4096), 1728);
}

TEST(CommunicationAccounting, StepsPerEpochFollowTheShardedSampler) {
  // 60000 samples over 4 ranks: 15000 each, 128 per rank per step -> 118 steps.
  EXPECT_EQ(StepsPerEpoch(60000, 512, 4), 118);
  // 8x the batch: 15000 / 1024 -> 15 steps.
  EXPECT_EQ(StepsPerEpoch(60000, 4096, 4), 15);
  // The sampler pads 10 samples to 3 per rank.
  EXPECT_EQ(StepsPerEpoch(10, 4, 4), 3);
  EXPECT_THROW(StepsPerEpoch(0, 4, 4), InputError);
}

TEST(CommunicationAccounting, AnnotateLayersFillsFloatsPerLevel) {
  std::vector<LayerInfo> layers(2);
  layers[0].shape = {256, 784};
  layers[0].numel = 256 * 784;
  layers[1].shape = {256};
  layers[1].numel = 256;
  AnnotateLayers(Scheme::kPowerSgd, 2, 1, layers);
  EXPECT_EQ(layers[0].floats_low, (256 + 784) * 2);
  EXPECT_EQ(layers[0].floats_high, 256 + 784);
  EXPECT_TRUE(layers[0].compressible);
  EXPECT_EQ(layers[1].floats_low, 256);
  EXPECT_FALSE(layers[1].compressible);
}

}  // namespace
}  // namespace accordion
