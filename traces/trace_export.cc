#include "traces/trace_export.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/output_file.h"
#include "traces/schema.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace accordion {

namespace {

// RFC 4180 quoting, only where needed.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CellText(const Cell& cell) {
  struct Visitor {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", v);  // round-trips a double
      return buf;
    }
    std::string operator()(const std::string& v) const { return CsvField(v); }
  };
  return std::visit(Visitor{}, cell);
}

nlohmann::json CellJson(const Cell& cell) {
  struct Visitor {
    nlohmann::json operator()(std::monostate) const { return nullptr; }
    nlohmann::json operator()(int64_t v) const { return v; }
    nlohmann::json operator()(double v) const { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
    nlohmann::json operator()(const std::string& v) const { return v; }
  };
  return std::visit(Visitor{}, cell);
}

}  // namespace

std::vector<std::string> ExportCsv(TraceReader& reader, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw TraceError(TraceErrorCode::kIo, dir + ": cannot create directory: " + ec.message());
  // Every table to "<name>.csv.partial" first, then all renamed: a failure
  // (a full disk) removes the partial files and leaves the directory as it
  // was, so no mix of new and old CSVs looks like one export.
  // Each table's output is claimed (output_file.h) before any is written,
  // where the tool's checks have not claimed it already: a second export
  // into this directory is refused, not mixed with this one.
  std::vector<std::string> written, partial, paths;
  auto discard = [&paths] {
    for (const std::string& path : paths) ReleaseOutput(path);
  };
  for (const TableSpec& table : TraceTables(reader.schema_version())) {
    const std::string path = (std::filesystem::path(dir) / (std::string(table.name) + ".csv")).string();
    try {
      ClaimOutput(path, path);
    } catch (const InputError&) {
      discard();
      throw;
    }
    paths.push_back(path);
  }
  const std::vector<TableSpec>& tables = TraceTables(reader.schema_version());
  for (size_t t = 0; t < tables.size(); ++t) {
    const TableSpec& table = tables[t];
    const std::string& path = paths[t];
    const std::string tmp = path + ".partial";
    partial.push_back(tmp);
    std::ofstream out(tmp);
    if (!out) {
      const std::string why = std::strerror(errno);
      discard();
      throw TraceError(TraceErrorCode::kIo, tmp + ": cannot write: " + why);
    }
    for (size_t i = 0; i < table.columns.size(); ++i) out << (i ? "," : "") << table.columns[i];
    out << '\n';
    reader.ForEachRow(table.name, [&](const std::vector<Cell>& row) {
      for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << CellText(row[i]);
      out << '\n';
    });
    out.close();
    if (!out) {
      discard();
      throw TraceError(TraceErrorCode::kIo, tmp + ": write failed (disk full?); nothing was replaced");
    }
    written.push_back(path);
  }
  for (const std::string& path : written) {
    if (TraceBeingWritten(path)) {  // a run started on this path since the tool checked it
      discard();
      throw TraceError(TraceErrorCode::kBusy, path + " is being written by another process; not replaced");
    }
  }
  for (size_t i = 0; i < written.size(); ++i) {
    std::filesystem::rename(partial[i], written[i], ec);
    if (ec) {
      discard();
      throw TraceError(TraceErrorCode::kIo, written[i] + ": cannot rename: " + ec.message());
    }
  }
  discard();  // renamed: only the claims are given up
  return written;
}

void ExportJson(TraceReader& reader, std::ostream& out) {
  nlohmann::json doc;
  doc["schema_version"] = reader.schema_version();
  for (const TableSpec& table : TraceTables(reader.schema_version())) {
    nlohmann::json rows = nlohmann::json::array();
    reader.ForEachRow(table.name, [&](const std::vector<Cell>& row) {
      nlohmann::json obj = nlohmann::json::object();
      for (size_t i = 0; i < row.size(); ++i) obj[table.columns[i]] = CellJson(row[i]);
      rows.push_back(std::move(obj));
    });
    doc[table.name] = std::move(rows);
  }
  out << doc.dump(1) << '\n';
}

}  // namespace accordion
