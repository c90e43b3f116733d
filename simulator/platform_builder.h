// Building a PlatformSpec in SimGrid: the network model's settings, the
// built topology's zones, hosts and links (its row in topology_description.h)
// or a SimGrid XML file, the calibrated segments, and what the built
// platform's ring routes look like.
//
// Thread safety: every function here uses this process's SimGrid engine, so
// only where a NetworkSimulation lives (a child process, one thread).
#ifndef ACCORDION_SIMULATOR_PLATFORM_BUILDER_H_
#define ACCORDION_SIMULATOR_PLATFORM_BUILDER_H_

#include <string>
#include <vector>

#include "simulator/platform.h"

namespace simgrid::s4u {
class Host;
}

namespace accordion::sim {

// Instantiates `spec` for `ranks` ranks in the current SimGrid engine, which
// must not have a platform yet, and returns the hosts ranks run on, rank
// order. Throws InputError for platforms that cannot hold the ranks.
std::vector<simgrid::s4u::Host*> BuildPlatform(const PlatformSpec& spec, int ranks);

// Loads a SimGrid XML platform into the current engine and returns all its
// hosts in natural name order ("host-2" before "host-10"); throws InputError
// for a file SimGrid refuses and for links it would simulate without sense
// (bandwidth not positive, latency negative).
std::vector<simgrid::s4u::Host*> LoadXmlPlatform(const std::string& path);

// What a message between ring neighbours meets: the largest route latency
// and the smallest link bandwidth on any neighbour route (needs a built
// platform). The analytic model starts from these.
struct RouteSummary {
  double latency_s = 0;
  double bandwidth_Bps = 0;
};
RouteSummary SummariseRingRoutes(const std::vector<simgrid::s4u::Host*>& hosts);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_PLATFORM_BUILDER_H_
