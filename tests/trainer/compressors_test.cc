// PowerSGD and TopK compression, one rank at a time (the sums over ranks
// are the identity for one rank; exchange_test.cc covers two).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "trainer/powersgd_compressor.h"
#include "trainer/topk_compressor.h"

namespace accordion {
namespace {

// One full PowerSGD round for a single rank: returns the decompressed G'.
torch::Tensor PowerSgdRound(PowerSgdCompressor& c, int layer, const torch::Tensor& grad) {
  const int64_t n = grad.size(0), m = grad.numel() / n, r = c.rank_of(layer);
  torch::Tensor p = torch::empty({n, r}), q = torch::empty({m, r});
  torch::Tensor out = torch::empty_like(grad);
  c.ComputeP(layer, grad, p);
  c.ComputeQ(layer, p, q);
  c.Decompress(layer, p, q, /*world_size=*/1, out);
  c.Commit(layer, q);
  return out;
}

torch::Tensor MemoryOf(PowerSgdCompressor& c, int layer) { return c.TakeMemory(layer); }

TEST(PowerSgd, ExactWhenRankReachesTheSmallerSide) {
  torch::manual_seed(3);
  // n < m, n > m, a 4-D convolution kernel, and a rank above min(n, m).
  const std::vector<std::pair<std::vector<int64_t>, int>> cases = {
      {{6, 9}, 6}, {{12, 5}, 5}, {{8, 3, 2, 2}, 8}, {{7, 4}, 6}};
  int layer = 0;
  for (const auto& [shape, rank] : cases) {
    PowerSgdCompressor c(PowerSgdOptions().seed(11));
    const torch::Tensor g = torch::randn(shape);
    const int64_t n = shape[0], m = g.numel() / n;
    c.SetRank(layer, n, m, rank, /*epoch=*/0);
    EXPECT_EQ(c.rank_of(layer), std::min<int64_t>({rank, n, m}));
    const torch::Tensor out = PowerSgdRound(c, layer, g);
    // Float32 Gram-Schmidt over up to 8 columns: exact to ~1e-5 of the
    // gradient's size (a rank-deficient approximation misses by ~0.1-1).
    const double relative = (out - g).norm().item<double>() / g.norm().item<double>();
    EXPECT_LT(relative, 5e-5) << "shape " << g.sizes() << " rank " << rank;
    EXPECT_LT((out - g).abs().max().item<float>(), 2e-4) << "shape " << g.sizes() << " rank " << rank;
    EXPECT_LT(MemoryOf(c, layer).abs().max().item<float>(), 1e-4);
    ++layer;
  }
}

TEST(PowerSgd, LowRankIsNotExactButErrorFeedbackLosesNothing) {
  torch::manual_seed(4);
  PowerSgdCompressor c(PowerSgdOptions().seed(5));
  c.SetRank(0, 20, 30, 1, 0);
  torch::Tensor sent_total = torch::zeros({20, 30}), input_total = torch::zeros({20, 30});
  for (int step = 0; step < 5; ++step) {
    const torch::Tensor g = torch::randn({20, 30});
    const torch::Tensor out = PowerSgdRound(c, 0, g);
    if (step == 0) {
      EXPECT_GT((out - g).abs().max().item<float>(), 0.1) << "rank 1 cannot be exact here";
    }
    sent_total += out;
    input_total += g;
  }
  // Everything that went in either went out or is still owed.
  const torch::Tensor owed = MemoryOf(c, 0);
  EXPECT_TRUE(torch::allclose(sent_total + owed, input_total, 1e-4, 1e-4));
}

// A round that is not committed - its gradient was not finite, so GradScaler
// skips the step - leaves the memory and the warm Q as they were, and the
// next round is the one an uninterrupted run would have made.
TEST(PowerSgd, ARoundNotCommittedLeavesMemoryAndQAsTheyWere) {
  torch::manual_seed(7);
  PowerSgdCompressor a(PowerSgdOptions().seed(3)), b(PowerSgdOptions().seed(3));
  for (auto* c : {&a, &b}) c->SetRank(0, 12, 16, 2, 0);
  const torch::Tensor g1 = torch::randn({12, 16}), g2 = torch::randn({12, 16});
  PowerSgdRound(a, 0, g1);
  PowerSgdRound(b, 0, g1);
  torch::Tensor bad = torch::randn({12, 16});
  bad[3][5] = INFINITY;
  torch::Tensor p = torch::empty({12, 2}), q = torch::empty({16, 2}), out = torch::empty({12, 16});
  b.ComputeP(0, bad, p);
  b.ComputeQ(0, p, q);
  b.Decompress(0, p, q, 1, out);
  EXPECT_FALSE(out.isfinite().all().item<bool>());
  EXPECT_TRUE(torch::equal(a.q(0), b.q(0)));
  EXPECT_TRUE(torch::equal(PowerSgdRound(a, 0, g2), PowerSgdRound(b, 0, g2)));
  EXPECT_TRUE(torch::equal(MemoryOf(a, 0), MemoryOf(b, 0)));
}

TEST(PowerSgd, GramSchmidtMakesOrthonormalColumns) {
  torch::manual_seed(5);
  torch::Tensor m = torch::randn({50, 4});
  GramSchmidt(m, 1e-8);
  EXPECT_TRUE(torch::allclose(m.t().mm(m), torch::eye(4), 1e-5, 1e-5));
}

TEST(PowerSgd, WarmQKeepsItsColumnsAcrossARankSwitch) {
  torch::manual_seed(6);
  PowerSgdCompressor c(PowerSgdOptions().seed(9));
  c.SetRank(0, 16, 24, 2, 0);
  // Train Q a little so it is no longer the fresh random draw.
  PowerSgdRound(c, 0, torch::randn({16, 24}));
  auto q_of = [&c]() { return c.q(0).clone(); };
  const torch::Tensor q2 = q_of();
  c.SetRank(0, 16, 24, 4, 1);
  const torch::Tensor q4 = q_of();
  ASSERT_EQ(q4.size(1), 4);
  EXPECT_TRUE(torch::equal(q4.narrow(1, 0, 2), q2));
  c.SetRank(0, 16, 24, 1, 2);
  EXPECT_TRUE(torch::equal(q_of(), q2.narrow(1, 0, 1)));
}

TEST(PowerSgd, SameSeedSameFreshQOnEveryRank) {
  PowerSgdCompressor a(PowerSgdOptions().seed(42)), b(PowerSgdOptions().seed(42));
  a.SetRank(3, 10, 12, 2, 7);
  b.SetRank(3, 10, 12, 2, 7);
  const torch::Tensor g = torch::randn({10, 12});
  EXPECT_TRUE(torch::equal(PowerSgdRound(a, 3, g), PowerSgdRound(b, 3, g)));
}

// Saves `from` and loads it into `to` through bytes, as a checkpoint does.
template <typename Compressor>
void CopyState(const Compressor& from, Compressor& to) {
  torch::serialize::OutputArchive out;
  from.Save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  std::istringstream is(bytes.str());
  torch::serialize::InputArchive in;
  in.load_from(is);
  to.Load(in);
}

TEST(Checkpoint, PowerSgdContinuesExactlyFromSavedMemoryAndQ) {
  torch::manual_seed(8);
  PowerSgdCompressor a(PowerSgdOptions().seed(2)), b(PowerSgdOptions().seed(99));
  a.SetRank(4, 12, 20, 2, 0);
  PowerSgdRound(a, 4, torch::randn({12, 20}));
  CopyState(a, b);
  b.SetRank(4, 12, 20, 2, 1);  // what a resumed run does: a no-op for a warm layer
  const torch::Tensor g = torch::randn({12, 20});
  EXPECT_TRUE(torch::equal(PowerSgdRound(a, 4, g), PowerSgdRound(b, 4, g)));
}

TEST(Checkpoint, TopKContinuesExactlyFromSavedResiduals) {
  torch::manual_seed(9);
  TopKCompressor a, b;
  torch::Tensor pa = torch::empty({20}), pb = torch::empty({20});
  a.Compress(1, torch::randn({50}), 10, pa);
  a.Commit(1);
  CopyState(a, b);
  const torch::Tensor g = torch::randn({50});
  a.Compress(1, g, 10, pa);
  a.Commit(1);
  b.Compress(1, g, 10, pb);
  b.Commit(1);
  EXPECT_TRUE(torch::equal(pa, pb));
  EXPECT_TRUE(torch::equal(a.residual(1), b.residual(1)));
}

TEST(TopK, KeepsTheKLargestMagnitudesAndOwesTheRest) {
  const torch::Tensor g = torch::tensor({0.5f, -3.0f, 0.1f, 2.0f, -0.2f, 4.0f, 0.0f, -1.0f}).view({2, 4});
  TopKCompressor c;
  torch::Tensor packed = torch::empty({6});
  c.Compress(0, g, 3, packed);
  c.Commit(0);
  std::vector<std::pair<int, float>> kept;
  const torch::Tensor idx = packed.narrow(0, 3, 3).view(torch::kInt32);
  for (int i = 0; i < 3; ++i) kept.emplace_back(idx[i].item<int>(), packed[i].item<float>());
  std::sort(kept.begin(), kept.end());
  const std::vector<std::pair<int, float>> want = {{1, -3.0f}, {3, 2.0f}, {5, 4.0f}};
  EXPECT_EQ(kept, want);
  // sent + residual == input, exactly.
  torch::Tensor sent = torch::zeros({8});
  for (const auto& [i, v] : kept) sent[i] = v;
  EXPECT_TRUE(torch::equal(sent + c.residual(0), g.reshape({-1})));
}

TEST(TopK, ResidualJoinsTheNextStep) {
  TopKCompressor c;
  torch::Tensor packed = torch::empty({2});
  c.Compress(0, torch::tensor({1.0f, 0.9f}), 1, packed);
  c.Commit(0);  // sends 1.0, owes 0.9
  c.Compress(0, torch::tensor({0.0f, 0.2f}), 1, packed);
  c.Commit(0);  // 0.9 + 0.2 now leads
  EXPECT_EQ(packed.narrow(0, 1, 1).view(torch::kInt32).item<int>(), 1);
  EXPECT_FLOAT_EQ(packed[0].item<float>(), 1.1f);
  EXPECT_TRUE(torch::equal(c.residual(0), torch::zeros({2})));
}

// The reference code's effective behaviour: what a step does not send is
// gone; the next step picks from its own gradient alone.
TEST(TopK, WithoutErrorFeedbackKeepsNoResidualAndDropsTheRest) {
  TopKCompressor c(/*error_feedback=*/false);
  torch::Tensor packed = torch::empty({2});
  c.Compress(0, torch::tensor({1.0f, 0.9f}), 1, packed);
  c.Commit(0);  // sends 1.0, drops 0.9
  EXPECT_FALSE(c.residual(0).defined());
  EXPECT_EQ(packed.narrow(0, 1, 1).view(torch::kInt32).item<int>(), 0);
  EXPECT_FLOAT_EQ(packed[0].item<float>(), 1.0f);
  c.Compress(0, torch::tensor({0.3f, 0.2f}), 1, packed);
  c.Commit(0);  // with feedback 0.9 + 0.2 would lead
  EXPECT_EQ(packed.narrow(0, 1, 1).view(torch::kInt32).item<int>(), 0);
  EXPECT_FLOAT_EQ(packed[0].item<float>(), 0.3f);
  EXPECT_FALSE(c.residual(0).defined());
  // The gradient itself is left as it was, and a checkpoint holds nothing.
  const torch::Tensor g = torch::tensor({-2.0f, 0.5f, 3.0f});
  torch::Tensor two = torch::empty({4});
  c.Compress(1, g, 2, two);
  EXPECT_TRUE(torch::equal(g, torch::tensor({-2.0f, 0.5f, 3.0f})));
  TopKCompressor restored(false);
  CopyState(c, restored);
  EXPECT_FALSE(restored.residual(1).defined());
}

// A step that is not committed (GradScaler skips it: its gradients were not
// finite) leaves the residual as it was; the next step starts from it.
TEST(TopK, AStepNotCommittedLeavesTheResidualAsItWas) {
  TopKCompressor c;
  torch::Tensor packed = torch::empty({2});
  c.Compress(0, torch::tensor({1.0f, 0.9f}), 1, packed);
  c.Commit(0);  // owes 0.9
  c.Compress(0, torch::tensor({INFINITY, 0.2f}), 1, packed);
  EXPECT_TRUE(torch::equal(c.residual(0), torch::tensor({0.0f, 0.9f})));
  c.Compress(0, torch::tensor({0.0f, 0.2f}), 1, packed);
  c.Commit(0);
  EXPECT_FLOAT_EQ(packed[0].item<float>(), 1.1f);
  c.ScaleResiduals(0.5);  // the loss scale halved
  EXPECT_TRUE(torch::equal(c.residual(0), torch::zeros({2})));
}

TEST(TopK, DecompressAveragesEveryRanksEntries) {
  // Two ranks, k = 2 each: rank 0 sends {0: 2, 2: 4}, rank 1 {2: 6, 3: -2}.
  torch::Tensor gathered = torch::empty({2, 4});
  gathered[0].narrow(0, 0, 2).copy_(torch::tensor({2.0f, 4.0f}));
  gathered[0].narrow(0, 2, 2).view(torch::kInt32).copy_(torch::tensor({0, 2}, torch::kInt32));
  gathered[1].narrow(0, 0, 2).copy_(torch::tensor({6.0f, -2.0f}));
  gathered[1].narrow(0, 2, 2).view(torch::kInt32).copy_(torch::tensor({2, 3}, torch::kInt32));
  torch::Tensor grad = torch::full({5}, 9.0f);
  TopKCompressor::Decompress(gathered, grad);
  EXPECT_TRUE(torch::equal(grad, torch::tensor({1.0f, 0.0f, 5.0f, -1.0f, 0.0f})));
}

}  // namespace
}  // namespace accordion
