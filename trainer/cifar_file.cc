#include "trainer/cifar_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "common/errors.h"
#include "common/input_file.h"

namespace accordion {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

const char* NameOf(CifarVariant v) { return v == CifarVariant::kCifar10 ? "CIFAR-10" : "CIFAR-100"; }

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Streams the records of `path`; `pixels` (may be null) receives each
// record's pixel bytes. Returns the number of records read.
int64_t StreamRecords(const std::string& path, CifarVariant variant, int64_t limit, std::vector<uint8_t>* labels,
                      std::vector<uint8_t>* pixels) {
  CheckInputFile(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot be read");
  const int64_t record = CifarRecordBytes(variant);
  const auto bytes = static_cast<int64_t>(st.st_size);
  if (bytes == 0) throw InputError(path + ": empty file");
  if (bytes % record != 0) {
    throw InputError(path + ": " + std::to_string(bytes) + " bytes is not a whole number of " + std::to_string(record) +
                     "-byte " + NameOf(variant) + " records");
  }
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw InputError(path + ": cannot open");
  const int64_t records = bytes / record;
  const int64_t classes = CifarClasses(variant);
  // The label we train on is the last label byte (CIFAR-100: fine, not coarse).
  const int64_t label_at = record - kCifarPixels - 1;
  std::vector<uint8_t> buffer(static_cast<size_t>(record * std::min<int64_t>(records, 1024)));
  auto full = [&] { return labels != nullptr && limit > 0 && static_cast<int64_t>(labels->size()) >= limit; };
  int64_t done = 0;
  while (done < records && !full()) {
    const int64_t chunk = std::min<int64_t>(1024, records - done);
    const size_t want = static_cast<size_t>(chunk * record);
    if (std::fread(buffer.data(), 1, want, f.get()) != want) throw InputError(path + ": read error");
    for (int64_t i = 0; i < chunk && !full(); ++i) {
      const uint8_t* r = buffer.data() + i * record;
      for (int64_t b = 0; b <= label_at; ++b) {
        // CIFAR-100's first byte is the coarse label (20 superclasses).
        const int64_t bound = b == label_at ? classes : 20;
        if (r[b] >= bound) {
          throw InputError(path + ": record " + std::to_string(done + i) + " has label " + std::to_string(r[b]) +
                           ", not a " + NameOf(variant) + " class (0-" + std::to_string(bound - 1) + ")");
        }
      }
      if (labels != nullptr) labels->push_back(r[label_at]);
      if (pixels != nullptr) pixels->insert(pixels->end(), r + label_at + 1, r + record);
    }
    done += chunk;
  }
  return done;
}

}  // namespace

int64_t CifarClasses(CifarVariant variant) { return variant == CifarVariant::kCifar10 ? 10 : 100; }

int64_t CifarRecordBytes(CifarVariant variant) { return (variant == CifarVariant::kCifar10 ? 1 : 2) + kCifarPixels; }

CifarSplitFiles FindCifarFiles(const std::string& dir, CifarVariant variant) {
  CifarSplitFiles files;
  if (variant == CifarVariant::kCifar10) {
    for (int i = 1; i <= 5; ++i) files.train.push_back(dir + "/data_batch_" + std::to_string(i) + ".bin");
    files.test = dir + "/test_batch.bin";
  } else {
    files.train.push_back(dir + "/train.bin");
    files.test = dir + "/test.bin";
  }
  std::vector<std::string> all = files.train;
  all.push_back(files.test);
  for (const std::string& path : all) {
    if (!IsFile(path)) {
      throw InputError(std::string(NameOf(variant)) + " file " + path +
                       " not found (the binary "
                       "version: " +
                       (variant == CifarVariant::kCifar10 ? "data_batch_1.bin .. data_batch_5.bin, test_batch.bin"
                                                          : "train.bin, test.bin") +
                       ")");
    }
  }
  return files;
}

void ReadCifarFile(const std::string& path, CifarVariant variant, int64_t limit, CifarRecords& out) {
  StreamRecords(path, variant, limit, &out.labels, &out.pixels);
}

CifarRecords ReadCifarFiles(const std::vector<std::string>& paths, CifarVariant variant, int64_t limit) {
  CifarRecords out;
  for (const std::string& path : paths) {
    if (limit > 0 && out.size() >= limit) break;
    ReadCifarFile(path, variant, limit, out);
  }
  return out;
}

int64_t CheckCifarFile(const std::string& path, CifarVariant variant) {
  return StreamRecords(path, variant, 0, nullptr, nullptr);
}

}  // namespace accordion
