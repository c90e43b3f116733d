#include "trainer/idx_file.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <memory>

#include "common/errors.h"
#include "common/input_file.h"

namespace accordion {

namespace {

constexpr uint8_t kUnsignedByte = 0x08;
constexpr int64_t kMaxDim = int64_t{1} << 31;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// gzopen reads plain files transparently, so one path serves both forms.
GzFile Open(const std::string& path) {
  CheckInputFile(path);
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) throw InputError(path + ": cannot open");
  return f;
}

void ReadExactly(gzFile_s* f, void* out, size_t bytes, const std::string& path, const char* what) {
  auto* p = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes, 1u << 30));
    const int got = gzread(f, p, chunk);
    if (got <= 0) throw InputError(path + ": truncated " + what);
    p += got;
    bytes -= static_cast<size_t>(got);
  }
}

IdxHeader ReadHeader(gzFile_s* f, const std::string& path) {
  uint8_t magic[4];
  ReadExactly(f, magic, 4, path, "IDX header");
  if (magic[0] != 0 || magic[1] != 0) throw InputError(path + ": not an IDX file");
  if (magic[2] != kUnsignedByte) throw InputError(path + ": IDX data is not unsigned bytes");
  const int ndims = magic[3];
  if (ndims < 1 || ndims > 3) throw InputError(path + ": IDX file with " + std::to_string(ndims) + " dimensions");
  IdxHeader h;
  h.path = path;
  for (int i = 0; i < ndims; ++i) {
    uint8_t b[4];
    ReadExactly(f, b, 4, path, "IDX header");
    const int64_t d = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    if (d < 1 || d >= kMaxDim) throw InputError(path + ": IDX dimension out of range");
    h.dims.push_back(d);
  }
  return h;
}

std::string Pick(const std::string& dir, const std::string& name) {
  struct stat st {};
  for (const std::string& candidate : {dir + "/" + name + ".gz", dir + "/" + name}) {
    if (::stat(candidate.c_str(), &st) == 0) return candidate;
  }
  throw InputError("dataset file " + dir + "/" + name + "(.gz) not found");
}

}  // namespace

IdxSplitFiles FindIdxSplitFiles(const std::string& dir) {
  return {Pick(dir, "train-images-idx3-ubyte"), Pick(dir, "train-labels-idx1-ubyte"),
          Pick(dir, "t10k-images-idx3-ubyte"), Pick(dir, "t10k-labels-idx1-ubyte")};
}

IdxHeader ReadIdxHeader(const std::string& path) {
  GzFile f = Open(path);
  return ReadHeader(f.get(), path);
}

IdxArray ReadIdxFile(const std::string& path) {
  GzFile f = Open(path);
  IdxArray a;
  a.header = ReadHeader(f.get(), path);
  int64_t bytes = 1;
  for (int64_t d : a.header.dims) {
    // Checked before multiplying: three dimensions below 2^31 overflow int64.
    if (d > (int64_t{1} << 34) / bytes) throw InputError(path + ": IDX file too large");
    bytes *= d;
  }
  // Grow with the data actually read: a short file whose header promises
  // gigabytes must fail as truncated, not allocate them first.
  constexpr int64_t kChunk = int64_t{1} << 20;
  for (int64_t have = 0; have < bytes; have += kChunk) {
    const int64_t chunk = std::min(kChunk, bytes - have);
    a.data.resize(static_cast<size_t>(have + chunk));
    ReadExactly(f.get(), a.data.data() + have, static_cast<size_t>(chunk), path, "IDX data");
  }
  return a;
}

void CheckImagesAndLabels(const IdxHeader& images, const IdxHeader& labels) {
  if (images.dims.size() != 3) throw InputError(images.path + ": expected N x rows x cols images");
  if (labels.dims.size() != 1) throw InputError(labels.path + ": expected a vector of labels");
  if (images.dims[0] != labels.dims[0]) {
    throw InputError(images.path + " holds " + std::to_string(images.dims[0]) + " images but " + labels.path + " " +
                     std::to_string(labels.dims[0]) + " labels");
  }
}

}  // namespace accordion
