#include "trainer/token_file.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "common/errors.h"
#include "common/input_file.h"

namespace accordion {

namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  CheckInputFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::vector<std::string> lines;
  std::string line;
  bool any_word = false;
  while (std::getline(in, line)) {
    if (line.find('\0') != std::string::npos) {
      throw InputError(path + ": line " + std::to_string(lines.size() + 1) + " holds NUL bytes; not a text file");
    }
    if (!any_word) any_word = line.find_first_not_of(" \t\r\f\v") != std::string::npos;
    lines.push_back(std::move(line));
  }
  if (!any_word) throw InputError(path + ": no words in the file");
  return lines;
}

class Tokenizer {
 public:
  Tokenizer() { Add(kUnknownToken); }

  // Appends the ids of `lines` (each ending in <eos>) to `out`; with `grow`,
  // new words join the vocabulary, else they read as <unk>.
  void Encode(const std::vector<std::string>& lines, size_t begin, size_t end, bool grow, int64_t limit,
              std::vector<int64_t>& out) {
    for (size_t i = begin; i < end; ++i) {
      std::istringstream words(lines[i]);
      std::string word;
      while (words >> word) {
        if (Full(out, limit)) return;
        out.push_back(grow ? Add(word) : Find(word));
      }
      if (Full(out, limit)) return;
      out.push_back(grow ? Add(kEndOfLineToken) : Find(kEndOfLineToken));
    }
  }

  std::vector<std::string> TakeVocabulary() { return std::move(words_); }

 private:
  static bool Full(const std::vector<int64_t>& out, int64_t limit) {
    return limit > 0 && static_cast<int64_t>(out.size()) >= limit;
  }
  int64_t Add(const std::string& word) {
    const auto [it, added] = ids_.emplace(word, static_cast<int64_t>(words_.size()));
    if (added) words_.push_back(word);
    return it->second;
  }
  int64_t Find(const std::string& word) const {
    const auto it = ids_.find(word);
    return it == ids_.end() ? 0 : it->second;
  }

  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> words_;
};

}  // namespace

TokenCorpus ReadTokenCorpus(const TokenCorpusOptions& o) {
  if (o.train_path().empty()) throw InputError("no training text file given");
  const std::vector<std::string> train_lines = ReadLines(o.train_path());
  std::vector<std::string> valid_lines;
  size_t train_end = train_lines.size();
  if (o.valid_path().empty()) {
    if (!(o.valid_fraction() > 0 && o.valid_fraction() < 1)) {
      throw InputError("the validation fraction must be in (0, 1)");
    }
    const auto held = static_cast<size_t>(std::ceil(o.valid_fraction() * static_cast<double>(train_lines.size())));
    if (held >= train_lines.size()) {
      throw InputError(o.train_path() + ": " + std::to_string(train_lines.size()) +
                       " lines are too few to hold out a validation share");
    }
    train_end = train_lines.size() - held;
  } else {
    valid_lines = ReadLines(o.valid_path());
  }
  Tokenizer tokenizer;
  TokenCorpus corpus;
  tokenizer.Encode(train_lines, 0, train_end, /*grow=*/true, o.limit_tokens(), corpus.train);
  if (o.valid_path().empty()) {
    tokenizer.Encode(train_lines, train_end, train_lines.size(), /*grow=*/false, 0, corpus.valid);
  } else {
    tokenizer.Encode(valid_lines, 0, valid_lines.size(), /*grow=*/false, 0, corpus.valid);
  }
  corpus.vocabulary = tokenizer.TakeVocabulary();
  return corpus;
}

}  // namespace accordion
