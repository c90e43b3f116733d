// Fuzz target: the word-level token files of the LSTM model (trainer/token_file.h).
//
// The first input byte picks the options (validation share, a token limit,
// and whether a separate validation file is used); the rest is the text. It
// is written to a training file - and, with a separate validation file, cut
// in two at the first form feed - and ReadTokenCorpus() builds the
// vocabulary and both splits. Every id must name a vocabulary word.
// Seeds: small text files (fuzz/corpus/token_file). InputError is the
// expected answer to a bad file; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "trainer/token_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  if (size < 1) return 0;
  const uint8_t options = data[0];
  const uint8_t* text = data + 1;
  size_t text_size = size - 1;
  TokenCorpusOptions o;
  o.valid_fraction(static_cast<double>(options & 0x0f) / 10.0);  // 0 .. 1.5: out of range included
  o.limit_tokens((options & 0x30) == 0x30 ? 5 : 0);
  std::string valid;
  if (options & 0x40) {
    size_t cut = 0;
    while (cut < text_size && text[cut] != '\f') ++cut;
    const size_t rest = cut < text_size ? cut + 1 : text_size;
    valid = fuzz::WriteInput("valid.txt", text + rest, text_size - rest);
    text_size = cut;
    o.valid_path(valid);
  }
  o.train_path(fuzz::WriteInput("train.txt", text, text_size));
  try {
    const TokenCorpus corpus = ReadTokenCorpus(o);
    for (const std::vector<int64_t>* split : {&corpus.train, &corpus.valid}) {
      for (int64_t id : *split) {
        if (id < 0 || id >= static_cast<int64_t>(corpus.vocabulary.size())) std::abort();
      }
    }
  } catch (const InputError&) {
  }
  return 0;
}
