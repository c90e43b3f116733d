// What the per-layer error profile costs on ResNet-18 (CIFAR-10 shapes),
// side by side with the training it rides on, in one process:
//
//   step:    one forward + backward of ResNet-18 on a per-worker batch
//            (default 128, the paper's 4 workers x 128), timed over a few steps;
//   profile: ProfileErrors on those steps' accumulated gradient, for
//            PowerSGD (ranks 1, 2, 4, 8: singular values of every matrix)
//            and TopK (1 .. 99 %: one sort per layer).
//
// The profile runs once per regime check, every `interval` epochs, so its
// share of training time is profile / (interval x steps per epoch x step).
// Prints figures and ratios; asserts nothing (docs/policies.md has the
// numbers and how to reproduce them).
//
//   accordion-error-profile-bench [--steps N] [--batch B] [--interval I] [--workers W]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "analysis/communication_accounting.h"
#include "trainer/error_profile.h"
#include "trainer/models.h"

namespace {

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

int Arg(int argc, char** argv, const std::string& flag, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == flag) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accordion;
  const int steps = Arg(argc, argv, "--steps", 3);
  const int batch = Arg(argc, argv, "--batch", 128);
  const int interval = Arg(argc, argv, "--interval", 10);
  const int workers = Arg(argc, argv, "--workers", 4);
  if (steps < 1 || batch < 1 || interval < 1 || workers < 1) {
    std::fprintf(stderr, "accordion-error-profile-bench: --steps, --batch, --interval and --workers must be >= 1\n");
    return 2;
  }
  torch::manual_seed(1);
  const InputShape shape{3, 32, 32, 10};
  std::shared_ptr<Model> model = MakeModel("resnet18", shape);
  model->train();
  const std::vector<LayerInfo> layers = DescribeLayers(*model);
  const torch::Tensor inputs = torch::randn({batch, 3, 32, 32});
  const torch::Tensor targets = torch::randint(0, 10, {batch});

  // Warm-up step, then the timed ones; gradients accumulate as the
  // exchange's raw sums do over an epoch.
  torch::nn::functional::cross_entropy(model->forward(inputs), targets).backward();
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) torch::nn::functional::cross_entropy(model->forward(inputs), targets).backward();
  const double step_s = Seconds(std::chrono::steady_clock::now() - t0) / steps;

  std::vector<torch::Tensor> sums;
  for (const torch::Tensor& p : model->parameters()) sums.push_back(p.grad().detach().clone());
  // CIFAR-10: 50,000 samples over `workers` ranks of `batch` each.
  const double steps_per_epoch = std::ceil(50000.0 / (static_cast<double>(batch) * workers));
  const double between_checks_s = interval * steps_per_epoch * step_s;
  std::printf("ResNet-18 (%zu tensors), per-worker batch %d, %d threads: %.3f s per forward+backward step\n",
              layers.size(), batch, torch::get_num_threads(), step_s);
  std::printf("training between two checks (%d epochs x %.0f steps): %.1f s\n", interval, steps_per_epoch,
              between_checks_s);
  for (Scheme scheme : {Scheme::kPowerSgd, Scheme::kTopK}) {
    const std::vector<double> levels = ErrorProfileLevels(
        scheme, scheme == Scheme::kPowerSgd ? std::vector<double>{2, 1} : std::vector<double>{0.99, 0.1});
    ProfileErrors(sums, layers, CommunicationScheme(scheme), levels, 0);  // warm-up
    const auto t1 = std::chrono::steady_clock::now();
    const std::vector<ErrorProfileRecord> rows = ProfileErrors(sums, layers, CommunicationScheme(scheme), levels, 0);
    const double profile_s = Seconds(std::chrono::steady_clock::now() - t1);
    std::printf("%-8s profile: %zu rows in %.3f s = %.2f steps; %.3f %% of the training between checks\n",
                ToString(scheme), rows.size(), profile_s, profile_s / step_s, 100 * profile_s / between_checks_s);
  }
  return 0;
}
