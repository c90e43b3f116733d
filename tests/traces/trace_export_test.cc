#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/temp_dir_test.h"
#include "tests/support/synthetic_trace.h"
#include "traces/schema.h"
#include "traces/trace_export.h"
#include "traces/trace_reader.h"

namespace accordion {
namespace {

class TraceExport : public test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/t.trace";
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 3;
    o.world_size = 2;
    o.sampled_iterations = 2;
    synthetic::WriteSyntheticTrace(path_, o);
  }
  std::string path_;
};

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(TraceExport, CsvWritesOneFilePerTableWithEveryRow) {
  auto reader = TraceReader::Open(path_);
  const auto files = ExportCsv(*reader, dir_ + "/csv");
  ASSERT_EQ(files.size(), TraceTables().size());
  for (const TableSpec& t : TraceTables()) {
    const auto lines = Lines(dir_ + "/csv/" + t.name + ".csv");
    ASSERT_FALSE(lines.empty()) << t.name;
    EXPECT_EQ(static_cast<int64_t>(lines.size()) - 1, reader->CountRows(t.name)) << t.name;
    EXPECT_EQ(lines[0].substr(0, std::string(t.columns[0]).size()), t.columns[0]);
  }
  const auto epoch_layers = Lines(dir_ + "/csv/epoch_layers.csv");
  EXPECT_EQ(epoch_layers.size(), 1u + 3 * 6);
  EXPECT_EQ(epoch_layers[0], "epoch,layer_id,grad_norm,ratio,critical,level,floats_sent,grad_mean_norm,grad_std");
  // The run's config JSON has commas and quotes: it must come out quoted.
  const auto run = Lines(dir_ + "/csv/run.csv");
  ASSERT_EQ(run.size(), 2u);
  EXPECT_NE(run[1].find("\"{\"\"generator\"\": \"\"tests/support/synthetic_trace\"\"}\""), std::string::npos) << run[1];
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/csv/run.csv.partial"));
}

TEST_F(TraceExport, JsonHoldsEveryTableWithTypedValues) {
  auto reader = TraceReader::Open(path_);
  std::stringstream out;
  ExportJson(*reader, out);
  const auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["schema_version"], kTraceSchemaVersion);
  for (const TableSpec& t : TraceTables()) {
    ASSERT_TRUE(doc.contains(t.name)) << t.name;
    EXPECT_EQ(static_cast<int64_t>(doc[t.name].size()), reader->CountRows(t.name)) << t.name;
  }
  EXPECT_EQ(doc["run"][0]["model"], "mlp");
  EXPECT_TRUE(doc["epochs"][1]["lr"].is_number_float());
  EXPECT_TRUE(doc["epoch_layers"][0]["ratio"].is_null());  // epoch 0: no comparison
  EXPECT_EQ(doc["layers"][0]["shape"], "256,784");
}

}  // namespace
}  // namespace accordion
