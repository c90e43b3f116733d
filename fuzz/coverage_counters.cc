// The inline 8-bit coverage counters of the whole (statically linked) fuzz
// binary, as the linker's bounds of their section, for platform_xml_fuzzer,
// whose child processes hand their counters back. This file is compiled
// without coverage instrumentation (fuzz/CMakeLists.txt): an instrumented
// file defines globals of these names itself, and the compiler would rename
// one or the other.
#include <cstddef>
#include <cstdint>

extern "C" {
extern uint8_t __start___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
}

namespace accordion::fuzz {

uint8_t* CoverageCounters(size_t* size) {
  *size = __start___sancov_cntrs != nullptr ? static_cast<size_t>(__stop___sancov_cntrs - __start___sancov_cntrs) : 0;
  return __start___sancov_cntrs;
}

}  // namespace accordion::fuzz
