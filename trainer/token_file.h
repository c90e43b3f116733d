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

#include "common/options.h"

namespace accordion {

inline constexpr const char* kUnknownToken = "<unk>";
inline constexpr const char* kEndOfLineToken = "<eos>";

class TokenCorpusOptions {
  /// The training token file. Default: empty.
  ACCORDION_ARG(std::string, train_path);
  /// A separate validation file; empty: split the training file. Default: empty.
  ACCORDION_ARG(std::string, valid_path);
  /// Share of the training file's lines (the last ones) that validate. Default: 0.1.
  ACCORDION_ARG(double, valid_fraction) = 0.1;
  /// Keep only the first N training tokens (0: all). Default: 0.
  ACCORDION_ARG(int64_t, limit_tokens) = 0;
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
