// Fuzz target: the trace reader (traces/trace_reader.h).
//
// The input is written to a file as it is - the seeds are the committed
// sample traces, so mutations reach SQLite's page and record formats as well
// as our schema checks - and TraceReader::Open() reads it. When it opens,
// every accessor runs: the run and layer rows, the epoch, per-layer and
// Hessian tables, the three streamed per-iteration tables (whole and by one
// step's key), ForEachRow and CountRows over every schema table, and the meta
// pairs. Each accessor may refuse the file with a TraceError; anything else
// (a crash, a sanitizer report, another exception type) is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "traces/schema.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"

namespace {

template <typename Fn>
void Try(Fn&& fn) {
  try {
    fn();
  } catch (const accordion::TraceError&) {
    // The expected outcome for a damaged trace.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string path = fuzz::WriteInput("input.trace", data, size);
  Try([&] {
    std::unique_ptr<TraceReader> reader = TraceReader::Open(path);
    size_t seen = reader->run().model.size() + reader->layers().size();
    Try([&] { seen += reader->Epochs().size(); });
    Try([&] { seen += reader->EpochLayers().size(); });
    Try([&] { seen += reader->Hessian().size(); });
    Try([&] { seen += reader->NetworkProbe().size(); });
    StepKey first;
    Try([&] { reader->ForEachIteration([&](const IterationRecord& r) { first = {r.epoch, r.iteration, r.rank}; }); });
    Try([&] { reader->ForEachGradReady([&](const GradReadyRecord&) { ++seen; }); });
    Try([&] { reader->ForEachCollective([&](const CollectiveRecord&) { ++seen; }); });
    Try([&] { reader->ForEachGradReady(first, [&](const GradReadyRecord&) { ++seen; }); });
    Try([&] { reader->ForEachCollective(first, [&](const CollectiveRecord&) { ++seen; }); });
    for (const TableSpec& table : TraceTables()) {
      Try([&] { reader->ForEachRow(table.name, [&](const std::vector<Cell>& row) { seen += row.size(); }); });
      Try([&] { seen += static_cast<size_t>(reader->CountRows(table.name)); });
    }
    Try([&] { seen += reader->Meta().size(); });
    (void)seen;
  });
  fuzz::RemoveWithSidecars(path);
  return 0;
}
