// GradientExchange across two ranks: two threads of this process, each with
// its own real Gloo process group over loopback (a free port per test).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "tests/trainer/gloo_ranks.h"
#include "trainer/gloo_communicator.h"
#include "trainer/gradient_exchange.h"
#include "trainer/launcher.h"
#include "trainer/powersgd_compressor.h"

namespace accordion {
namespace {

using test_support::OnTwoRanks;

// Four tensors in two buckets: PowerSGD compresses w1 only at rank 1 and w2
// at ranks 1 and 2; biases always travel dense.
std::vector<LayerInfo> Layers() {
  std::vector<LayerInfo> layers;
  const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"w1", {8, 6}}, {"b1", {8}}, {"w2", {20, 10}}, {"b2", {20}}};
  for (const auto& [name, shape] : shapes) {
    LayerInfo l;
    l.layer_id = static_cast<int>(layers.size());
    l.name = name;
    l.shape = shape;
    l.numel = torch::zeros(shape).numel();
    layers.push_back(l);
  }
  return layers;
}
constexpr int64_t kBucketBytes = 4 * (20 * 10 + 20);

// What rank r feeds as layer l's gradient: the same on every call.
torch::Tensor Input(int rank, const LayerInfo& l) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(100 * rank + l.layer_id);
  return torch::randn(l.shape, gen);
}

struct Outcome {
  std::vector<torch::Tensor> grads;
  std::vector<double> norms;
  std::vector<CollectiveRecord> collectives;
};

// `steps` steps (the same inputs each time) of `scheme` at `levels` on this
// rank: the last one's outcome; the raw sums count each `raw_weight` times.
Outcome Step(Communicator& comm, const CommunicationScheme& scheme, const std::vector<double>& levels,
             double raw_weight = 1, int steps = 1) {
  const std::vector<LayerInfo> layers = Layers();
  std::vector<torch::Tensor> params;
  for (const LayerInfo& l : layers) params.push_back(torch::zeros(l.shape).requires_grad_(true));
  GradientExchange exchange(params, layers, comm, ExchangeOptions().scheme(scheme).bucket_bytes(kBucketBytes).seed(17));
  EXPECT_EQ(exchange.buckets().size(), 2u);
  exchange.SetLevels(levels, 0);
  exchange.set_raw_gradient_weight(raw_weight);
  for (int step = 0; step < steps; ++step) {
    exchange.BeginStep();
    torch::Tensor loss = torch::zeros({});
    for (size_t l = 0; l < layers.size(); ++l) loss = loss + (params[l] * Input(comm.rank(), layers[l])).sum();
    exchange.BeginBackward();
    loss.backward();
    exchange.FinishStep();
  }
  Outcome out;
  for (const torch::Tensor& p : params) out.grads.push_back(p.grad().clone());
  out.collectives = exchange.timings().collectives;
  out.norms = exchange.TakeGlobalRawGradientNorms();
  return out;
}

torch::Tensor Mean(const LayerInfo& l) { return (Input(0, l) + Input(1, l)) / 2; }

// TopK's average of one step: each rank's k largest entries of layer l,
// the rest zero, averaged over the two ranks.
torch::Tensor TopKMean(const LayerInfo& l, int64_t k) {
  auto kept = [k](const torch::Tensor& x) {
    const torch::Tensor flat = x.reshape({-1});
    torch::Tensor out = torch::zeros_like(flat);
    const torch::Tensor idx = std::get<1>(flat.abs().topk(k));
    out.index_copy_(0, idx, flat.index_select(0, idx));
    return out.view(x.sizes());
  };
  return (kept(Input(0, l)) + kept(Input(1, l))) / 2;
}

void ExpectPlanFollowed(const Outcome& out, const CommunicationScheme& scheme, const std::vector<double>& levels) {
  const std::vector<LayerInfo> layers = Layers();
  const auto plan = PlanStep(scheme, layers, AssignBuckets(layers, kBucketBytes), levels);
  auto key = [](CollectiveOp op, int bucket, const std::string& tag, int64_t bytes) {
    return std::string(ToString(op)) + "/" + std::to_string(bucket) + "/" + tag + "/" + std::to_string(bytes);
  };
  // The same collectives in the same issue order, and none started before
  // the one whose result it needs had completed.
  std::vector<std::string> want, got;
  for (const PlannedCollective& c : plan) want.push_back(key(c.op, c.bucket, c.tag, c.bytes));
  for (const CollectiveRecord& c : out.collectives) {
    got.push_back(key(c.op, c.bucket, c.tag, c.bytes));
    EXPECT_GE(c.duration_s, 0);
  }
  EXPECT_EQ(got, want);
  if (got != want) return;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].after < 0) continue;
    const CollectiveRecord& needed = out.collectives[static_cast<size_t>(plan[i].after)];
    EXPECT_GE(out.collectives[i].start_s, needed.start_s + needed.duration_s - 1e-6) << want[i];
  }
}

void ExpectRawNorms(const Outcome& out) {
  const std::vector<LayerInfo> layers = Layers();
  for (size_t l = 0; l < layers.size(); ++l) {
    EXPECT_NEAR(out.norms[l], (2 * Mean(layers[l])).norm().item<double>(), 1e-4) << layers[l].name;
  }
}

TEST(GradientExchange, DenseAveragesExactly) {
  const std::vector<double> levels(4, 0.0);
  OnTwoRanks([&](Communicator& comm) {
    const Outcome out = Step(comm, Scheme::kDense, levels);
    const std::vector<LayerInfo> layers = Layers();
    for (size_t l = 0; l < layers.size(); ++l) EXPECT_TRUE(torch::equal(out.grads[l], Mean(layers[l]))) << l;
    ExpectPlanFollowed(out, Scheme::kDense, levels);
    ExpectRawNorms(out);
  });
}

// PyTorch's fp16_compress_hook and bf16_compress_hook: each rank's gradient
// divided by the workers, cast to 16 bits, summed, cast back. The average is
// the float32 one within the format's rounding, and every collective
// carries 2 bytes per entry.
TEST(GradientExchange, SixteenBitCastsAverageWithinTheirRoundingAtHalfTheBytes) {
  const std::vector<double> levels(4, 0.0);
  for (const auto& [scheme, tolerance] : {std::pair{Scheme::kFp16, 2e-3}, std::pair{Scheme::kBf16, 2e-2}}) {
    OnTwoRanks([&, scheme = scheme, tolerance = tolerance](Communicator& comm) {
      const Outcome out = Step(comm, scheme, levels);
      const std::vector<LayerInfo> layers = Layers();
      int64_t entries = 0, bytes = 0;
      for (size_t l = 0; l < layers.size(); ++l) {
        const torch::Tensor want = Mean(layers[l]);
        EXPECT_EQ(out.grads[l].scalar_type(), torch::kFloat32);
        EXPECT_TRUE(torch::allclose(out.grads[l], want, tolerance, tolerance)) << ToString(scheme) << " " << l;
        EXPECT_FALSE(torch::equal(out.grads[l], want)) << "a cast rounds: " << ToString(scheme) << " " << l;
        entries += layers[l].numel;
      }
      for (const CollectiveRecord& c : out.collectives) {
        EXPECT_EQ(c.tag, "cast16");
        bytes += c.bytes;
      }
      EXPECT_EQ(bytes, 2 * entries) << ToString(scheme);
      ExpectPlanFollowed(out, scheme, levels);
      ExpectRawNorms(out);  // the norms Accordion reads are of the float32 gradients
    });
  }
}

TEST(GradientExchange, PowerSgdSumsPAndAveragesQAcrossRanks) {
  const std::vector<double> levels = {2, 2, 1, 1};  // w1 dense at rank 2, w2 compressed
  const std::vector<LayerInfo> layers = Layers();
  ASSERT_FALSE(PowerSgdCompresses(layers[0].shape, 2));
  ASSERT_TRUE(PowerSgdCompresses(layers[2].shape, 1));
  // The expected low-rank w2: P = (M0 + M1) Q0, orthonormalised; G' = P P^T mean(M).
  PowerSgdCompressor reference(PowerSgdOptions().seed(17));
  reference.SetRank(2, 20, 10, 1, 0);
  const torch::Tensor q0 = reference.q(2);
  torch::Tensor p = (2 * Mean(layers[2])).mm(q0);
  GramSchmidt(p, 1e-8);
  const torch::Tensor want_w2 = p.mm(p.t().mm(Mean(layers[2])));

  std::vector<torch::Tensor> w2(2);
  OnTwoRanks([&](Communicator& comm) {
    const Outcome out = Step(comm, Scheme::kPowerSgd, levels);
    for (size_t l : {0, 1, 3}) EXPECT_TRUE(torch::equal(out.grads[l], Mean(layers[l]))) << l;
    EXPECT_TRUE(torch::allclose(out.grads[2], want_w2, 1e-4, 1e-5))
        << (out.grads[2] - want_w2).abs().max().item<float>();
    w2[static_cast<size_t>(comm.rank())] = out.grads[2];
    ExpectPlanFollowed(out, Scheme::kPowerSgd, levels);
    ExpectRawNorms(out);
  });
  EXPECT_TRUE(torch::equal(w2[0], w2[1])) << "ranks must apply the same update";
}

TEST(GradientExchange, TopKGathersAndAveragesEveryRanksLargestEntries) {
  const std::vector<double> levels(4, 0.25);
  const std::vector<LayerInfo> layers = Layers();
  OnTwoRanks([&](Communicator& comm) {
    const Outcome out = Step(comm, Scheme::kTopK, levels);
    for (size_t l = 0; l < layers.size(); ++l) {
      const torch::Tensor want = TopKMean(layers[l], TopKCount(layers[l].numel, 0.25));
      EXPECT_TRUE(torch::allclose(out.grads[l], want, 1e-6, 1e-7)) << layers[l].name;
    }
    ExpectPlanFollowed(out, Scheme::kTopK, levels);
    ExpectRawNorms(out);
  });
}

// The reference code's choices: biases travel dense in their bucket's
// all-reduce (exact means), the matrices as TopK, and without error
// feedback a second step with the same gradients sends the same entries.
TEST(GradientExchange, TopKWithDenseVectorsAndNoErrorFeedback) {
  const std::vector<double> levels(4, 0.25);
  const std::vector<LayerInfo> layers = Layers();
  const CommunicationScheme reference =
      CommunicationScheme(Scheme::kTopK).topk_dense_vectors(true).topk_error_feedback(false);
  OnTwoRanks([&](Communicator& comm) {
    for (int steps : {1, 2}) {
      const Outcome out = Step(comm, reference, levels, 1, steps);
      for (size_t l : {1, 3}) EXPECT_TRUE(torch::equal(out.grads[l], Mean(layers[l]))) << layers[l].name;
      for (size_t l : {0, 2}) {
        const torch::Tensor want = TopKMean(layers[l], TopKCount(layers[l].numel, 0.25));
        EXPECT_TRUE(torch::allclose(out.grads[l], want, 1e-6, 1e-7)) << layers[l].name << " step " << steps;
      }
      ExpectPlanFollowed(out, reference, levels);
      ASSERT_EQ(out.collectives.size(), 4u);
      EXPECT_EQ(out.collectives[0].tag, "dense");
      EXPECT_EQ(out.collectives[0].bytes, 4 * 20);
    }
    // With error feedback the second step sends what the first one owed.
    const Outcome fed = Step(comm, CommunicationScheme(reference).topk_error_feedback(true), levels, 1, 2);
    EXPECT_FALSE(torch::allclose(fed.grads[2], TopKMean(layers[2], TopKCount(layers[2].numel, 0.25)), 1e-6, 1e-7));
  });
}

TEST(GlooCommunicator, GathersBytesOfDifferentLengths) {
  OnTwoRanks([](Communicator& comm) {
    const std::vector<std::string> all =
        AllGatherBytes(comm, std::string(comm.rank() == 0 ? 3 : 7000, 'a' + static_cast<char>(comm.rank())));
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0], std::string(3, 'a'));
    EXPECT_EQ(all[1], std::string(7000, 'b'));
    EXPECT_EQ(AllReduceSumDoubles(comm, {1.5, static_cast<double>(comm.rank())}), (std::vector<double>{3.0, 1.0}));
  });
}

TEST(GlooCommunicator, RendezvousFailsWithinTheTimeoutWhenAPeerNeverComes) {
  const int port = PickFreePort("127.0.0.1");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(ConnectGloo(GlooOptions().rendezvous(
                   RendezvousOptions().rank(0).world_size(2).master_port(port).timeout(std::chrono::seconds(2)))),
               CommunicationError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

// The batch scheme's large batches: gradients of several micro-batches add
// up in the buckets and only the last backward pass communicates, once.
struct AccumulationOutcome {
  std::vector<torch::Tensor> grads;
  std::vector<double> norms;
  size_t collectives = 0;
};

AccumulationOutcome TwoLayerStep(Communicator& comm, const std::vector<int64_t>& micro_sizes) {
  // The same weights on both ranks (a generator of our own: the ranks are
  // threads of one process and share the global one).
  at::Generator weights = at::make_generator<at::CPUGeneratorImpl>(11);
  std::vector<torch::Tensor> params = {torch::randn({4, 6}, weights), torch::randn({4}, weights),
                                       torch::randn({3, 4}, weights), torch::randn({3}, weights)};
  std::vector<LayerInfo> layers;
  for (const torch::Tensor& p : params) {
    LayerInfo l;
    l.layer_id = static_cast<int>(layers.size());
    l.name = "p" + std::to_string(l.layer_id);
    l.shape = p.sizes().vec();
    l.numel = p.numel();
    layers.push_back(l);
    p.requires_grad_(true);
  }
  // This rank's 12 samples.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(50 + comm.rank());
  const torch::Tensor x = torch::randn({12, 6}, gen);
  const torch::Tensor y = torch::randint(0, 3, {12}, gen, torch::kInt64);
  GradientExchange exchange(params, layers, comm, ExchangeOptions().scheme(Scheme::kBatch));
  exchange.SetLevels(std::vector<double>(4, 24), 0);
  exchange.BeginStep();
  int64_t at = 0;
  for (size_t i = 0; i < micro_sizes.size(); ++i) {
    const int64_t n = micro_sizes[i];
    const torch::Tensor h = torch::relu(x.narrow(0, at, n).mm(params[0].t()) + params[1]);
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(h.mm(params[2].t()) + params[3], y.narrow(0, at, n));
    exchange.BeginBackward(/*last_micro_batch=*/i + 1 == micro_sizes.size());
    (loss * (static_cast<double>(n) / 12.0)).backward();
    at += n;
  }
  exchange.FinishStep();
  AccumulationOutcome out;
  for (const torch::Tensor& p : params) out.grads.push_back(p.grad().clone());
  out.collectives = exchange.timings().collectives.size();
  // A backward pass outside a step only accumulates: nothing is sent.
  torch::relu(x.mm(params[0].t()) + params[1]).sum().backward();
  EXPECT_EQ(exchange.timings().collectives.size(), out.collectives);
  out.norms = exchange.TakeGlobalRawGradientNorms();
  return out;
}

TEST(GradientExchange, AccumulatedMicroBatchesEqualOneLargeBatch) {
  OnTwoRanks([](Communicator& comm) {
    const AccumulationOutcome big = TwoLayerStep(comm, {12});
    const AccumulationOutcome accumulated = TwoLayerStep(comm, {5, 5, 2});
    ASSERT_EQ(big.grads.size(), accumulated.grads.size());
    for (size_t l = 0; l < big.grads.size(); ++l) {
      EXPECT_TRUE(torch::allclose(accumulated.grads[l], big.grads[l], 1e-5, 1e-6))
          << "layer " << l << ": " << (accumulated.grads[l] - big.grads[l]).abs().max().item<float>();
      EXPECT_NEAR(accumulated.norms[l], big.norms[l], 1e-5 * std::max(1.0, big.norms[l]));
    }
    // One all-reduce per bucket for the whole step, however many passes.
    EXPECT_EQ(accumulated.collectives, big.collectives);
    EXPECT_EQ(big.collectives, 1u);
  });
}

TEST(GradientExchange, RawGradientWeightScalesTheAccordionSums) {
  OnTwoRanks([](Communicator& comm) {
    const Outcome out = Step(comm, Scheme::kBatch, std::vector<double>(4, 64), /*raw_weight=*/8);
    const std::vector<LayerInfo> layers = Layers();
    for (size_t l = 0; l < layers.size(); ++l) {
      EXPECT_TRUE(torch::equal(out.grads[l], Mean(layers[l]))) << "the weight is Accordion's only";
      EXPECT_NEAR(out.norms[l], 8 * (2 * Mean(layers[l])).norm().item<double>(), 1e-3) << layers[l].name;
    }
  });
}

}  // namespace
}  // namespace accordion

namespace accordion {
namespace {

// Runs steps of `scheme` with step-dependent inputs (input k of rank r is
// Input(r, l) * (k + 1), times `scale`), skipping the inputs listed in
// `skip`; `bad_step`: that step's input of layer `bad_layer` on rank 1 holds
// an Inf. Returns the last step's gradients and the raw norms, and whether
// each step was finite.
struct StepsRun {
  std::vector<torch::Tensor> grads;
  std::vector<double> norms;
  std::vector<bool> finite;
  std::vector<bool> grads_finite;
};
StepsRun Steps(Communicator& comm, const CommunicationScheme& scheme, const std::vector<double>& levels,
               const std::vector<int>& inputs, int bad_step, int bad_layer, double scale = 1) {
  const std::vector<LayerInfo> layers = Layers();
  std::vector<torch::Tensor> params;
  for (const LayerInfo& l : layers) params.push_back(torch::zeros(l.shape).requires_grad_(true));
  GradientExchange exchange(params, layers, comm, ExchangeOptions().scheme(scheme).bucket_bytes(kBucketBytes).seed(17));
  exchange.SetLevels(levels, 0);
  exchange.set_gradient_scale(scale);
  StepsRun run;
  for (int k : inputs) {
    exchange.BeginStep();
    torch::Tensor loss = torch::zeros({});
    for (size_t l = 0; l < layers.size(); ++l) {
      torch::Tensor g = Input(comm.rank(), layers[l]) * (k + 1) * scale;
      if (k == bad_step && comm.rank() == 1 && static_cast<int>(l) == bad_layer) g.view({-1})[3] = INFINITY;
      loss = loss + (params[l] * g).sum();
    }
    exchange.BeginBackward();
    loss.backward();
    exchange.FinishStep();
    run.finite.push_back(exchange.last_step().finite);
    bool all = true;
    for (const torch::Tensor& p : params) all = all && p.grad().isfinite().all().item<bool>();
    run.grads_finite.push_back(all);
  }
  for (const torch::Tensor& p : params) run.grads.push_back(p.grad().clone());
  run.norms = exchange.TakeGlobalRawGradientNorms();
  return run;
}

struct SkipCase {
  Scheme scheme;
  std::vector<double> levels;
  int bad_layer;  // on rank 1 only
};

// GradScaler skips a step whose gradients are not finite on any rank: the
// exchange hands every rank non-finite averages for it (so every scaler
// skips), and the step changes no state - the steps after it are exactly
// those of a run that never saw it (error feedback, warm Q, raw sums).
TEST(GradientExchange, AStepNotFiniteOnOneRankIsNotFiniteOnEveryRankAndChangesNothing) {
  const std::vector<SkipCase> cases = {
      {Scheme::kDense, {0, 0, 0, 0}, 2},
      {Scheme::kPowerSgd, {2, 2, 1, 1}, 2},  // the Inf in a low-rank layer
      {Scheme::kPowerSgd, {2, 2, 1, 1}, 1},  // in a bias, sent dense
      {Scheme::kTopK, {0.25, 0.25, 0.25, 0.25}, 2},
  };
  for (const SkipCase& c : cases) {
    OnTwoRanks([&](Communicator& comm) {
      const StepsRun skipped = Steps(comm, c.scheme, c.levels, {0, 1, 2, 3}, /*bad_step=*/1, c.bad_layer);
      const StepsRun never = Steps(comm, c.scheme, c.levels, {0, 2, 3}, -1, -1);
      EXPECT_EQ(skipped.finite, (std::vector<bool>{true, false, true, true})) << ToString(c.scheme);
      EXPECT_EQ(skipped.grads_finite, (std::vector<bool>{true, false, true, true})) << ToString(c.scheme);
      for (size_t l = 0; l < skipped.grads.size(); ++l) {
        EXPECT_TRUE(torch::equal(skipped.grads[l], never.grads[l])) << ToString(c.scheme) << " layer " << l;
        EXPECT_EQ(skipped.norms[l], never.norms[l]) << ToString(c.scheme) << " layer " << l;
      }
    });
  }
}

// Under a loss scale the raw sums count the unscaled gradient: the norms
// Accordion compares do not move with the scale.
TEST(GradientExchange, RawNormsAreThoseOfTheUnscaledGradients) {
  for (Scheme scheme : {Scheme::kDense, Scheme::kPowerSgd, Scheme::kTopK}) {
    const std::vector<double> levels =
        scheme == Scheme::kTopK ? std::vector<double>(4, 0.25) : std::vector<double>{2, 2, 1, 1};
    OnTwoRanks([&](Communicator& comm) {
      const StepsRun plain = Steps(comm, scheme, levels, {0, 1}, -1, -1);
      const StepsRun scaled = Steps(comm, scheme, levels, {0, 1}, -1, -1, /*scale=*/1024);
      for (size_t l = 0; l < plain.norms.size(); ++l) {
        EXPECT_NEAR(scaled.norms[l], plain.norms[l], 1e-5 * plain.norms[l]) << ToString(scheme) << " " << l;
        EXPECT_TRUE(torch::allclose(scaled.grads[l], plain.grads[l] * 1024, 1e-4, 1e-3))
            << ToString(scheme) << " " << l;
      }
    });
  }
}

}  // namespace
}  // namespace accordion
