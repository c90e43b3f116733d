// The sample platform files beside this example, as the simulator reads
// them: what each describes and what a message between ring neighbours
// meets on it (built in SimGrid, one child process per platform).
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "simulator/communication_model.h"
#include "simulator/platform_file.h"
#include "common/number_format.h"

using namespace accordion::sim;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: platform_files DIR\n");
    return 2;
  }
  // Relative names, sorted: the output must not depend on where the checkout is.
  std::filesystem::current_path(argv[1]);
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(".")) files.insert(entry.path().filename().string());
  const int ranks = 16;
  for (const std::string& name : files) {
    const PlatformSpec spec = LoadPlatformFile(name);
    // Building the platform also checks that it holds the ranks.
    const PlatformProbe probe = ProbePlatform(spec, ranks);
    std::printf("%s\n  %s\n  ring neighbours: %.1f µs, %.1f Gb/s\n", name.c_str(), spec.Describe(ranks).c_str(),
                probe.ring_route.latency_s * 1e6, accordion::GbpsFromBytesPerSecond(probe.ring_route.bandwidth_Bps));
  }
  return 0;
}
