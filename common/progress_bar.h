// ProgressBar draws "label [#####.....] 42/100 1.3 s" on one terminal line.
//
// It redraws at most every `min_interval_s`, only when stderr is a terminal
// (logs and CI see a single final line instead), and never throws.
//
// Thread safety: not thread-safe; one thread updates a bar.
#ifndef ACCORDION_COMMON_PROGRESS_BAR_H_
#define ACCORDION_COMMON_PROGRESS_BAR_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace accordion {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, double min_interval_s = 0.1);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Sets the count done so far and an optional note shown after it.
  void Update(int64_t done, const std::string& note = "");
  // Draws the final state and ends the line (also done by the destructor).
  void Finish(const std::string& note = "");

 private:
  void Draw(const std::string& note, bool final);

  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  double min_interval_s_;
  bool interactive_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace accordion

#endif  // ACCORDION_COMMON_PROGRESS_BAR_H_
