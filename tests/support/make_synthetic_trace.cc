// accordion-make-synthetic-trace: writes a SYNTHETIC trace (no training
// behind it) for tests, examples and benchmarks.
#include <cstdio>
#include <iostream>
#include <tuple>

#include "analysis/schedule.h"
#include "common/cli.h"
#include "common/errors.h"
#include "common/output_file.h"
#include "tests/support/synthetic_trace.h"
#include "traces/scheme_description.h"

namespace {

// Rows a synthetic trace may hold: a few million is tens of MB, plenty for
// any test or benchmark, and absurd sizes are refused before anything is
// written rather than filling the disk.
constexpr double kMaxRows = 4e6;

// Rows the trace would hold: per sampled iteration and rank an iteration
// row, a grad-ready row per layer and a few collectives; per epoch a row
// per layer.
double EstimatedRows(const accordion::synthetic::SyntheticTraceOptions& o) {
  const double layers = o.model == "mlp" ? 6 : 62;
  return static_cast<double>(o.epochs) *
         (layers + static_cast<double>(o.world_size) * o.sampled_iterations * (1 + 2 * layers));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace accordion;
  synthetic::SyntheticTraceOptions o;
  std::string out, scheme = "powersgd", policy = "accordion";
  std::optional<double> low, high;
  bool overwrite = false;
  CLI::App app{"Write a SYNTHETIC Accordion trace shaped like a real model"};
  app.add_option("out", out,
                 "Trace file to write: a new file, or with --overwrite an existing regular file (never a "
                 "directory, FIFO or device)")
      ->required();
  app.add_flag("--overwrite", overwrite,
               "Replace an existing trace file at OUT (never a trace a running accordion-train is writing)");
  app.add_option("--model", o.model, "resnet18 or mlp")->check(CLI::IsMember({"resnet18", "mlp"}));
  app.add_option("--epochs", o.epochs)->check(CLI::Range(1, 100000));
  app.add_option("--workers", o.world_size)->check(CLI::Range(1, 1 << 20));
  app.add_option("--scheme", scheme)->check(CLI::IsMember(SchemeNames()));
  app.add_option("--policy", policy)->check(CLI::IsMember({"static", "accordion"}));
  app.add_option("--low", low);
  app.add_option("--high", high);
  app.add_option("--eta", o.eta, "Accordion threshold the run records (run.eta) and its levels follow")
      ->check(AboveZero());
  app.add_option("--interval", o.interval)->check(CLI::Range(1, 100000));
  app.add_option("--decay", o.decay_epochs, "Epochs at which the LR drops 10x");
  app.add_option("--seed", o.seed);
  app.add_option("--samples", o.sampled_iterations, "Iterations sampled per epoch")->check(CLI::Range(0, 100000));
  app.footer(
      "At most 4 million rows (epochs x (layers + workers x samples x (1 + 2 x layers))), about "
      "a few hundred MB.");
  AddVersionFlags(app, "accordion-make-synthetic-trace");
  return RunCli(app, "accordion-make-synthetic-trace", argc, argv, [&] {
    // A database needs a regular file: never a FIFO or a device.
    // Not claimed: the partial is the trace itself, whose TraceWriter's own
    // lock is the claim (a second writer is refused by it).
    CheckOutput(out, OutputOptions().flag("OUT").overwrite(overwrite).streams(false).claim(false));
    if (out == "-") throw InputError("OUT must be a file: a trace cannot go to stdout");
    if (EstimatedRows(o) > kMaxRows) {
      throw InputError("--epochs x --workers x --samples make about " +
                       std::to_string(static_cast<int64_t>(EstimatedRows(o))) + " rows, above the limit of " +
                       std::to_string(static_cast<int64_t>(kMaxRows)));
    }
    o.scheme = *ParseScheme(scheme);
    o.policy = *ParsePolicy(policy);
    std::tie(o.level_low, o.level_high) = DefaultLevels(o.scheme, o.batch_size);
    if (!DescriptionOf(o.scheme).has_levels()) o.policy = Policy::kStatic;
    if (low) o.level_low = *low;
    if (high) o.level_high = *high;
    if (o.policy == Policy::kStatic) o.level_high = o.level_low;
    // Written beside OUT and renamed over it when whole, so a failure never
    // leaves a trace that looks complete nor destroys the one replaced.
    const std::string partial = out + ".partial";
    try {
      synthetic::WriteSyntheticTrace(partial, o);
    } catch (...) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((partial + suffix).c_str());
      throw;
    }
    // A run may have started on OUT since CheckOutput(): its trace and WAL stay.
    if (FileBeingWritten(out)) {
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((partial + suffix).c_str());
      throw InputError("OUT " + out + " is being written by another process; --overwrite never replaces it");
    }
    // The replaced database's own journal files would be read with the new one.
    if (overwrite) {
      for (const char* suffix : {"-wal", "-shm", "-journal"}) std::remove((out + suffix).c_str());
    }
    if (std::rename(partial.c_str(), out.c_str()) != 0) {
      std::remove(partial.c_str());
      throw InputError(out + ": cannot rename " + partial + " over it");
    }
    std::cout << out << '\n';
    return kExitOk;
  });
}
