// Hostile and broken trace files: each must give its own specific error,
// from Open() or from ValidateTrace(), and none may crash the reader.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "tests/support/temp_dir_test.h"
#include "tests/support/trace_sql.h"
#include "tests/support/synthetic_trace.h"
#include "traces/schema.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

namespace accordion {
namespace {

void Sql(const std::string& path, const std::string& sql) { ASSERT_NO_THROW(test_support::ExecuteSql(path, sql)); }

// Rebuilds `table` without constraints so later updates can store what a
// well-behaved writer never would (NULL, text in numbers, duplicates).
std::string Unconstrain(const std::string& table) {
  std::string columns;
  for (const TableSpec& spec : TraceTables()) {
    if (table != spec.name) continue;
    for (const char* c : spec.columns) columns += (columns.empty() ? "" : ", ") + std::string(c);
  }
  return "ALTER TABLE " + table + " RENAME TO old_" + table + "; CREATE TABLE " + table + " (" + columns +
         "); INSERT INTO " + table + " SELECT * FROM old_" + table + "; DROP TABLE old_" + table + ";";
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void Truncate(const std::string& path, double keep) {
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, static_cast<uintmax_t>(static_cast<double>(size) * keep));
}

void Poke(const std::string& path, std::streamoff offset, const std::string& bytes) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(offset);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct Case {
  std::string name;
  TraceErrorCode code;
  std::function<void(const std::string& path)> damage;
  std::string message;  // a fragment the one-line message must contain
};

// gtest prints parameters in failure messages; the name says it all.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases() {
  return {
      {"missing_file", TraceErrorCode::kNotFound, [](const std::string& p) { std::filesystem::remove(p); },
       "no such file"},
      {"empty_file", TraceErrorCode::kNotATrace, [](const std::string& p) { WriteBytes(p, ""); }, "empty file"},
      {"text_file", TraceErrorCode::kNotSqlite, [](const std::string& p) { WriteBytes(p, "epoch,lr\n0,0.1\n"); },
       "not an SQLite file"},
      {"truncated_half", TraceErrorCode::kTruncated, [](const std::string& p) { Truncate(p, 0.5); }, "truncated"},
      {"truncated_in_header", TraceErrorCode::kTruncated,
       [](const std::string& p) { std::filesystem::resize_file(p, 60); }, "header"},
      {"corrupt_schema_page", TraceErrorCode::kCorrupt,
       [](const std::string& p) { Poke(p, 100, std::string(400, '\x7f')); }, ""},
      {"unrelated_sqlite_db", TraceErrorCode::kNotATrace,
       [](const std::string& p) {
         std::filesystem::remove(p);
         Sql(p, "CREATE TABLE customers (id INTEGER, name TEXT)");
       },
       "not an Accordion trace"},
      {"foreign_application_id", TraceErrorCode::kNotATrace,
       [](const std::string& p) { Sql(p, "PRAGMA application_id = 1234"); }, "another application"},
      {"newer_schema_version", TraceErrorCode::kNewerVersion,
       [](const std::string& p) { Sql(p, "UPDATE meta SET value='99' WHERE key='schema_version'"); }, "newer"},
      {"garbage_schema_version", TraceErrorCode::kUnknownVersion,
       [](const std::string& p) { Sql(p, "UPDATE meta SET value='v1.x' WHERE key='schema_version'"); },
       "not a version number"},
      {"no_schema_version", TraceErrorCode::kUnknownVersion,
       [](const std::string& p) { Sql(p, "DELETE FROM meta WHERE key='schema_version'"); }, "no schema_version"},
      // A meta table without its primary key: the first row used to win.
      {"duplicate_schema_version", TraceErrorCode::kUnknownVersion,
       [](const std::string& p) {
         Sql(p,
             "ALTER TABLE meta RENAME TO old_meta; CREATE TABLE meta (key, value); INSERT INTO meta SELECT key, "
             "value FROM old_meta; DROP TABLE old_meta; INSERT INTO meta VALUES ('schema_version', '1')");
       },
       "meta holds schema_version more than once"},
      {"missing_table", TraceErrorCode::kMissingTable, [](const std::string& p) { Sql(p, "DROP TABLE hessian"); },
       "'hessian'"},
      {"missing_column", TraceErrorCode::kMissingColumn,
       [](const std::string& p) { Sql(p, "ALTER TABLE epochs DROP COLUMN test_acc"); }, "'test_acc'"},
      {"empty_run_table", TraceErrorCode::kMissingRow, [](const std::string& p) { Sql(p, "DELETE FROM run"); },
       "run table is empty"},
      {"nan_grad_norm", TraceErrorCode::kInvalidValue,
       [](const std::string& p) {
         Sql(p, Unconstrain("epoch_layers") + "UPDATE epoch_layers SET grad_norm=NULL WHERE epoch=1 AND layer_id=2");
       },
       "grad_norm is NULL or NaN"},
      {"negative_grad_norm", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE epoch_layers SET grad_norm=-1 WHERE epoch=2"); },
       "grad_norm is negative"},
      {"infinite_lr", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE epochs SET lr=9e999 WHERE epoch=1"); }, "lr is not finite"},
      {"text_in_number", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, Unconstrain("epochs") + "UPDATE epochs SET total_s='fast' WHERE epoch=0"); },
       "total_s is not a number"},
      {"accuracy_above_one", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE epochs SET test_acc=93.5 WHERE epoch=2"); }, "test_acc is above 1"},
      {"unknown_scheme", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE run SET scheme='zip'"); }, "'zip' is unknown"},
      {"zero_world_size", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE run SET world_size=0"); }, "world_size"},
      {"unknown_collective_op", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE collectives SET op='gossip' WHERE epoch=1"); }, "'gossip'"},
      {"layer_out_of_range", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE epoch_layers SET layer_id=99 WHERE epoch=1 AND layer_id=5"); },
       "layer_id 99"},
      {"epoch_beyond_plan", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE hessian SET epoch=500 WHERE epoch=0"); }, "epochs_planned"},
      {"rank_beyond_world", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE iterations SET rank=7 WHERE epoch=1 AND rank=1"); }, "rank 7"},
      {"iteration_beyond_epoch", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE iterations SET iteration=100000 WHERE epoch=0 AND iteration=0"); },
       "iterations"},
      {"rows_for_unrecorded_epoch", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE run SET status='running'; DELETE FROM epochs WHERE epoch=3"); },
       "epochs table ends at 2"},
      {"missing_epoch", TraceErrorCode::kInconsistent,
       [](const std::string& p) {
         Sql(p,
             "UPDATE run SET status='running'; DELETE FROM epochs WHERE epoch=1;"
             "DELETE FROM epoch_layers WHERE epoch=1");
       },
       "epoch 1 is missing"},
      {"missing_layer_row", TraceErrorCode::kInconsistent,
       [](const std::string& p) { Sql(p, "DELETE FROM epoch_layers WHERE epoch=2 AND layer_id=3"); },
       "5 rows for 6 layers"},
      {"numel_not_shape", TraceErrorCode::kInconsistent,
       [](const std::string& p) { Sql(p, "UPDATE layers SET numel=12 WHERE layer_id=0"); }, "not the product of shape"},
      {"complete_but_short", TraceErrorCode::kInconsistent,
       [](const std::string& p) {
         Sql(p,
             "DELETE FROM epochs WHERE epoch=3; DELETE FROM epoch_layers WHERE epoch=3;"
             "DELETE FROM iterations WHERE epoch=3; DELETE FROM grad_ready WHERE epoch=3;"
             "DELETE FROM collectives WHERE epoch=3; DELETE FROM hessian WHERE epoch=3");
       },
       "marked complete with 3 of 4"},
      {"stopped_early_but_whole", TraceErrorCode::kInconsistent,
       [](const std::string& p) { Sql(p, "UPDATE run SET status='stopped_early'"); },
       "marked stopped early with 4 of 4"},
      {"probe_timed_nothing", TraceErrorCode::kInconsistent,
       [](const std::string& p) {
         Sql(p,
             "DELETE FROM network_probe; INSERT INTO network_probe VALUES ('allreduce', 4096, 0, 0), "
             "('allreduce', 16384, 0, 0)");
       },
       "no time is positive"},
      {"floats_do_not_add_up", TraceErrorCode::kInconsistent,
       [](const std::string& p) { Sql(p, "UPDATE epochs SET floats_sent=floats_sent*2 WHERE epoch=1"); },
       "not the sum"},
      // What a hook that handed back zeros recorded: epochs without a step.
      {"epoch_without_a_step", TraceErrorCode::kInconsistent,
       [](const std::string& p) {
         Sql(p,
             "DELETE FROM iterations WHERE epoch=1; DELETE FROM collectives WHERE epoch=1; "
             "UPDATE epochs SET iterations=0, floats_sent=0 WHERE epoch=1; "
             "UPDATE epoch_layers SET floats_sent=0 WHERE epoch=1");
       },
       "records no step"},
      {"level_not_of_the_run", TraceErrorCode::kInconsistent,
       [](const std::string& p) { Sql(p, "UPDATE epoch_layers SET level=3 WHERE epoch=1"); },
       "neither level_low nor level_high"},
      {"layer_ids_with_gap", TraceErrorCode::kInconsistent,
       [](const std::string& p) { Sql(p, "UPDATE layers SET layer_id=40 WHERE layer_id=5"); }, "without gaps"},
      {"bad_shape_text", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE layers SET shape='256;784' WHERE layer_id=0"); }, "comma-separated"},
      // Beyond the plausibility limits (record_checks.h): what a tool would
      // size memory or a simulation by.
      {"implausible_world_size", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE run SET world_size=100000000"); },
       "world_size 100000000 is above the limit of 131072"},
      {"implausible_grad_ready_offset", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE grad_ready SET offset_s=1e300 WHERE epoch=1"); },
       "offset_s 1e+300 s is above the limit of"},
      {"implausible_collective_duration", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE collectives SET duration_s=1e12 WHERE epoch=1"); },
       "duration_s 1e+12 s is above the limit of"},
      {"implausible_numel", TraceErrorCode::kOutOfRange,
       [](const std::string& p) {
         Sql(p, "UPDATE layers SET numel=2000000000000, shape='2000000,1000000' WHERE layer_id=0");
       },
       "numel 2000000000000 is above the limit"},
      {"implausible_iterations", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE epochs SET iterations=1000000000 WHERE epoch=1"); },
       "iterations 1000000000 is above the limit of 100000000"},
      {"implausible_bytes", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE collectives SET bytes=9000000000000000000 WHERE epoch=1"); },
       "bytes 9000000000000000000 is above the limit"},
      {"oversized_config_json", TraceErrorCode::kOutOfRange,
       [](const std::string& p) { Sql(p, "UPDATE run SET config_json='\"' || hex(zeroblob(600000)) || '\"'"); },
       "config_json bytes 1200002 is above the limit of 1048576"},
      // Was read as it was: the report and the GUI show a run's configuration from it.
      {"invalid_config_json", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE run SET config_json='{\"epochs\": 3,'"); },
       "run: config_json is not a JSON object"},
      {"config_json_not_an_object", TraceErrorCode::kInvalidValue,
       [](const std::string& p) { Sql(p, "UPDATE run SET config_json='[1, 2]'"); }, "config_json is not a JSON object"},
  };
}

class MalformedTrace : public test_support::TempDirTest, public ::testing::WithParamInterface<Case> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = dir_ + "/t.trace";
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 4;
    o.world_size = 2;
    o.decay_epochs = {};
    synthetic::WriteSyntheticTrace(path_, o);
  }
  std::string path_;
};

TEST_P(MalformedTrace, GivesItsSpecificError) {
  const Case& c = GetParam();
  ASSERT_NO_THROW(ValidateTrace(path_)) << "the undamaged trace must validate";
  c.damage(path_);
  try {
    ValidateTrace(path_);
    FAIL() << "accepted a damaged trace";
  } catch (const TraceError& e) {
    EXPECT_EQ(ToString(e.code()), std::string(ToString(c.code))) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find(c.message), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedTrace, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

// Random byte damage anywhere in the file: the reader may accept or refuse,
// but it must refuse with a TraceError, never crash or throw anything else.
using MalformedTraceFuzz = test_support::TempDirTest;

TEST_F(MalformedTraceFuzz, RandomByteDamageNeverCrashesTheReader) {
  const std::string clean = Path("clean.trace"), path = Path("t.trace");
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 6;
  synthetic::WriteSyntheticTrace(clean, o);
  const auto size = static_cast<int64_t>(std::filesystem::file_size(clean));
  std::mt19937_64 rng(42);
  int refused = 0;
  for (int round = 0; round < 150; ++round) {
    std::filesystem::copy_file(clean, path, std::filesystem::copy_options::overwrite_existing);
    std::uniform_int_distribution<int64_t> where(0, size - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    const int flips = 1 + round % 16;
    for (int i = 0; i < flips; ++i) Poke(path, where(rng), std::string(1, static_cast<char>(byte(rng))));
    try {
      ValidateTrace(path);
    } catch (const TraceError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace accordion
