// Fuzz target: the JSON platform reader (simulator/platform.h).
//
// The input is written to a .json file and LoadPlatformFile() reads it: the
// JSON parser, PlatformFromJson()'s typed fields (unknown keys refused) and
// PlatformSpec::Validate(). A platform that loads is then used the way
// accordion-sim uses one before any simulation: described, sized for a few
// rank counts, asked for its segment factors, and written back with ToJson()
// and read again, which must give the same JSON (numbers to 1e-12: units
// are converted on the way, e.g. ns per byte to s per byte and back). InputError is the expected
// answer to a bad file; anything else is a finding. (Building the platform
// needs a SimGrid engine; the XML target does that.)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "simulator/platform.h"
#include "simulator/platform_file.h"

namespace {

bool Same(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x == y || std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !Same(it.value(), b.at(it.key()))) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Same(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string path = fuzz::WriteInput("platform.json", data, size);
  try {
    const sim::PlatformSpec spec = sim::LoadPlatformFile(path);
    for (int ranks : {1, 2, 7, 64}) {
      try {
        const int hosts = spec.HostCount(ranks);
        (void)spec.Describe(ranks);
        (void)hosts;
      } catch (const InputError&) {
      }
    }
    for (double bytes : {0.0, 1.0, 65536.0, 1e12}) {
      (void)spec.LatencyFactor(bytes);
      (void)spec.BandwidthFactor(bytes);
    }
    (void)spec.LinkBandwidth();
    const nlohmann::json written = spec.ToJson();
    const sim::PlatformSpec again = sim::PlatformFromJson(written, "round trip");
    if (!Same(again.ToJson(), written)) {
      std::fprintf(stderr, "platform changed in a JSON round trip:\n%s\n%s\n", written.dump().c_str(),
                   again.ToJson().dump().c_str());
      std::abort();
    }
  } catch (const InputError&) {
  }
  return 0;
}
