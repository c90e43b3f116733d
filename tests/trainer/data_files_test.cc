// CIFAR binary files and word-level token files, read without LibTorch (what
// the launcher checks before any worker starts), on small files written here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "common/errors.h"
#include "tests/support/run_command.h"
#include "tests/trainer/data_writers.h"
#include "tests/support/temp_dir_test.h"
#include "trainer/cifar_file.h"
#include "trainer/token_file.h"

namespace accordion {
namespace {

using test_support::CifarBytes;
using test_support::TestPixel;
using test_support::WriteBytes;

using DataFiles = test_support::TempDirTest;

// The InputError `f` throws ("(no error)" when it does not).
std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(DataFiles, Cifar10RecordsAreLabelThenChannelPlanes) {
  WriteBytes(Path("a.bin"), CifarBytes(CifarVariant::kCifar10, {3, 9, 0}));
  CifarRecords r;
  ReadCifarFile(Path("a.bin"), CifarVariant::kCifar10, 0, r);
  ASSERT_EQ(r.size(), 3);
  EXPECT_EQ(r.labels, (std::vector<uint8_t>{3, 9, 0}));
  ASSERT_EQ(r.pixels.size(), 3u * 3072);
  // Image 1, green plane, last pixel; image 2, blue plane, first pixel.
  EXPECT_EQ(r.pixels[3072 + 2048 - 1], TestPixel(1, 1));
  EXPECT_EQ(r.pixels[2 * 3072 + 2048], TestPixel(2, 2));
  EXPECT_EQ(CheckCifarFile(Path("a.bin"), CifarVariant::kCifar10), 3);
}

TEST_F(DataFiles, Cifar100TrainsOnTheFineLabel) {
  WriteBytes(Path("train.bin"), CifarBytes(CifarVariant::kCifar100, {99, 42, 7}));
  CifarRecords r;
  ReadCifarFile(Path("train.bin"), CifarVariant::kCifar100, 0, r);
  EXPECT_EQ(r.labels, (std::vector<uint8_t>{99, 42, 7}));
  EXPECT_EQ(r.pixels[0], TestPixel(0, 0));
  EXPECT_EQ(CifarClasses(CifarVariant::kCifar100), 100);
  EXPECT_EQ(CifarRecordBytes(CifarVariant::kCifar100), 3074);
}

TEST_F(DataFiles, CifarSplitsReadInOrderUpToALimit) {
  test_support::WriteCifarDir(dir_, CifarVariant::kCifar10, 4, 3);
  const CifarSplitFiles files = FindCifarFiles(dir_, CifarVariant::kCifar10);
  ASSERT_EQ(files.train.size(), 5u);
  EXPECT_EQ(files.train[4], Path("data_batch_5.bin"));
  const CifarRecords all = ReadCifarFiles(files.train, CifarVariant::kCifar10, 0);
  EXPECT_EQ(all.size(), 20);
  const CifarRecords first = ReadCifarFiles(files.train, CifarVariant::kCifar10, 6);
  ASSERT_EQ(first.size(), 6);
  // The sixth image is the second of data_batch_2.bin.
  EXPECT_EQ(first.pixels[5 * 3072], TestPixel(5, 0));
  EXPECT_EQ(first.labels[5], 5);
}

TEST_F(DataFiles, MalformedCifarFilesAreRefusedWithTheReason) {
  WriteBytes(Path("short.bin"), CifarBytes(CifarVariant::kCifar10, {1, 2}).substr(0, 5000));
  EXPECT_NE(ErrorOf([&] { CheckCifarFile(Path("short.bin"), CifarVariant::kCifar10); }).find("not a whole number"),
            std::string::npos);
  WriteBytes(Path("label.bin"), CifarBytes(CifarVariant::kCifar10, {1, 12}));
  const std::string label = ErrorOf([&] { CheckCifarFile(Path("label.bin"), CifarVariant::kCifar10); });
  EXPECT_NE(label.find("record 1 has label 12"), std::string::npos) << label;
  // A CIFAR-10 file read as CIFAR-100: 3073-byte records are not 3074-byte ones.
  WriteBytes(Path("ten.bin"), CifarBytes(CifarVariant::kCifar10, {1, 2}));
  EXPECT_THROW(CheckCifarFile(Path("ten.bin"), CifarVariant::kCifar100), InputError);
  WriteBytes(Path("empty.bin"), "");
  EXPECT_NE(ErrorOf([&] { CheckCifarFile(Path("empty.bin"), CifarVariant::kCifar10); }).find("empty"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { FindCifarFiles(dir_, CifarVariant::kCifar100); }).find("train.bin not found"),
            std::string::npos);
  EXPECT_THROW(CheckCifarFile(Path("missing.bin"), CifarVariant::kCifar10), InputError);
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<std::string> Words(const TokenCorpus& c, const std::vector<int64_t>& ids) {
  std::vector<std::string> out;
  for (int64_t id : ids) out.push_back(c.vocabulary[static_cast<size_t>(id)]);
  return out;
}

TEST_F(DataFiles, TokenFilesEndEveryLineWithEosAndBuildTheVocabularyFromTraining) {
  WriteText(Path("train.txt"), "the cat sat\n\n  the dog   sat\n");
  WriteText(Path("valid.txt"), "the bird sat\n");
  const TokenCorpus c =
      ReadTokenCorpus(TokenCorpusOptions().train_path(Path("train.txt")).valid_path(Path("valid.txt")));
  EXPECT_EQ(c.vocabulary, (std::vector<std::string>{"<unk>", "the", "cat", "sat", "<eos>", "dog"}));
  // Empty lines still end in <eos>, as PyTorch's word_language_model reads WikiText.
  EXPECT_EQ(Words(c, c.train),
            (std::vector<std::string>{"the", "cat", "sat", "<eos>", "<eos>", "the", "dog", "sat", "<eos>"}));
  // "bird" is not in the training vocabulary.
  EXPECT_EQ(Words(c, c.valid), (std::vector<std::string>{"the", "<unk>", "sat", "<eos>"}));
}

TEST_F(DataFiles, WithoutAValidationFileTheLastLinesValidate) {
  WriteText(Path("all.txt"), "a b\nc d\ne f\ng h\nb z\n");
  const TokenCorpus c = ReadTokenCorpus(TokenCorpusOptions().train_path(Path("all.txt")).valid_fraction(0.4));
  // ceil(0.4 * 5) = 2 lines held out.
  EXPECT_EQ(Words(c, c.train).size(), 9u);
  EXPECT_EQ(Words(c, c.valid), (std::vector<std::string>{"<unk>", "<unk>", "<eos>", "b", "<unk>", "<eos>"}));
  const TokenCorpus limited =
      ReadTokenCorpus(TokenCorpusOptions().train_path(Path("all.txt")).valid_fraction(0.4).limit_tokens(4));
  EXPECT_EQ(Words(limited, limited.train), (std::vector<std::string>{"a", "b", "<eos>", "c"}));
}

TEST_F(DataFiles, BadTokenFilesAreRefusedWithTheReason) {
  WriteText(Path("blank.txt"), "\n   \n\n");
  EXPECT_NE(ErrorOf([&] { ReadTokenCorpus(TokenCorpusOptions().train_path(Path("blank.txt"))); }).find("no words"),
            std::string::npos);
  WriteText(Path("binary.txt"), std::string("abc\n\0\x01\x02 def\n", 12));
  EXPECT_NE(ErrorOf([&] { ReadTokenCorpus(TokenCorpusOptions().train_path(Path("binary.txt"))); }).find("NUL"),
            std::string::npos);
  WriteText(Path("one.txt"), "only one line\n");
  EXPECT_NE(ErrorOf([&] { ReadTokenCorpus(TokenCorpusOptions().train_path(Path("one.txt"))); }).find("too few"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] { ReadTokenCorpus(TokenCorpusOptions().train_path(Path("missing.txt"))); }).find("no such file"),
      std::string::npos);
  EXPECT_THROW(ReadTokenCorpus(TokenCorpusOptions().train_path(Path("one.txt")).valid_path(Path("missing.txt"))),
               InputError);
}

}  // namespace
}  // namespace accordion
