// Fuzz target: the SimGrid XML platform reader (simulator/platform.h).
//
// The input is written to a .xml file, LoadPlatformFile() takes it as an XML
// platform, and a NetworkSimulation is built on it for one rank - the path
// accordion-sim takes: a SimGrid engine, SimGrid's XML parser, our checks of
// every link (positive bandwidth, no negative latency), natural host order,
// sealing. Seeds: the example XML platforms.
//
// SimGrid allows one engine per process (and crashes when one is created
// after another failed to parse), so each input runs in a forked child. The
// child exits 0 when the platform built or was refused with an InputError;
// any other end (a signal, a sanitizer report, another exception, more than
// 20 s) makes the parent abort, which libFuzzer reports with the input. The
// child copies its coverage counters back through shared memory, so the
// fuzzer still sees which of our branches an input reached. This target runs
// far slower than the others (a process and an engine per input).
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "simulator/network_simulation.h"
#include "simulator/platform.h"

namespace accordion::fuzz {
// fuzz/coverage_counters.cc: this binary's coverage counters.
uint8_t* CoverageCounters(size_t* size);
}  // namespace accordion::fuzz

namespace {

uint8_t* SharedCounters(size_t bytes) {
  static uint8_t* shared = [bytes] {
    void* p = ::mmap(nullptr, bytes > 0 ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("mmap");
      std::abort();
    }
    return static_cast<uint8_t*>(p);
  }();
  return shared;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string path = fuzz::WriteInput("platform.xml", data, size);
  size_t counters = 0;
  uint8_t* const coverage = fuzz::CoverageCounters(&counters);
  uint8_t* shared = SharedCounters(counters);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("fork");
    std::abort();
  }
  if (child == 0) {
    ::alarm(20);
    try {
      sim::NetworkSimulation simulation(sim::LoadPlatformFile(path), 1);
    } catch (const InputError&) {
      // The expected outcome for a bad platform.
    }
    if (counters > 0) std::memcpy(shared, coverage, counters);
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::perror("waitpid");
      std::abort();
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "platform_xml_fuzzer: the child %s %d\n",
                 WIFSIGNALED(status) ? "died of signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    std::abort();
  }
  if (counters > 0) std::memcpy(coverage, shared, counters);
  return 0;
}
