// Schema versions: a reader reads every version up to its own, a later
// version is refused, what a version added has its documented default in
// older files, and the validator applies each version's own rules.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "tests/support/synthetic_trace.h"
#include "tests/support/temp_dir_test.h"
#include "tests/support/trace_sql.h"
#include "traces/schema.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"
#include "traces/trace_writer.h"

namespace accordion {
namespace {

std::string SamplesDir() { return std::string(ACCORDION_SOURCE_DIR) + "/traces/samples"; }

void Sql(const std::string& path, const std::string& sql) { ASSERT_NO_THROW(test_support::ExecuteSql(path, sql)); }

std::vector<NetworkProbeRecord> SmallProbe() {
  std::vector<NetworkProbeRecord> probe;
  for (int64_t bytes : {4096, 65536}) {
    for (int r = 0; r < 3; ++r) {
      probe.push_back({CollectiveOp::kAllReduce, bytes, r, 1e-4 + bytes * 1e-9});
      probe.push_back({CollectiveOp::kAllGather, bytes / 2, r, 1e-4 + bytes * 5e-10});
    }
  }
  return probe;
}

using test_support::TempDirTest;

class SchemaVersionTest : public TempDirTest {
 protected:
  // A finished synthetic trace of the current version with a probe.
  std::string WriteCurrent(const std::string& name) {
    const std::string path = Path(name);
    synthetic::SyntheticTraceOptions options;
    options.epochs = 3;
    synthetic::WriteSyntheticTrace(path, options);
    return path;
  }
};

TEST_F(SchemaVersionTest, EveryCommittedV1SampleStillReadsAndValidates) {
  int v1 = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(SamplesDir())) {
    if (entry.path().extension() != ".trace") continue;
    auto reader = TraceReader::Open(entry.path().string());
    if (reader->schema_version() != 1) continue;
    ++v1;
    const TraceSummary summary = ValidateTrace(entry.path().string());
    EXPECT_EQ(summary.schema_version, 1);
    EXPECT_GT(summary.epochs, 0) << entry.path();
    // What v2 added has its documented default in a v1 file.
    EXPECT_EQ(reader->run().writer, "") << entry.path();
    EXPECT_EQ(reader->run().ranks_per_node, 0) << entry.path();
    EXPECT_TRUE(reader->NetworkProbe().empty()) << entry.path();
    // Every table a v1 file has streams with v1's columns.
    for (const TableSpec& table : TraceTables(1)) {
      int64_t rows = 0;
      reader->ForEachRow(table.name, [&](const std::vector<Cell>& row) {
        EXPECT_EQ(row.size(), table.columns.size());
        ++rows;
      });
      EXPECT_EQ(rows, reader->CountRows(table.name)) << entry.path() << " " << table.name;
    }
  }
  EXPECT_GE(v1, 10);
}

// Pins what version 2 added, and that no version past the current one has
// tables: a later version adds its own test beside this one, and none of
// these lines changes with it (docs/ARCHITECTURE.md, "a trace column").
TEST_F(SchemaVersionTest, VersionTwoAddsTheWriterTheLayoutAndTheProbe) {
  ASSERT_GE(kTraceSchemaVersion, 2);
  const auto& v1 = TraceTables(1);
  const auto& v2 = TraceTables(2);
  EXPECT_EQ(v2.size(), v1.size() + 1);
  EXPECT_EQ(std::string(v2.back().name), "network_probe");
  auto columns = [](const std::vector<TableSpec>& tables, const std::string& name) {
    for (const TableSpec& t : tables) {
      if (name == t.name) return t.columns.size();
    }
    return size_t{0};
  };
  EXPECT_EQ(columns(v2, "run"), columns(v1, "run") + 2);
  EXPECT_EQ(columns(v2, "epochs"), columns(v1, "epochs"));
  EXPECT_THROW(TraceTables(kTraceSchemaVersion + 1), std::out_of_range);
}

TEST_F(SchemaVersionTest, ANewTraceNamesItsWriterAndKeepsItsProbe) {
  RunInfo run = synthetic::MlpRun("fashion-mnist", 60000, 256, 2);
  run.world_size = 4;
  run.ranks_per_node = 2;
  run.writer = kWriterTrainer;
  const std::string path = Path("probe.trace");
  {
    auto writer = TraceWriter::Create(path, run, synthetic::MlpLayers());
    writer->WriteNetworkProbe(SmallProbe());
    EXPECT_THROW(writer->WriteNetworkProbe(SmallProbe()), TraceError);  // once per trace
  }
  auto reader = TraceReader::Open(path);
  EXPECT_EQ(reader->schema_version(), kTraceSchemaVersion);
  EXPECT_EQ(reader->run().writer, kWriterTrainer);
  EXPECT_EQ(reader->run().ranks_per_node, 2);
  const std::vector<NetworkProbeRecord> probe = reader->NetworkProbe();
  ASSERT_EQ(probe.size(), SmallProbe().size());
  // Ordered by (op's name, bytes, repeat): the all-gathers first.
  EXPECT_EQ(probe.front().op, CollectiveOp::kAllGather);
  EXPECT_EQ(probe.front().bytes, 2048);
  EXPECT_DOUBLE_EQ(probe.front().seconds, 1e-4 + 4096 * 5e-10);
  EXPECT_EQ(probe.back().op, CollectiveOp::kAllReduce);
  EXPECT_EQ(probe.back().bytes, 65536);
  EXPECT_EQ(probe.back().repeat, 2);
}

TEST_F(SchemaVersionTest, AWriterThatDoesNotNameItselfIsTheLibrary) {
  const std::string path = Path("unnamed.trace");
  RunInfo run = synthetic::MlpRun("fashion-mnist", 60000, 256, 2);
  run.writer.clear();
  TraceWriter::Create(path, run, synthetic::MlpLayers());
  EXPECT_EQ(TraceReader::Open(path)->run().writer, kWriterLibrary);
}

TEST_F(SchemaVersionTest, ALayoutOfMoreRanksPerHostThanRanksIsRefused) {
  RunInfo run = synthetic::MlpRun("fashion-mnist", 60000, 256, 2);
  run.world_size = 2;
  run.ranks_per_node = 3;
  EXPECT_THROW(TraceWriter::Create(Path("bad.trace"), run, synthetic::MlpLayers()), TraceError);
  EXPECT_FALSE(std::filesystem::exists(Path("bad.trace")));
}

TEST_F(SchemaVersionTest, ANewerVersionIsRefusedInOneLine) {
  const std::string path = WriteCurrent("newer.trace");
  Sql(path, "UPDATE meta SET value='" + std::to_string(kTraceSchemaVersion + 1) + "' WHERE key='schema_version'");
  try {
    TraceReader::Open(path);
    FAIL() << "a file of a newer version was read";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.code(), TraceErrorCode::kNewerVersion);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

// A file of v1, made from a v2 one by taking out what v2 added: it reads,
// validates and resumes as v1 (a resumed run goes on in its file's version).
TEST_F(SchemaVersionTest, AVersionOneFileReadsValidatesAndResumesAsVersionOne) {
  const std::string path = WriteCurrent("old.trace");
  Sql(path,
      "DROP TABLE network_probe; ALTER TABLE run DROP COLUMN writer; ALTER TABLE run DROP COLUMN ranks_per_node; "
      "UPDATE meta SET value='1' WHERE key='schema_version'");
  const TraceSummary summary = ValidateTrace(path);
  EXPECT_EQ(summary.schema_version, 1);
  EXPECT_EQ(summary.epochs, 3);
  {
    auto writer = TraceWriter::Resume(path, 2);
    EXPECT_THROW(writer->WriteNetworkProbe(SmallProbe()), TraceError);  // v1 has no probe table
  }
  auto reader = TraceReader::Open(path);
  EXPECT_EQ(reader->schema_version(), 1);
  EXPECT_EQ(reader->run().writer, "");
  EXPECT_EQ(reader->Epochs().size(), 2u);
}

TEST_F(SchemaVersionTest, TheValidatorAppliesVersionTwosRules) {
  const std::string empty_writer = WriteCurrent("empty-writer.trace");
  Sql(empty_writer, "UPDATE run SET writer=''");
  EXPECT_THROW(ValidateTrace(empty_writer), TraceError);
  // The same value is v1's default, and a v1 file passes.
  Sql(empty_writer,
      "DROP TABLE network_probe; ALTER TABLE run DROP COLUMN writer; ALTER TABLE run DROP COLUMN ranks_per_node; "
      "UPDATE meta SET value='1' WHERE key='schema_version'");
  EXPECT_NO_THROW(ValidateTrace(empty_writer));

  const std::string gap = WriteCurrent("probe-gap.trace");
  Sql(gap,
      "INSERT INTO network_probe (op, bytes, repeat, seconds) VALUES ('allreduce', 4096, 0, 1e-4), "
      "('allreduce', 4096, 2, 1e-4)");
  try {
    ValidateTrace(gap);
    FAIL() << "a probe with repeat 1 missing validated";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("repeat 2"), std::string::npos) << e.what();
  }
  const std::string negative = WriteCurrent("probe-negative.trace");
  Sql(negative, "INSERT INTO network_probe (op, bytes, repeat, seconds) VALUES ('allreduce', 4096, 0, -1)");
  EXPECT_THROW(ValidateTrace(negative), TraceError);
}

// Version 3: a loss or accuracy the run did not record (NaN in the record,
// the Python hook given none) is NULL in the file and NaN read back; v1 and
// v2 keep declaring those columns NOT NULL, and a run resumed in such a file
// may not leave one out.
TEST_F(SchemaVersionTest, VersionThreeStoresAMetricNotRecordedAsNull) {
  ASSERT_GE(kTraceSchemaVersion, 3);
  // The DDL line of `column` in schema `version` (the epochs table's: no
  // other table has these names).
  auto line = [](int version, const std::string& column) {
    const std::string& sql = TraceSchemaSql(version);
    const size_t at = sql.find("\n  " + column + " ");
    return at == std::string::npos ? std::string() : sql.substr(at + 1, sql.find('\n', at + 1) - at - 1);
  };
  for (const std::string column : {"train_loss", "train_acc", "test_loss", "test_acc"}) {
    for (int version : {1, 2}) {
      EXPECT_NE(line(version, column).find("REAL    NOT NULL"), std::string::npos) << version << ": " << column;
    }
    EXPECT_NE(line(3, column).find("REAL"), std::string::npos) << line(3, column);
    EXPECT_EQ(line(3, column).find("NOT NULL"), std::string::npos) << line(3, column);
  }
  EXPECT_NE(line(3, "compute_s").find("NOT NULL"), std::string::npos);  // only the four

  const std::string path = Path("hook.trace");
  synthetic::SyntheticTraceOptions options;
  options.model = "mlp";
  options.epochs = 3;
  options.writer = kWriterPythonHook;
  options.record_test_metrics = false;
  synthetic::WriteSyntheticTrace(path, options);
  EXPECT_EQ(test_support::QueryInt(path, "SELECT COUNT(*) FROM epochs WHERE test_acc IS NULL AND test_loss IS NULL"),
            3);
  EXPECT_EQ(test_support::QueryInt(path, "SELECT COUNT(*) FROM epochs WHERE train_acc IS NULL"), 0);
  const TraceSummary summary = ValidateTrace(path);
  EXPECT_EQ(summary.epochs, 3);
  {
    auto reader = TraceReader::Open(path);
    for (const EpochRecord& e : reader->Epochs()) {
      EXPECT_TRUE(std::isnan(e.test_acc) && std::isnan(e.test_loss)) << "epoch " << e.epoch;
      EXPECT_TRUE(Recorded(e.train_acc) && Recorded(e.train_loss)) << "epoch " << e.epoch;
    }
  }
  // A NULL where v2 requires a value is refused by the validator, and a run
  // resumed in a v2 file may not write one.
  Sql(path, "UPDATE meta SET value='2' WHERE key='schema_version'");
  try {
    ValidateTrace(path);
    FAIL() << "a v2 file without test accuracy validated";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.code(), TraceErrorCode::kInvalidValue);
    EXPECT_NE(std::string(e.what()).find("schema v2"), std::string::npos) << e.what();
  }
  Sql(path, "UPDATE epochs SET test_acc = 0.5, test_loss = 1");
  EXPECT_NO_THROW(ValidateTrace(path));
  EpochData data;  // epoch 2 again, as read before the resume takes it out
  {
    auto reader = TraceReader::Open(path);
    data.epoch = reader->Epochs()[2];
    for (const EpochLayerRecord& r : reader->EpochLayers()) {
      if (r.epoch == 2) data.layers.push_back(r);
    }
  }
  auto writer = TraceWriter::Resume(path, 2);
  data.epoch.test_acc = kNotRecorded;
  try {
    writer->WriteEpoch(data);
    FAIL() << "a v2 file took a metric not recorded";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.code(), TraceErrorCode::kInconsistent);
  }
  data.epoch.test_acc = 0.5;
  EXPECT_NO_THROW(writer->WriteEpoch(data));
}

// Infinity is still no value: only NaN means "not recorded".
TEST_F(SchemaVersionTest, AnInfiniteMetricIsStillRefused) {
  RunInfo run = synthetic::MlpRun("fashion-mnist", 600, 60, 2);
  const std::string path = Path("inf.trace");
  auto writer = TraceWriter::Create(path, run, synthetic::MlpLayers());
  EpochData data;
  data.epoch.epoch = 0;
  data.epoch.batch_size = 60;
  data.epoch.iterations = 10;
  data.epoch.test_loss = std::numeric_limits<double>::infinity();
  try {
    writer->WriteEpoch(data);
    FAIL() << "an infinite test loss was written";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.code(), TraceErrorCode::kInvalidValue);
  }
}

// A synthetic 3-epoch trace by `writer`, turned into what an earlier release
// wrote when its loop stopped after 2 epochs: a v3 file marked complete.
std::string EarlyStoppedVersionThree(const std::string& path, const std::string& writer) {
  synthetic::SyntheticTraceOptions options;
  options.model = "mlp";
  options.epochs = 3;
  options.writer = writer;
  synthetic::WriteSyntheticTrace(path, options);
  std::string sql = "UPDATE meta SET value='3' WHERE key='schema_version'; UPDATE run SET status='complete';";
  for (const TableSpec& table : TraceTables()) {
    for (const char* column : table.columns) {
      if (std::string(column) == "epoch") sql += " DELETE FROM " + std::string(table.name) + " WHERE epoch = 2;";
    }
  }
  test_support::ExecuteSql(path, sql);
  return path;
}

// The third reliability probe's open case: the Python hook of schema v3 and
// older marked a run it closed before its planned epochs "complete". Every
// tool reads it as stopped early, and says so; accordion-train never wrote
// such a file, so one of its is still refused.
TEST_F(SchemaVersionTest, AnEarlyStoppedHookRunMarkedCompleteByAnOlderReleaseReadsAsStoppedEarly) {
  const std::string hook = EarlyStoppedVersionThree(Path("hook.trace"), kWriterPythonHook);
  const TraceSummary summary = ValidateTrace(hook);
  EXPECT_EQ(summary.epochs, 2);
  bool said = false;
  for (const std::string& w : summary.warnings) said = said || w.find("read as stopped early") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(TraceReader::Open(hook)->run().status, RunStatus::kStoppedEarly);

  const std::string trainer = EarlyStoppedVersionThree(Path("trainer.trace"), kWriterTrainer);
  try {
    ValidateTrace(trainer);
    FAIL() << "accordion-train's short 'complete' run validated";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("marked complete with 2 of 3 epochs"), std::string::npos) << e.what();
  }
}

// AdaQS and Smith et al. came with schema v4: a v3 file that names them is
// refused by every reader.
TEST_F(SchemaVersionTest, AVersionThreeFileCannotCarryAVersionFourPolicy) {
  const std::string path = EarlyStoppedVersionThree(Path("adaqs.trace"), kWriterPythonHook);
  test_support::ExecuteSql(path, "UPDATE run SET policy='adaqs'");
  try {
    TraceReader::Open(path);
    FAIL() << "a v3 file with policy adaqs was read";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.code(), TraceErrorCode::kInconsistent);
    EXPECT_NE(std::string(e.what()).find("policy adaqs is schema v4's"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace accordion
