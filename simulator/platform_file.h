// Platform files: reading a PlatformSpec from our JSON form or pointing one
// at a SimGrid XML platform, and the checks that refuse a file SimGrid would
// abort on, or whose hosts cannot reach each other, before a replay meets it
// (docs/simulator.md, "Platform files").
//
// Thread safety: the functions keep no state. CheckXmlPlatform loads the file
// in a child process of its own, so it may run on any thread.
#ifndef ACCORDION_SIMULATOR_PLATFORM_FILE_H_
#define ACCORDION_SIMULATOR_PLATFORM_FILE_H_

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "simulator/platform.h"

namespace accordion::sim {

// Reads a platform file: a SimGrid XML platform (by extension .xml) or our
// JSON form. Throws InputError, one line naming the file.
PlatformSpec LoadPlatformFile(const std::string& path);
// The JSON form already parsed; `origin` starts its messages. Refuses keys
// nobody reads (typos) and validates the spec.
PlatformSpec PlatformFromJson(const nlohmann::json& j, const std::string& origin);

// Loads a SimGrid XML platform in a child process and checks that its hosts
// reach each other; throws InputError, one line naming the file, where
// SimGrid would abort or a replay would find no route. Refuses a file whose
// clusters declare more than kMaxHosts hosts before SimGrid builds one.
void CheckXmlPlatform(const std::string& path);

// Hosts the clusters of an XML platform's text declare: the sum of their
// radicals ("0-99", "1,3,5-7"), each number read as SimGrid reads it (its
// leading digits); saturates at 2^40.
int64_t XmlClusterHostsDeclared(const std::string& text);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_PLATFORM_FILE_H_
