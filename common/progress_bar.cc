#include "common/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace accordion {

ProgressBar::ProgressBar(std::string label, int64_t total, double min_interval_s)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      min_interval_s_(min_interval_s),
      interactive_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::hours(1)) {}

ProgressBar::~ProgressBar() {
  if (!finished_) Finish();
}

void ProgressBar::Update(int64_t done, const std::string& note) {
  done_ = std::clamp<int64_t>(done, 0, total_);
  if (!interactive_) return;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_draw_).count() < min_interval_s_ && done_ < total_) {
    return;
  }
  last_draw_ = now;
  Draw(note, false);
}

void ProgressBar::Finish(const std::string& note) {
  if (finished_) return;
  finished_ = true;
  Draw(note, true);
}

void ProgressBar::Draw(const std::string& note, bool final) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done_ / total_);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "%s%s [%s] %lld/%lld %.1f s%s%s%s", interactive_ ? "\r\033[K" : "", label_.c_str(), bar.c_str(),
               static_cast<long long>(done_), static_cast<long long>(total_), secs, note.empty() ? "" : "  ",
               note.c_str(), final ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace accordion
