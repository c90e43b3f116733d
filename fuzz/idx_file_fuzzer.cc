// Fuzz target: the IDX reader for MNIST / Fashion-MNIST (trainer/idx_file.h).
//
// The input is written to a file (plain IDX; gzopen reads gzip as well, and
// a mutation that starts with gzip's magic takes that path) and read three
// ways: ReadIdxHeader(), ReadIdxFile() (header and data), and
// CheckImagesAndLabels() on the header as images and as labels. The seeds are
// tiny IDX files (fuzz/corpus/idx_file). InputError is the expected answer to
// a bad file; anything else - including an allocation the file's bytes do
// not justify - is a finding.
#include <cstddef>
#include <cstdint>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "trainer/idx_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string path = fuzz::WriteInput("input-idx-ubyte", data, size);
  try {
    const IdxHeader header = ReadIdxHeader(path);
    try {
      CheckImagesAndLabels(header, header);
    } catch (const InputError&) {
    }
    const IdxArray array = ReadIdxFile(path);
    if (array.header.dims != header.dims) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
