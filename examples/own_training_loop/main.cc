// Accordion in your own training loop, through the installed package.
//
// The scenario: a three-layer MLP trains for 12 epochs with PowerSGD; its LR
// drops 10x at epoch 8. Each epoch the loop trains with the ranks the
// AccordionController chose, hands it the layers' accumulated-gradient norms
// and records the epoch with a TraceWriter. Once the run is finished, a
// TraceReader opens the trace and prints what was recorded - the trace that
// accordion-analyze, accordion-sim and accordion-gui read.
//
// What it shows: every layer starts critical (rank 2). The check at epoch 3
// finds fc1's gradient changing by only 40 %, below eta = 0.5, so fc1 drops
// to rank 1 while fc2 and fc3 still change fast; the check at 6 sends them
// down too. The LR decay makes epochs 8-11 critical again, whatever the
// check at 9 would have said.
//
// The loop is plain C++ so that it builds anywhere; the comments say where a
// LibTorch model's gradients would go.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/accordion_controller.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace {

constexpr int kEpochs = 12;
constexpr int kDecayEpoch = 8;
constexpr int kStepsPerEpoch = 10;

double LearningRate(int epoch) { return epoch < kDecayEpoch ? 0.1 : 0.01; }

// Stands in for the norm of one layer's gradient summed over an epoch.
// Deeper layers settle sooner; the LR decay shrinks every gradient.
double AccumulatedGradientNorm(int layer, int epoch) {
  const double norm = 0.25 + std::pow(1.0 + epoch, -(layer + 0.5));
  return epoch >= kDecayEpoch ? 0.4 * norm : norm;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accordion;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];

  // The run as the trace describes it: PowerSGD rank 2 in critical regimes,
  // rank 1 elsewhere, checked every 3 epochs.
  RunInfo run;
  run.model = "mlp-784-256-128-10";
  run.dataset = "toy";
  run.scheme = Scheme::kPowerSgd;
  run.policy = Policy::kAccordion;
  run.level_low = 2;
  run.level_high = 1;
  run.interval = 3;
  run.batch_size = 128;
  run.train_samples = kStepsPerEpoch * run.batch_size;
  run.epochs_planned = kEpochs;
  // Its parameters, in the order backward() produces their gradients.
  const std::vector<LayerInfo> layers = {{0, "fc1.weight", {256, 784}, 256 * 784, true},
                                         {1, "fc2.weight", {128, 256}, 128 * 256, true},
                                         {2, "fc3.weight", {10, 128}, 10 * 128, true}};
  auto writer = TraceWriter::Create(path, run, layers, /*overwrite=*/true);
  AccordionController controller(3, AccordionOptions().eta(run.eta).interval(run.interval).level_low(2).level_high(1));

  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    // 1. Train the epoch, compressing each layer at controller.levels(). With
    //    LibTorch: after each backward(), add every p.grad() (before
    //    compression) to a running sum per parameter.
    EpochData data;
    data.epoch.epoch = epoch;
    data.epoch.lr = LearningRate(epoch);
    data.epoch.batch_size = run.batch_size;
    data.epoch.iterations = kStepsPerEpoch;
    std::vector<double> norms;
    for (int l = 0; l < 3; ++l) {
      norms.push_back(AccumulatedGradientNorm(l, epoch));  // LibTorch: sum.norm().item<double>()
      EpochLayerRecord row;
      row.epoch = epoch;
      row.layer_id = l;
      row.grad_norm = norms.back();
      row.critical = controller.critical()[l];
      row.level = controller.levels()[l];
      data.layers.push_back(row);
      data.epoch.critical = data.epoch.critical || row.critical;
    }
    data.epoch.model_grad_norm = WholeModelNorm(norms);

    // 2. At the end of the epoch the controller sees the norms (all-reduced
    //    first when several workers train) and the LR of the next epoch.
    const AccordionDecision d = controller.EndEpoch(norms, LearningRate(epoch), LearningRate(epoch + 1));
    for (int l = 0; l < 3; ++l) data.layers[l].ratio = d.ratios[l];  // set where a check ran

    // 3. One transaction per epoch: a crash loses this epoch at most.
    writer->WriteEpoch(data);
  }
  writer->Finish(RunStatus::kComplete);
  writer.reset();  // releases the file's lock

  // Later, anyone can read the run back: each epoch's LR, the rank every
  // layer used and, at checks, how much its gradient norm had changed.
  auto reader = TraceReader::Open(path);
  std::printf("%s: %s, %s, %d layers\n", reader->run().model.c_str(), ToString(reader->run().status),
              ToString(reader->run().scheme), reader->num_layers());
  const std::vector<EpochLayerRecord> rows = reader->EpochLayers();
  for (const EpochRecord& e : reader->Epochs()) {
    std::printf("epoch %2d  lr %.2f  ranks", e.epoch, e.lr);
    for (const EpochLayerRecord& r : rows) {
      if (r.epoch == e.epoch) std::printf(" %g", r.level);
    }
    for (const EpochLayerRecord& r : rows) {
      if (r.epoch == e.epoch && r.ratio) std::printf("%s %.2f", r.layer_id == 0 ? "  | change" : "", *r.ratio);
    }
    std::printf("\n");
  }
  return 0;
}
