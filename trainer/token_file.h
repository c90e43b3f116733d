// Word-level token files for the LSTM language model (WikiText style: one
// sentence or paragraph per line, words separated by white space).
//
// Every line becomes its words followed by <eos>, as PyTorch's
// word_language_model example reads WikiText-2. The vocabulary is built from
// the training split alone, in order of first appearance, with <unk> first;
// a validation word the training split never saw reads as <unk>. The
// validation split is a second file, or the last `valid_fraction` of the
// training file's lines.
//
// No LibTorch here: the launcher reads the corpus once to refuse a missing,
// binary or too small file before any worker starts.
#ifndef ACCORDION_TRAINER_TOKEN_FILE_H_
#define ACCORDION_TRAINER_TOKEN_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

inline constexpr const char* kUnknownToken = "<unk>";
inline constexpr const char* kEndOfLineToken = "<eos>";

class TokenCorpusOptions {
 public:
  TokenCorpusOptions& train_path(std::string v) { train_path_ = std::move(v); return *this; }
  // A separate validation file; empty: split the training file.
  TokenCorpusOptions& valid_path(std::string v) { valid_path_ = std::move(v); return *this; }
  // Share of the training file's lines (the last ones) that validate.
  TokenCorpusOptions& valid_fraction(double v) { valid_fraction_ = v; return *this; }
  // Keep only the first N training tokens (0: all).
  TokenCorpusOptions& limit_tokens(int64_t v) { limit_tokens_ = v; return *this; }

  const std::string& train_path() const { return train_path_; }
  const std::string& valid_path() const { return valid_path_; }
  double valid_fraction() const { return valid_fraction_; }
  int64_t limit_tokens() const { return limit_tokens_; }

 private:
  std::string train_path_;
  std::string valid_path_;
  double valid_fraction_ = 0.1;
  int64_t limit_tokens_ = 0;
};

struct TokenCorpus {
  std::vector<std::string> vocabulary;  // id -> word; id 0 is <unk>
  std::vector<int64_t> train;           // token ids
  std::vector<int64_t> valid;
};

// Throws InputError when a file is missing, holds NUL bytes (not text) or
// no words, or a split ends up empty.
TokenCorpus ReadTokenCorpus(const TokenCorpusOptions& options);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_TOKEN_FILE_H_
