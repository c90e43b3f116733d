#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include <torch/torch.h>

#include "common/errors.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"
#include "trainer/datasets.h"
#include "trainer/idx_file.h"

namespace accordion {
namespace {

std::string IdxBytes(std::vector<int32_t> dims, const std::vector<uint8_t>& data) {
  std::string b = {0, 0, 8, static_cast<char>(dims.size())};
  for (int32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) b.push_back(static_cast<char>((d >> shift) & 0xff));
  }
  b.append(data.begin(), data.end());
  return b;
}

void WritePlain(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

void WriteGz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

using IdxFiles = test_support::TempDirTest;

TEST_F(IdxFiles, ReadsGzippedAndPlainAlike) {
  std::vector<uint8_t> pixels(3 * 2 * 2);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 20);
  WriteGz(dir_ + "/a.gz", IdxBytes({3, 2, 2}, pixels));
  WritePlain(dir_ + "/a", IdxBytes({3, 2, 2}, pixels));
  for (const std::string name : {"/a.gz", "/a"}) {
    const IdxArray a = ReadIdxFile(dir_ + name);
    EXPECT_EQ(a.header.dims, (std::vector<int64_t>{3, 2, 2}));
    EXPECT_EQ(a.data, pixels);
  }
}

TEST_F(IdxFiles, RefusesWhatIsNotIdx) {
  WritePlain(dir_ + "/text", "hello, world, not idx");
  WritePlain(dir_ + "/floats", std::string{0, 0, 0x0d, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  WritePlain(dir_ + "/short", IdxBytes({10}, {1, 2, 3}));
  EXPECT_THROW(ReadIdxHeader(dir_ + "/text"), InputError);
  EXPECT_THROW(ReadIdxHeader(dir_ + "/floats"), InputError);
  EXPECT_THROW(ReadIdxHeader(dir_ + "/missing"), InputError);
  EXPECT_NO_THROW(ReadIdxHeader(dir_ + "/short"));
  EXPECT_THROW(ReadIdxFile(dir_ + "/short"), InputError);
}

TEST_F(IdxFiles, LoadsADatasetDirectory) {
  std::vector<uint8_t> images(5 * 28 * 28, 255), labels = {0, 1, 2, 9, 4};
  WriteGz(dir_ + "/train-images-idx3-ubyte.gz", IdxBytes({5, 28, 28}, images));
  WriteGz(dir_ + "/train-labels-idx1-ubyte.gz", IdxBytes({5}, labels));
  WritePlain(dir_ + "/t10k-images-idx3-ubyte", IdxBytes({2, 28, 28}, std::vector<uint8_t>(2 * 28 * 28, 0)));
  WritePlain(dir_ + "/t10k-labels-idx1-ubyte", IdxBytes({2}, {3, 3}));
  const DataSplits d = LoadDataSplits("mnist", dir_, /*limit_samples=*/4);
  EXPECT_EQ(d.train.size(), 4);
  EXPECT_EQ(d.test.size(), 2);
  EXPECT_EQ(d.train.images.sizes(), (std::vector<int64_t>{4, 1, 28, 28}));
  EXPECT_EQ(d.train.labels[3].item<int64_t>(), 9);
  // Kept as bytes, normalised per batch with MNIST's statistics.
  EXPECT_EQ(d.train.images.scalar_type(), torch::kUInt8);
  const auto [x, y] = Gather(d.train, torch::tensor({3, 0}, torch::kInt64));
  EXPECT_NEAR(x[1][0][0][0].item<float>(), (1.0 - 0.1307) / 0.3081, 1e-5);
  EXPECT_EQ(y[0].item<int64_t>(), 9);
  // Labels that disagree with the images in count are refused.
  WritePlain(dir_ + "/t10k-labels-idx1-ubyte", IdxBytes({3}, {3, 3, 3}));
  EXPECT_THROW(LoadDataSplits("mnist", dir_, 0), InputError);
}

}  // namespace
}  // namespace accordion
