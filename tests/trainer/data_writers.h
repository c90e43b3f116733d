// Small dataset files the trainer tests write for themselves: CIFAR binary
// records with chosen labels and pixels, and text files. Nothing is
// downloaded; the real datasets are read by the same code.
#ifndef ACCORDION_TESTS_TRAINER_DATA_WRITERS_H_
#define ACCORDION_TESTS_TRAINER_DATA_WRITERS_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "trainer/cifar_file.h"

namespace accordion::test_support {

// Image i of a test file: every pixel of channel c is (i * 7 + c * 50) % 256,
// so tests can tell images and channels apart after loading.
inline uint8_t TestPixel(int64_t image, int64_t channel) {
  return static_cast<uint8_t>((image * 7 + channel * 50) % 256);
}

// One CIFAR record per label (CIFAR-100: coarse label fine / 5, as the real
// files relate them), pixels from TestPixel(first_image + i, c).
inline std::string CifarBytes(CifarVariant variant, const std::vector<int>& labels, int64_t first_image = 0) {
  std::string bytes;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (variant == CifarVariant::kCifar100) bytes.push_back(static_cast<char>(labels[i] / 5));
    bytes.push_back(static_cast<char>(labels[i]));
    for (int64_t c = 0; c < kCifarChannels; ++c) {
      bytes.append(static_cast<size_t>(kCifarSide * kCifarSide),
                   static_cast<char>(TestPixel(first_image + static_cast<int64_t>(i), c)));
    }
  }
  return bytes;
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A complete CIFAR directory: `per_file` training images in each training
// file (labels cycle through the classes) and `test` test images.
inline void WriteCifarDir(const std::string& dir, CifarVariant variant, int per_file, int test) {
  const int classes = static_cast<int>(CifarClasses(variant));
  const CifarSplitFiles files{
      variant == CifarVariant::kCifar10
          ? std::vector<std::string>{dir + "/data_batch_1.bin", dir + "/data_batch_2.bin", dir + "/data_batch_3.bin",
                                     dir + "/data_batch_4.bin", dir + "/data_batch_5.bin"}
          : std::vector<std::string>{dir + "/train.bin"},
      variant == CifarVariant::kCifar10 ? dir + "/test_batch.bin" : dir + "/test.bin"};
  int64_t image = 0;
  for (const std::string& path : files.train) {
    std::vector<int> labels;
    for (int i = 0; i < per_file; ++i) labels.push_back(static_cast<int>((image + i) % classes));
    WriteBytes(path, CifarBytes(variant, labels, image));
    image += per_file;
  }
  std::vector<int> labels;
  for (int i = 0; i < test; ++i) labels.push_back(i % classes);
  WriteBytes(files.test, CifarBytes(variant, labels, 1000));
}

// A small word-level corpus: `lines` lines drawn from a fixed 20-word
// vocabulary with a simple grammar, so a language model can learn something.
inline std::string TestCorpus(int lines) {
  const char* subjects[] = {"the cat", "a dog", "my friend", "the old man", "her sister"};
  const char* verbs[] = {"sees", "likes", "follows", "finds"};
  const char* objects[] = {"the ball", "a bird", "the red car", "our house", "the river"};
  std::string text;
  for (int i = 0; i < lines; ++i) {
    text += std::string(subjects[i % 5]) + " " + verbs[(i / 5) % 4] + " " + objects[(i * 3) % 5] + " .\n";
  }
  return text;
}

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_TRAINER_DATA_WRITERS_H_
