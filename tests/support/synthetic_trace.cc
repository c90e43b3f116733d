#include "tests/support/synthetic_trace.h"

#include <cmath>
#include <numeric>
#include <random>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "traces/trace_writer.h"

namespace accordion::synthetic {

namespace {

LayerInfo Layer(int id, std::string name, std::vector<int64_t> shape) {
  LayerInfo l;
  l.layer_id = id;
  l.name = std::move(name);
  l.numel = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
  l.shape = std::move(shape);
  return l;
}

}  // namespace

std::vector<LayerInfo> ResNet18Layers(int num_classes) {
  std::vector<LayerInfo> layers;
  auto add = [&layers](const std::string& name, std::vector<int64_t> shape) {
    layers.push_back(Layer(static_cast<int>(layers.size()), name, std::move(shape)));
  };
  auto bn = [&add](const std::string& prefix, int64_t c) {
    add(prefix + ".weight", {c});
    add(prefix + ".bias", {c});
  };
  add("conv1.weight", {64, 3, 3, 3});
  bn("bn1", 64);
  int64_t in = 64;
  const int64_t widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t out = widths[stage];
    for (int block = 0; block < 2; ++block) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      const int64_t block_in = block == 0 ? in : out;
      add(p + ".conv1.weight", {out, block_in, 3, 3});
      bn(p + ".bn1", out);
      add(p + ".conv2.weight", {out, out, 3, 3});
      bn(p + ".bn2", out);
      if (block == 0 && block_in != out) {
        add(p + ".shortcut.0.weight", {out, block_in, 1, 1});
        bn(p + ".shortcut.1", out);
      }
    }
    in = out;
  }
  add("linear.weight", {num_classes, 512});
  add("linear.bias", {num_classes});
  return layers;
}

std::vector<LayerInfo> MlpLayers() {
  return {Layer(0, "fc1.weight", {256, 784}), Layer(1, "fc1.bias", {256}),       Layer(2, "fc2.weight", {128, 256}),
          Layer(3, "fc2.bias", {128}),        Layer(4, "fc3.weight", {10, 128}), Layer(5, "fc3.bias", {10})};
}

RunInfo MlpRun(const std::string& dataset, int64_t train_samples, int64_t batch_size, int epochs_planned) {
  RunInfo run;
  run.model = "mlp";
  run.dataset = dataset;
  run.train_samples = train_samples;
  run.batch_size = batch_size;
  run.epochs_planned = epochs_planned;
  return run;
}

double SyntheticLr(const SyntheticTraceOptions& o, int epoch) {
  double lr = o.base_lr;
  if (epoch < o.warmup_epochs) lr = o.base_lr * (epoch + 1) / o.warmup_epochs;
  for (int d : o.decay_epochs) {
    if (epoch >= d) lr /= 10.0;
  }
  return lr;
}

void WriteSyntheticTrace(const std::string& path, const SyntheticTraceOptions& o) {
  std::vector<LayerInfo> layers;
  if (o.model == "resnet18") {
    layers = ResNet18Layers();
  } else if (o.model == "mlp") {
    layers = MlpLayers();
  } else {
    throw InputError("synthetic traces know resnet18 and mlp, not '" + o.model + "'");
  }
  AnnotateLayers(o.scheme, o.level_low, o.level_high, layers);
  const int L = static_cast<int>(layers.size());

  RunInfo run;
  run.synthetic = true;
  run.writer = o.writer;
  run.model = o.model;
  run.dataset = "synthetic";
  run.train_samples = o.train_samples;
  run.scheme = o.scheme;
  run.policy = o.policy;
  run.level_low = o.level_low;
  run.level_high = o.level_high;
  run.eta = o.eta;
  run.interval = o.interval;
  run.world_size = o.world_size;
  run.backend = "synthetic";
  run.device = "none";
  run.batch_size = o.batch_size;
  run.epochs_planned = o.epochs;
  run.seed = static_cast<int64_t>(o.seed);
  run.config_json = R"({"generator": "tests/support/synthetic_trace"})";
  auto writer = TraceWriter::Create(path, run, layers, /*overwrite=*/true);

  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> noise(0.0, 0.03);
  std::vector<double> base(L);
  for (int l = 0; l < L; ++l) base[l] = std::sqrt(static_cast<double>(layers[l].numel)) * 0.05;

  const bool whole_model = o.scheme == Scheme::kBatch;
  AccordionController controller(whole_model ? 1 : L,
                                 AccordionOptions()
                                     .eta(o.eta)
                                     .interval(o.interval)
                                     .level_low(o.level_low)
                                     .level_high(o.level_high)
                                     .mode(whole_model ? ControllerMode::kWholeModel : ControllerMode::kPerLayer));
  for (int e = 0; e < o.epochs; ++e) {
    // Norms fall fast early on and after every decay, then flatten.
    double shape = 0.25 + 0.75 * std::exp(-e / 4.0);
    for (int d : o.decay_epochs) {
      if (e >= d) shape *= 0.35 + 0.65 * std::exp(-(e - d) / 3.0);
    }
    EpochData data;
    EpochRecord& rec = data.epoch;
    rec.epoch = e;
    rec.lr = SyntheticLr(o, e);
    // Levels and regimes in force during this epoch, before its end decides the next.
    const std::vector<double> levels = controller.levels();
    const std::vector<bool> critical = controller.critical();
    const bool static_policy = o.policy == Policy::kStatic;
    auto level_of = [&](int l) { return static_policy ? o.level_low : levels[whole_model ? 0 : l]; };
    rec.batch_size = whole_model ? static_cast<int64_t>(level_of(0)) : o.batch_size;
    rec.iterations = StepsPerEpoch(o.train_samples, rec.batch_size, o.world_size);
    std::vector<double> norms(L);
    double per_step_floats = 0;
    for (int l = 0; l < L; ++l) {
      norms[l] = std::max(0.0, base[l] * shape * (1.0 + noise(rng)));
      EpochLayerRecord r;
      r.epoch = e;
      r.layer_id = l;
      r.grad_norm = norms[l];
      r.level = level_of(l);
      r.critical = critical[whole_model ? 0 : l];
      const double floats = FloatsPerStep(o.scheme, layers[l].shape, r.level);
      r.floats_sent = floats * static_cast<double>(rec.iterations);
      per_step_floats += floats;
      data.layers.push_back(r);
    }
    rec.floats_sent = per_step_floats * static_cast<double>(rec.iterations);
    rec.model_grad_norm = WholeModelNorm(norms);
    rec.critical = critical[0];
    rec.train_loss = 2.3 * shape;
    rec.test_loss = 2.3 * shape * 1.1;
    rec.train_acc = std::min(1.0, 0.1 + 0.85 * (1.0 - shape));
    rec.test_acc = std::min(1.0, 0.1 + 0.8 * (1.0 - shape));
    if (!o.record_test_metrics) rec.test_loss = rec.test_acc = kNotRecorded;

    // Timings: compute scales with the model, communication with the floats.
    const double forward = 0.002 * L, backward = 2 * forward;
    const double comm = per_step_floats * 4.0 / 1.25e9;  // 10 Gb/s
    rec.compute_s = (forward + backward) * static_cast<double>(rec.iterations);
    rec.compress_s = o.scheme == Scheme::kDense ? 0 : 0.05 * rec.compute_s;
    rec.comm_s = comm * static_cast<double>(rec.iterations) * 0.5;
    rec.total_s = rec.compute_s + rec.compress_s + rec.comm_s + 0.5;
    const int samples = static_cast<int>(std::min<int64_t>(o.sampled_iterations, rec.iterations));
    for (int it = 0; it < samples; ++it) {
      for (int rank = 0; rank < o.world_size; ++rank) {
        IterationRecord ir;
        ir.epoch = e;
        ir.iteration = it;
        ir.rank = rank;
        ir.forward_s = forward;
        ir.backward_s = backward;
        ir.compress_s = rec.compress_s / static_cast<double>(rec.iterations);
        ir.comm_s = comm * 0.5;
        ir.total_s = forward + backward + ir.compress_s + ir.comm_s;
        data.iterations.push_back(ir);
        // Backward visits layers in reverse; each is ready after its share.
        double t = 0;
        for (int l = L - 1; l >= 0; --l) {
          t += backward / L;
          data.grad_ready.push_back({e, it, rank, l, t});
        }
        CollectiveRecord c;
        c.epoch = e;
        c.iteration = it;
        c.rank = rank;
        c.seq = 0;
        c.op = o.scheme == Scheme::kTopK ? CollectiveOp::kAllGather : CollectiveOp::kAllReduce;
        c.tag = ToString(o.scheme);
        c.bytes = static_cast<int64_t>(per_step_floats * 4);
        c.start_s = forward + backward * 0.5;
        c.duration_s = comm;
        data.collectives.push_back(c);
      }
    }
    if (e % 5 == 0) data.hessian.push_back({e, "", 50.0 * shape, 20, 1.5});
    const AccordionDecision d = controller.EndEpoch(whole_model ? std::vector<double>{rec.model_grad_norm} : norms,
                                                    rec.lr, SyntheticLr(o, e + 1));
    for (int l = 0; l < L; ++l) data.layers[l].ratio = d.ratios[whole_model ? 0 : l];
    writer->WriteEpoch(data);
  }
  writer->Finish(o.final_status);
}

}  // namespace accordion::synthetic
