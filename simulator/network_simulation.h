// NetworkSimulation: this process's SimGrid engine with a platform built on
// it, running collectives as real flows between hosts - one S4U actor per
// simulated rank, one message per send of the collective's rounds.
//
// Two fidelities:
//   full    every rank runs every round of every collective; a rank starts
//           a round once its previous send and receive are done, so ranks
//           drift apart as they would on the wire (the reference);
//   rounds  each distinct round (same peers, same message size) is simulated
//           once, all of its flows started together, and a collective takes
//           the sum of its rounds' times. A ring's 2(N-1) rounds are one
//           round simulated once: what makes 1024 ranks take seconds.
// On links that no two flows of a round share (a star, a non-blocking
// fat-tree) the two agree: a ring then runs at the pace of its slowest flow
// either way. Tests check how close they stay elsewhere.
//
// SimGrid allows one engine per process: construct one NetworkSimulation per
// process (child_process.h runs each in a fresh one).
//
// Thread safety: not thread-safe, and one per process (SimGrid's engine is
// process-wide): a process with threads of its own (the GUI) builds one only
// in a child process (child_process.h).
#ifndef ACCORDION_SIMULATOR_NETWORK_SIMULATION_H_
#define ACCORDION_SIMULATOR_NETWORK_SIMULATION_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simulator/collectives.h"
#include "simulator/iteration_pattern.h"
#include "simulator/platform.h"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace accordion::sim {

enum class Fidelity { kAuto, kFull, kRounds };
const char* ToString(Fidelity fidelity);
std::optional<Fidelity> ParseFidelity(const std::string& name);
// kAuto is full up to this many ranks, rounds beyond.
inline constexpr int kFullFidelityMaxRanks = 64;
Fidelity ResolveFidelity(Fidelity fidelity, int ranks);

class NetworkSimulation {
 public:
  // Creates the engine (quiet: SimGrid's log is set to critical only) and
  // builds `spec` for `ranks` ranks. Throws InputError for bad platforms.
  // `collective`: the settings of the algorithms that have some (NCCL's
  // chunks and channels, ranks per node).
  NetworkSimulation(const PlatformSpec& spec, int ranks, CollectiveOptions collective = CollectiveOptions());
  ~NetworkSimulation();
  NetworkSimulation(const NetworkSimulation&) = delete;
  NetworkSimulation& operator=(const NetworkSimulation&) = delete;

  int ranks() const { return static_cast<int>(hosts_.size()); }
  const std::vector<simgrid::s4u::Host*>& hosts() const { return hosts_; }

  // One iteration's collectives, every rank an actor, each collective
  // followed by the platform's per-collective overhead.
  IterationTiming RunIteration(const IterationPattern& pattern, AllReduceAlgorithm algorithm, Fidelity fidelity);
  // One collective on an idle network, from time 0; seconds until the last rank is done.
  double RunCollective(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, Fidelity fidelity);

  // Rounds simulated so far in kRounds mode (distinct rounds).
  int rounds_simulated() const { return static_cast<int>(round_seconds_.size()); }

 private:
  IterationTiming RunFull(const IterationPattern& pattern, AllReduceAlgorithm algorithm);
  IterationTiming RunByRounds(const IterationPattern& pattern, AllReduceAlgorithm algorithm);
  double RoundSeconds(const Round& round);

  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::map<Round, double> round_seconds_;
  double overhead_s_ = 0;  // PlatformSpec::collective_overhead_s
  CollectiveOptions collective_;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_NETWORK_SIMULATION_H_
