// Reading the IDX files MNIST and Fashion-MNIST ship as (gzipped or plain).
//
// Headers are read on their own so the launcher can refuse a missing or
// malformed dataset before any worker starts; ReadIdxFile loads the bytes.
#ifndef ACCORDION_TRAINER_IDX_FILE_H_
#define ACCORDION_TRAINER_IDX_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

struct IdxHeader {
  std::string path;
  std::vector<int64_t> dims;  // images: {N, rows, cols}; labels: {N}
};

struct IdxArray {
  IdxHeader header;
  std::vector<uint8_t> data;  // row-major, prod(dims) bytes
};

// The four files of a dataset directory; `.gz` is preferred, plain IDX works.
struct IdxSplitFiles {
  std::string train_images, train_labels, test_images, test_labels;
};

// Throws InputError naming the missing file.
IdxSplitFiles FindIdxSplitFiles(const std::string& dir);

// Throws InputError when the file is missing, not IDX or not unsigned bytes.
IdxHeader ReadIdxHeader(const std::string& path);
// Also throws when the file holds fewer bytes than its header promises.
IdxArray ReadIdxFile(const std::string& path);

// Throws InputError unless `images` is N x rows x cols and `labels` has N entries.
void CheckImagesAndLabels(const IdxHeader& images, const IdxHeader& labels);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_IDX_FILE_H_
