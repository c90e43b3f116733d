// Fuzz target: the CIFAR-10 / CIFAR-100 binary reader (trainer/cifar_file.h).
//
// The input is written to a file and read as both variants: CheckCifarFile()
// (the launcher's check) and ReadCifarFile() with no limit and with a limit
// of one image, which must agree with the check on the number of records.
// Seeds: one- and two-record files of each variant (fuzz/corpus/cifar_file).
// InputError is the expected answer to a bad file; anything else is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "trainer/cifar_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string path = fuzz::WriteInput("data_batch.bin", data, size);
  for (CifarVariant variant : {CifarVariant::kCifar10, CifarVariant::kCifar100}) {
    try {
      const int64_t records = CheckCifarFile(path, variant);
      CifarRecords all;
      ReadCifarFile(path, variant, 0, all);
      CifarRecords one;
      ReadCifarFile(path, variant, 1, one);
      if (all.size() != records || one.size() != 1 ||
          all.pixels.size() != static_cast<size_t>(records * kCifarPixels)) {
        std::abort();
      }
    } catch (const InputError&) {
    }
  }
  return 0;
}
