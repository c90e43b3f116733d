// The tables of the trace schema, each described once (table_description.h).
// Private to traces/: schema.cc derives the DDL and TableSpecs from them, the
// writer its INSERTs, the reader its SELECTs and row reads, record_checks.cc
// the per-column checks.
//
// Thread-safe: each table is a constant built once, on first use (a
// function-local static), and never changed.
#ifndef ACCORDION_TRACES_TRACE_TABLES_H_
#define ACCORDION_TRACES_TRACE_TABLES_H_

#include <string>
#include <vector>

#include "traces/records.h"
#include "traces/table_description.h"

namespace accordion {

// One row of the meta table.
struct MetaEntry {
  std::string key;
  std::string value;
};

const Table<MetaEntry>& MetaTable();
// The single row of the run (id 1). RunInfo::run_id lives in meta, not here.
const Table<RunInfo>& RunTable();
const Table<LayerInfo>& LayersTable();
const Table<EpochRecord>& EpochsTable();
const Table<EpochLayerRecord>& EpochLayersTable();
const Table<IterationRecord>& IterationsTable();
const Table<GradReadyRecord>& GradReadyTable();
const Table<CollectiveRecord>& CollectivesTable();
const Table<HessianRecord>& HessianTable();
const Table<NetworkProbeRecord>& NetworkProbeTable();  // schema v2
const Table<ErrorProfileRecord>& ErrorProfileTable();  // schema v4

// Every table above, in creation order.
const std::vector<const TableLayout*>& TraceTableLayouts();

}  // namespace accordion

#endif  // ACCORDION_TRACES_TRACE_TABLES_H_
