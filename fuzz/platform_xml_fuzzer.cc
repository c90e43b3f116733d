// Fuzz target: the SimGrid XML platform reader (simulator/platform.h).
//
// The input is written to a .xml file and takes the path accordion-sim
// takes: LoadPlatformFile() checks it (CheckXmlPlatform: SimGrid's XML
// parser and our link and route checks, in a child process of its own,
// because SimGrid dies on some bad platforms), and a platform that passes is
// built for one rank by a NetworkSimulation - a SimGrid engine, natural host
// order, sealing.
//
// SimGrid allows one engine per process (and crashes when one is created
// after another failed to parse), so the NetworkSimulation is built in a
// child forked here. That child exits 0 when the platform built or was
// refused with an InputError; any other end (a signal, a sanitizer report,
// another exception, more than 20 s) makes this process abort, which
// libFuzzer reports with the input. The child copies its coverage counters
// back through shared memory, so the fuzzer still sees which of our branches
// an input reached. This target runs far slower than the others: one or two
// processes and a SimGrid engine per input.
//
// CheckXmlPlatform's own child is SimGrid's to kill: SimGrid refuses a
// platform by calling abort(), and the check turns that into an InputError.
// That child would inherit libFuzzer's handler for SIGABRT, which writes a
// crash-* file and starts a symbolizer for every refusal, so it gets the
// default action back. A sanitizer report or another deadly signal there is
// still a finding: the child flags it in shared memory (its stderr goes to
// the check's log) and this process aborts.
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
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

void* SharedPages(size_t bytes) {
  void* p = ::mmap(nullptr, bytes > 0 ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::abort();
  }
  return p;
}

// Set by a child of CheckXmlPlatform that met a sanitizer report or a
// deadly signal other than SimGrid's abort(): the signal, or -1.
volatile sig_atomic_t* check_failure = nullptr;
bool forking_here = false;

void FlagDeadlySignal(int signal) {
  *check_failure = signal;
  ::_exit(77);
}

void FlagSanitizerReport() { *check_failure = -1; }

// Runs in every child process; those not forked below are CheckXmlPlatform's.
void InCheckChild() {
  if (forking_here) return;
  ::signal(SIGABRT, SIG_DFL);
  for (int deadly : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(deadly, FlagDeadlySignal);
  __sanitizer_set_death_callback(FlagSanitizerReport);
}

void AbortIfTheCheckFailed() {
  if (*check_failure == 0) return;
  if (*check_failure < 0) {
    std::fprintf(stderr,
                 "platform_xml_fuzzer: a sanitizer report in CheckXmlPlatform's child (its stderr went to "
                 "the check's log; replay the input with accordion-sim built by the sanitize preset)\n");
  } else {
    std::fprintf(stderr, "platform_xml_fuzzer: CheckXmlPlatform's child died of signal %d\n",
                 static_cast<int>(*check_failure));
  }
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  check_failure = static_cast<volatile sig_atomic_t*>(SharedPages(sizeof(sig_atomic_t)));
  ::pthread_atfork(nullptr, nullptr, InCheckChild);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string path = fuzz::WriteInput("platform.xml", data, size);
  sim::PlatformSpec spec;
  try {
    spec = sim::LoadPlatformFile(path);
  } catch (const InputError&) {
    AbortIfTheCheckFailed();
    return 0;  // the expected outcome for a bad platform
  }
  AbortIfTheCheckFailed();

  size_t counters = 0;
  uint8_t* const coverage = fuzz::CoverageCounters(&counters);
  static auto* const shared = static_cast<uint8_t*>(SharedPages(counters));
  std::fflush(nullptr);
  forking_here = true;
  const pid_t child = ::fork();
  forking_here = false;
  if (child < 0) {
    std::perror("fork");
    std::abort();
  }
  if (child == 0) {
    ::alarm(20);
    try {
      sim::NetworkSimulation simulation(spec, 1);
    } catch (const InputError&) {
      // A platform SimGrid loads but the simulation refuses.
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
