// Fuzz target: the SimGrid XML platform reader (simulator/platform.h).
//
// The input is written to a .xml file and takes the path accordion-sim
// takes: LoadPlatformFile() checks it (CheckXmlPlatform: SimGrid's XML
// parser and our link and route checks, in a child process of its own,
// because SimGrid dies on some bad platforms), and a platform that passes is
// built for one rank by a NetworkSimulation - a SimGrid engine, natural host
// order, sealing.
//
// Processes, not inputs, are what this target spends its time on, and a
// fork costs more the larger the forking process is. So a small process,
// forked before the first input, loads every platform: its own memory stays
// small while the fuzzer's grows, and since CheckXmlPlatform's engine lives
// in a child, it never holds an engine itself. A platform that passes is
// built in a child of it (SimGrid allows one engine per process). For each
// input it hands back its coverage counters (and its child's) through shared
// memory, so the fuzzer still sees which of our branches the input reached,
// and how it ended; every 1,000 inputs it runs LeakSanitizer's check, and
// every 100 it empties the sanitizer's quarantine of freed memory.
//
// Platforms whose clusters declare more than 1,024 hosts but no more than
// kMaxHosts are skipped (and kept out of the corpus): SimGrid builds each
// host, so they measure SimGrid's speed, not our code - a legal cluster of
// 79,200 hosts took over 30 s under the sanitizers and ended two runs on
// libFuzzer's timeout. Above kMaxHosts they are run: CheckXmlPlatform must
// refuse them from the text, at once.
//
// Findings (the fuzzer aborts, and libFuzzer keeps the input): an exception
// other than InputError, a sanitizer report or a deadly signal in any of the
// processes, a child that does not exit 0, more than 20 s in a child. One
// thing is not a finding: SimGrid's abort() in CheckXmlPlatform's child,
// which is how SimGrid refuses a platform; the check turns it into an
// InputError. That child gets SIGABRT's default action back (a pthread_atfork
// handler); libFuzzer's handler would write a crash-* file for every refusal.
#include <dlfcn.h>
#include <pthread.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "simulator/network_simulation.h"
#include "simulator/platform.h"
#include "simulator/platform_file.h"

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

// How one input ended, as the loading process reports it.
struct Outcome {
  char finding[512] = {};  // empty: no finding
};

// Set up before the loading process is forked, shared with it.
struct Shared {
  int request = -1;  // fuzzer -> loader: one byte per input
  int reply = -1;    // loader -> fuzzer: one byte when the outcome is written
  uint8_t* counters = nullptr;
  size_t counter_count = 0;
  Outcome* outcome = nullptr;
  // Set by a child of CheckXmlPlatform that met a sanitizer report or a
  // deadly signal other than SimGrid's abort(): the signal, or -1.
  volatile sig_atomic_t* check_failure = nullptr;
};
Shared shared;
// The input's file in the scratch directory: written by the fuzzer, read by the loader.
constexpr const char* kInputName = "platform.xml";
bool forking_here = false;  // the loader is forking a NetworkSimulation child

// SimGrid 3.32 as Debian builds it (without its assertions) also crashes on
// some platforms it cannot route - a Full zone without the route between two
// of its clusters dereferences the missing route (found by this target on
// 2026-11-23). accordion-sim reports that as a platform SimGrid cannot load,
// one line and exit 2, like an abort(); a fault inside our own code is a
// finding.
void FlagDeadlySignal(int signal, siginfo_t*, void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  Dl_info where{};
  const auto pc = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
  if (::dladdr(pc, &where) != 0 && where.dli_fname != nullptr &&
      std::strstr(where.dli_fname, "libsimgrid") != nullptr) {
    ::_exit(78);
  }
  *shared.check_failure = signal;
  ::_exit(77);
}

void FlagSanitizerReport() { *shared.check_failure = -1; }

// Runs in every child; those not forked by the loader itself are
// CheckXmlPlatform's.
void InCheckChild() {
  if (forking_here) return;
  ::signal(SIGABRT, SIG_DFL);  // SimGrid's refusal, whatever the fuzzer installed
  struct sigaction action {};
  action.sa_sigaction = FlagDeadlySignal;
  action.sa_flags = SA_SIGINFO;
  for (int deadly : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::sigaction(deadly, &action, nullptr);
  __sanitizer_set_death_callback(FlagSanitizerReport);
}

// Adds `count` coverage counters of `from` to `into`, saturating.
void AddCounters(uint8_t* into, const uint8_t* from, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const unsigned sum = into[i] + from[i];
    into[i] = static_cast<uint8_t>(sum > 255 ? 255 : sum);
  }
}

// Adds this process's counters to the shared ones.
void HandBackCoverage() {
  size_t count = 0;
  const uint8_t* mine = accordion::fuzz::CoverageCounters(&count);
  AddCounters(shared.counters, mine, count);
}

void ResetCoverage() {
  size_t count = 0;
  uint8_t* mine = accordion::fuzz::CoverageCounters(&count);
  std::memset(mine, 0, count);
}

[[noreturn]] void BuildSimulation(const accordion::sim::PlatformSpec& spec) {
  ResetCoverage();
  ::alarm(20);
  int code = 0;
  try {
    accordion::sim::NetworkSimulation simulation(spec, 1);
  } catch (const accordion::InputError&) {
    // A platform SimGrid loads but the simulation refuses.
  } catch (const std::exception& e) {
    // Not to go up this process's stack: that is the loader's loop.
    std::fprintf(stderr, "platform_xml_fuzzer: NetworkSimulation threw: %s\n", e.what());
    code = 3;
  } catch (...) {
    std::fprintf(stderr, "platform_xml_fuzzer: NetworkSimulation threw an exception of unknown type\n");
    code = 3;
  }
  HandBackCoverage();
  ::_exit(code);
}

// Loads the input's platform; what went wrong, or "" when nothing did.
std::string LoadOne(const std::string& path) {
  accordion::sim::PlatformSpec spec;
  try {
    spec = accordion::sim::LoadPlatformFile(path);
  } catch (const accordion::InputError&) {
    return "";  // the expected outcome for a bad platform
  } catch (const std::exception& e) {
    return std::string("LoadPlatformFile threw something other than an InputError: ") + e.what();
  }
  std::fflush(nullptr);
  forking_here = true;
  const pid_t child = ::fork();
  forking_here = false;
  if (child < 0) return std::string("fork: ") + std::strerror(errno);
  if (child == 0) BuildSimulation(spec);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return std::string("waitpid: ") + std::strerror(errno);
  }
  if (WIFSIGNALED(status)) return "the NetworkSimulation child died of signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "the NetworkSimulation child exited with " + std::to_string(WEXITSTATUS(status));
  return "";
}

[[noreturn]] void LoaderLoop(const std::string& path, int request, int reply) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (int64_t inputs = 1;; ++inputs) {
    char go = 0;
    const ssize_t n = ::read(request, &go, 1);
    if (n < 0 && errno == EINTR) {
      --inputs;
      continue;
    }
    if (n != 1) ::_exit(0);  // the fuzzer has ended
    ResetCoverage();
    std::string finding;
    try {
      finding = LoadOne(path);
    } catch (const std::exception& e) {
      finding = std::string("exception: ") + e.what();
    } catch (...) {
      finding = "an exception of unknown type";
    }
    if (finding.empty() && *shared.check_failure != 0) {
      finding = *shared.check_failure < 0
                    ? "a sanitizer report in CheckXmlPlatform's child (its stderr went to the check's log; replay the "
                      "input with accordion-sim built by the sanitize preset)"
                    : "CheckXmlPlatform's child died of signal " + std::to_string(*shared.check_failure);
    }
    if (finding.empty() && inputs % 1000 == 0 && __lsan_do_recoverable_leak_check() != 0) {
      finding = "LeakSanitizer found leaks in the loading process (report above)";
    }
    // Freed memory waits in ASan's quarantine (up to 256 MB): emptied now
    // and then, it leaves this process small, and each fork cheap.
    if (inputs % 100 == 0) __sanitizer_purge_allocator();
    HandBackCoverage();
    std::snprintf(shared.outcome->finding, sizeof shared.outcome->finding, "%s", finding.c_str());
    const char done = 1;
    while (::write(reply, &done, 1) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  accordion::fuzz::CoverageCounters(&shared.counter_count);
  shared.counters = static_cast<uint8_t*>(SharedPages(shared.counter_count));
  shared.outcome = new (SharedPages(sizeof(Outcome))) Outcome;
  shared.check_failure = static_cast<volatile sig_atomic_t*>(SharedPages(sizeof(sig_atomic_t)));
  ::pthread_atfork(nullptr, nullptr, InCheckChild);
  int to_loader[2];
  int from_loader[2];
  if (::pipe(to_loader) != 0 || ::pipe(from_loader) != 0) {
    std::perror("pipe");
    std::abort();
  }
  const std::string path = accordion::fuzz::ScratchDir() + "/" + kInputName;
  std::fflush(nullptr);
  forking_here = true;
  const pid_t loader = ::fork();
  forking_here = false;
  if (loader < 0) {
    std::perror("fork");
    std::abort();
  }
  if (loader == 0) {
    ::close(to_loader[1]);
    ::close(from_loader[0]);
    LoaderLoop(path, to_loader[0], from_loader[1]);
  }
  ::close(to_loader[0]);
  ::close(from_loader[1]);
  shared.request = to_loader[1];
  shared.reply = from_loader[0];
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int64_t kLargestClusterBuilt = 1024;
  const int64_t declared =
      accordion::sim::XmlClusterHostsDeclared(std::string(reinterpret_cast<const char*>(data), size));
  if (declared > kLargestClusterBuilt && declared <= accordion::sim::kMaxHosts) return -1;
  accordion::fuzz::WriteInput(kInputName, data, size);
  std::memset(shared.counters, 0, shared.counter_count);
  const char go = 1;
  char done = 0;
  ssize_t sent = 0;
  ssize_t got = 0;
  // libFuzzer's timeout alarm interrupts these calls now and then.
  while ((sent = ::write(shared.request, &go, 1)) < 0 && errno == EINTR) {
  }
  while (sent == 1 && (got = ::read(shared.reply, &done, 1)) < 0 && errno == EINTR) {
  }
  if (sent != 1 || got != 1) {
    std::fprintf(stderr, "platform_xml_fuzzer: the loading process died on this input\n");
    std::abort();
  }
  if (shared.outcome->finding[0] != '\0') {
    std::fprintf(stderr, "platform_xml_fuzzer: %s\n", shared.outcome->finding);
    std::abort();
  }
  size_t count = 0;
  AddCounters(accordion::fuzz::CoverageCounters(&count), shared.counters, count);
  return 0;
}
