// Exporters from a trace to formats other tools read: CSV (one file per
// table) and JSON (one document). Both write the tables of schema.h in key
// order; they do not validate, so call ValidateTrace() first where it matters.
//
// Thread safety: both use `reader` throughout, so one thread per reader
// (trace_reader.h). Two ExportCsv calls into one directory at once, from
// threads or processes, overwrite each other's <table>.csv.partial files.
#ifndef ACCORDION_TRACES_TRACE_EXPORT_H_
#define ACCORDION_TRACES_TRACE_EXPORT_H_

#include <ostream>
#include <string>
#include <vector>

namespace accordion {

class TraceReader;

// Writes <dir>/<table>.csv for every table; creates `dir` if needed and
// returns the paths written. Each file is written to a temporary name and
// renamed, so no half-written CSV is left behind.
std::vector<std::string> ExportCsv(TraceReader& reader, const std::string& dir);

// Writes {"schema_version": N, "<table>": [ {column: value, ...}, ... ], ...}.
void ExportJson(TraceReader& reader, std::ostream& out);

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_EXPORT_H_
