// Helpers for the tests that run accordion-train as a user would: the
// binary, a background run that can be signalled, and trace access.
#ifndef ACCORDION_TESTS_TRAINER_TRAIN_SUPPORT_H_
#define ACCORDION_TESTS_TRAINER_TRAIN_SUPPORT_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"
#include "traces/records.h"

namespace accordion::test_support {

// a and b agree within `rel` of the larger (and within 1e-6 of zero).
inline bool Near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({1e-6, std::fabs(a), std::fabs(b)});
}

inline const std::string kTrain = std::string(ACCORDION_BIN_DIR) + "/accordion-train";
inline const std::string kAnalyze = std::string(ACCORDION_BIN_DIR) + "/accordion-analyze";

// A small, quick run: MLP on 512 synthetic samples, 2 workers, global batch 64.
inline const std::string kQuickRun =
    " --dataset synthetic --limit-samples 512 --model mlp --batch-size 64 --lr 0.05 --seed 3";

CommandResult Train(const std::string& args);

// accordion-train started in the background with stdout / stderr in files.
class BackgroundRun {
 public:
  BackgroundRun(const std::string& args, const std::string& dir);
  ~BackgroundRun();  // kills what is left

  pid_t pid() const { return pid_; }
  // Waits until stdout holds `text`; false on timeout or exit.
  bool WaitForOutput(const std::string& text, std::chrono::seconds timeout);
  // Waits for the exit; returns the exit code (128 + signal if killed), or
  // -1 when it is still running after `timeout`.
  int WaitForExit(std::chrono::seconds timeout);
  // The worker processes (the launcher's children).
  std::vector<pid_t> Workers() const;
  std::string out() const;
  std::string err() const;

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string out_path_, err_path_;
};

// Per-epoch records and per-(epoch, layer) rows of a trace.
struct TraceContent {
  RunInfo run;
  std::vector<LayerInfo> layers;
  std::vector<EpochRecord> epochs;
  std::vector<std::vector<EpochLayerRecord>> layer_rows;  // [epoch][layer]
};
TraceContent ReadTrace(const std::string& path);

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_TRAINER_TRAIN_SUPPORT_H_
