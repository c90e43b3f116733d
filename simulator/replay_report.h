// A ReplayResult as a table for people, CSV (one row per schedule and
// epoch, then one total row per schedule) or JSON.
#ifndef ACCORDION_SIMULATOR_REPLAY_REPORT_H_
#define ACCORDION_SIMULATOR_REPLAY_REPORT_H_

#include <nlohmann/json_fwd.hpp>
#include <ostream>

#include "simulator/replay_engine.h"

namespace accordion::sim {

void WriteReplayTable(const ReplayResult& r, std::ostream& out);
void WriteReplayCsv(const ReplayResult& r, std::ostream& out);
nlohmann::json ReplayJson(const ReplayResult& r);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_REPLAY_REPORT_H_
