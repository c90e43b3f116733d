#include "simulator/network_simulation.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

#include "common/errors.h"
#include "simulator/platform_builder.h"

namespace accordion::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Actors only send and receive: they use under 8 KiB of stack, and 256 KiB
// leaves room.
constexpr int kStackKiB = 256;

// Actor stacks are reserved address space, resident only as used. Under an
// address-space limit (ulimit -v) SimGrid would die allocating one, with a
// backtrace: say so first, in one line.
void CheckAddressSpaceForStacks(int ranks) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const double used = static_cast<double>(pages) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  const double needed = static_cast<double>(ranks) * (kStackKiB + 4) * 1024;
  const double left = static_cast<double>(limit.rlim_cur) - used;
  if (needed > left) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "%d ranks need %.1f GB of address space for SimGrid's actor stacks (%d KiB each, resident only "
                  "as used), and ulimit -v leaves %.1f GB: raise it or lift it (ulimit -v unlimited)",
                  ranks, needed / 1e9, kStackKiB, std::max(0.0, left) / 1e9);
    throw InputError(text);
  }
}

// Messages carry no data, only a size; every put hands over this address.
int g_token = 0;

// One mailbox per (receiver, sender) pair: a rank that runs ahead may post
// its next round's message before the receiver has taken this round's from
// someone else, and a shared mailbox would hand it over out of turn.
class Mailboxes {
 public:
  explicit Mailboxes(int world) : world_(world) {}
  sg4::Mailbox* Get(int to, int from) {
    const int64_t key = static_cast<int64_t>(to) * world_ + from;
    auto it = boxes_.find(key);
    if (it == boxes_.end()) {
      it = boxes_.emplace(key, sg4::Mailbox::by_name(std::to_string(to) + "<-" + std::to_string(from))).first;
    }
    return it->second;
  }

 private:
  int world_;
  std::unordered_map<int64_t, sg4::Mailbox*> boxes_;
};

// Every message of the round at once - a round's flows to one peer (NCCL's
// channels) and to several (the double tree's parent and children) share
// the links as they would - then wait for all of them.
void RunRound(const Round& round, int rank, int world, Mailboxes& boxes) {
  const Peers p = PeersOf(round, rank, world);
  if (round.flows == 1 && p.sends <= 1 && p.receives <= 1) {
    // The common case (a ring, halving-doubling) without the vector.
    sg4::CommPtr send;
    if (p.sends == 1) send = boxes.Get(p.send_to[0], rank)->put_async(&g_token, static_cast<uint64_t>(round.bytes));
    if (p.receives == 1) boxes.Get(rank, p.recv_from[0])->get<int>();
    if (send) send->wait();
    return;
  }
  std::vector<sg4::CommPtr> comms;
  comms.reserve(static_cast<size_t>((p.sends + p.receives) * round.flows));
  for (int i = 0; i < p.sends; ++i) {
    sg4::Mailbox* box = boxes.Get(p.send_to[i], rank);
    for (int f = 0; f < round.flows; ++f) comms.push_back(box->put_async(&g_token, static_cast<uint64_t>(round.bytes)));
  }
  int* received = nullptr;
  for (int i = 0; i < p.receives; ++i) {
    sg4::Mailbox* box = boxes.Get(rank, p.recv_from[i]);
    for (int f = 0; f < round.flows; ++f) comms.push_back(box->get_async<int>(&received));
  }
  for (const sg4::CommPtr& c : comms) c->wait();
}

}  // namespace

const char* ToString(Fidelity fidelity) {
  switch (fidelity) {
    case Fidelity::kAuto:
      return "auto";
    case Fidelity::kFull:
      return "full";
    case Fidelity::kRounds:
      return "rounds";
  }
  return "?";
}

std::optional<Fidelity> ParseFidelity(const std::string& name) {
  for (Fidelity f : {Fidelity::kAuto, Fidelity::kFull, Fidelity::kRounds}) {
    if (name == ToString(f)) return f;
  }
  return std::nullopt;
}

Fidelity ResolveFidelity(Fidelity fidelity, int ranks) {
  if (fidelity != Fidelity::kAuto) return fidelity;
  return ranks <= kFullFidelityMaxRanks ? Fidelity::kFull : Fidelity::kRounds;
}

NetworkSimulation::NetworkSimulation(const PlatformSpec& spec, int ranks, CollectiveOptions collective)
    : collective_(std::move(collective)) {
  collective_.Validate();
  if (sg4::Engine::has_instance()) {
    throw std::logic_error("one SimGrid engine per process: run simulations in a child process");
  }
  static char program[] = "accordion-sim";
  static char quiet[] = "--log=root.thres:critical";
  static std::string stacks = "--cfg=contexts/stack-size:" + std::to_string(kStackKiB);
  // No guard pages: SimGrid's mprotect of a page below each stack splits it
  // into two memory mappings, and some 32,700 actors (a round over 32,768
  // ranks) exhaust the kernel's default vm.max_map_count of 65,530 ("Failed
  // to protect stack").
  static char guards[] = "--cfg=contexts/guard-size:0";
  char* argv[] = {program, quiet, stacks.data(), guards, nullptr};
  int argc = 4;
  CheckAddressSpaceForStacks(ranks);
#if defined(__GLIBC__)
  // Unguarded stacks come from calloc. Above glibc's mmap threshold each is
  // a fresh mapping, zero until touched, which the kernel merges with its
  // neighbours. But glibc raises the threshold once such a block is freed,
  // and stacks then come from the heap and are cleared in full when reused:
  // 256 KiB of memory per actor, 4.3 GB at 16,384 ranks. A fixed threshold
  // keeps them mapped, and lifting glibc's cap of 65,536 mapped blocks keeps
  // 131,072 of them so.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ::mallopt(M_MMAP_MAX, 1 << 24);
#endif
  engine_ = std::make_unique<sg4::Engine>(&argc, argv);
  hosts_ = BuildPlatform(spec, ranks);
  overhead_s_ = spec.collective_overhead_s;
}

NetworkSimulation::~NetworkSimulation() = default;

IterationTiming NetworkSimulation::RunIteration(const IterationPattern& pattern, AllReduceAlgorithm algorithm,
                                                Fidelity fidelity) {
  return ResolveFidelity(fidelity, ranks()) == Fidelity::kFull ? RunFull(pattern, algorithm)
                                                               : RunByRounds(pattern, algorithm);
}

double NetworkSimulation::RunCollective(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes,
                                        Fidelity fidelity) {
  IterationPattern one;
  one.calls.push_back({op, bytes, 0.0, "collective", 0});
  return RunIteration(one, algorithm, fidelity).comm_end_s;
}

IterationTiming NetworkSimulation::RunFull(const IterationPattern& pattern, AllReduceAlgorithm algorithm) {
  const int world = ranks();
  const size_t calls = pattern.calls.size();
  std::vector<std::vector<Round>> rounds;
  for (const CollectiveCall& c : pattern.calls)
    rounds.push_back(CollectiveRounds(c.op, algorithm, c.bytes, world, collective_));
  std::vector<std::vector<double>> start(world, std::vector<double>(calls)), end = start;
  Mailboxes boxes(world);
  const double t0 = sg4::Engine::get_clock();
  for (int rank = 0; rank < world; ++rank) {
    sg4::Actor::create("rank-" + std::to_string(rank), hosts_[rank], [&, rank] {
      double host = 0;
      for (size_t i = 0; i < calls; ++i) {
        const double ready = t0 + IssueTime(pattern, i, end[rank], host);
        if (sg4::Engine::get_clock() < ready) sg4::this_actor::sleep_until(ready);
        start[rank][i] = sg4::Engine::get_clock() - t0;
        for (const Round& r : rounds[i]) RunRound(r, rank, world, boxes);
        if (overhead_s_ > 0) sg4::this_actor::sleep_for(overhead_s_);
        end[rank][i] = sg4::Engine::get_clock() - t0;
      }
    });
  }
  engine_->run();
  IterationTiming timing;
  for (size_t i = 0; i < calls; ++i) {
    CollectiveSpan span{std::numeric_limits<double>::infinity(), 0};
    for (int rank = 0; rank < world; ++rank) {
      span.start_s = std::min(span.start_s, start[rank][i]);
      span.end_s = std::max(span.end_s, end[rank][i]);
    }
    timing.spans.push_back(span);
    timing.comm_end_s = std::max(timing.comm_end_s, span.end_s);
  }
  return timing;
}

IterationTiming NetworkSimulation::RunByRounds(const IterationPattern& pattern, AllReduceAlgorithm algorithm) {
  std::vector<double> durations;
  for (const CollectiveCall& c : pattern.calls) {
    double seconds = overhead_s_;
    for (const Round& r : CollectiveRounds(c.op, algorithm, c.bytes, ranks(), collective_)) seconds += RoundSeconds(r);
    durations.push_back(seconds);
  }
  return ComposeIteration(pattern, durations);
}

double NetworkSimulation::RoundSeconds(const Round& round) {
  auto it = round_seconds_.find(round);
  if (it != round_seconds_.end()) return it->second;
  const int world = ranks();
  Mailboxes boxes(world);
  const double t0 = sg4::Engine::get_clock();
  for (int rank = 0; rank < world; ++rank) {
    const Peers p = PeersOf(round, rank, world);
    if (p.sends == 0 && p.receives == 0) continue;
    sg4::Actor::create("rank-" + std::to_string(rank), hosts_[rank],
                       [&boxes, round, rank, world] { RunRound(round, rank, world, boxes); });
  }
  engine_->run();
  const double seconds = sg4::Engine::get_clock() - t0;
  round_seconds_.emplace(round, seconds);
  return seconds;
}

}  // namespace accordion::sim
