// Reading the binary versions of CIFAR-10 and CIFAR-100 (as distributed in
// cifar-10-binary.tar.gz and cifar-100-binary.tar.gz).
//
//   CIFAR-10:  data_batch_1.bin .. data_batch_5.bin, test_batch.bin;
//              each record is 1 label byte + 3072 pixel bytes.
//   CIFAR-100: train.bin, test.bin; each record is a coarse and a fine label
//              byte + 3072 pixel bytes (we train on the 100 fine labels).
// Pixels are 1024 red, then 1024 green, then 1024 blue bytes, each plane a
// row-major 32x32 image.
//
// No LibTorch here: the launcher checks a dataset directory (files present,
// whole records, labels in range) before any worker starts; the workers use
// ReadCifarFile to load it.
#ifndef ACCORDION_TRAINER_CIFAR_FILE_H_
#define ACCORDION_TRAINER_CIFAR_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

enum class CifarVariant { kCifar10, kCifar100 };

// Side of the square images, and the colour planes.
inline constexpr int64_t kCifarSide = 32;
inline constexpr int64_t kCifarChannels = 3;
inline constexpr int64_t kCifarPixels = kCifarChannels * kCifarSide * kCifarSide;  // 3072

int64_t CifarClasses(CifarVariant variant);      // 10 or 100
int64_t CifarRecordBytes(CifarVariant variant);  // 3073 or 3074

// The files of a dataset directory, training files in order.
struct CifarSplitFiles {
  std::vector<std::string> train;
  std::string test;
};

// Throws InputError naming the first missing file.
CifarSplitFiles FindCifarFiles(const std::string& dir, CifarVariant variant);

struct CifarRecords {
  std::vector<uint8_t> labels;  // one per image, in [0, classes)
  std::vector<uint8_t> pixels;  // kCifarPixels per image, CHW
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

// Reads whole records from `path`, appending to `out`, stopping once `out`
// holds `limit` images (0: no limit). Throws InputError when the file is
// missing, empty, not a whole number of records, or holds a label outside
// the variant's classes.
void ReadCifarFile(const std::string& path, CifarVariant variant, int64_t limit, CifarRecords& out);

// Reads every file of a split (training files in order) the same way.
CifarRecords ReadCifarFiles(const std::vector<std::string>& paths, CifarVariant variant, int64_t limit);

// The same checks as ReadCifarFile without keeping the pixels; returns the
// number of records.
int64_t CheckCifarFile(const std::string& path, CifarVariant variant);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_CIFAR_FILE_H_
