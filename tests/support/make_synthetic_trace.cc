// accordion-make-synthetic-trace: writes a SYNTHETIC trace (no training
// behind it) for tests, examples and benchmarks.
#include <iostream>

#include "common/cli.h"
#include "common/errors.h"
#include "tests/support/synthetic_trace.h"

int main(int argc, char** argv) {
  using namespace accordion;
  synthetic::SyntheticTraceOptions o;
  std::string out, scheme = "powersgd", policy = "accordion";
  std::optional<double> low, high;
  CLI::App app{"Write a SYNTHETIC Accordion trace shaped like a real model"};
  app.add_option("out", out, "Trace file to write")->required();
  app.add_option("--model", o.model, "resnet18 or mlp")->check(CLI::IsMember({"resnet18", "mlp"}));
  app.add_option("--epochs", o.epochs)->check(CLI::Range(1, 100000));
  app.add_option("--workers", o.world_size)->check(CLI::Range(1, 1 << 20));
  app.add_option("--scheme", scheme)->check(CLI::IsMember({"dense", "powersgd", "topk", "batch"}));
  app.add_option("--policy", policy)->check(CLI::IsMember({"static", "accordion"}));
  app.add_option("--low", low);
  app.add_option("--high", high);
  app.add_option("--interval", o.interval)->check(CLI::Range(1, 100000));
  app.add_option("--decay", o.decay_epochs, "Epochs at which the LR drops 10x");
  app.add_option("--seed", o.seed);
  app.add_option("--samples", o.sampled_iterations, "Iterations sampled per epoch")
      ->check(CLI::Range(0, 100000));
  AddVersionFlags(app, "accordion-make-synthetic-trace");
  return RunCli(app, "accordion-make-synthetic-trace", argc, argv, [&] {
    o.scheme = *ParseScheme(scheme);
    o.policy = *ParsePolicy(policy);
    if (o.scheme == Scheme::kDense) {
      o.level_low = o.level_high = 0;
      o.policy = Policy::kStatic;
    } else if (o.scheme == Scheme::kTopK) {
      o.level_low = 0.99;
      o.level_high = 0.1;
    } else if (o.scheme == Scheme::kBatch) {
      o.level_low = static_cast<double>(o.batch_size);
      o.level_high = 8.0 * static_cast<double>(o.batch_size);
    }
    if (low) o.level_low = *low;
    if (high) o.level_high = *high;
    if (o.policy == Policy::kStatic) o.level_high = o.level_low;
    synthetic::WriteSyntheticTrace(out, o);
    std::cout << out << '\n';
    return kExitOk;
  });
}
