// The table descriptions (traces/trace_tables.cc) and what is derived from
// them: the schema must be the one every existing trace has, the derived
// writes and reads must reproduce the checked-in traces row for row, and the
// per-column checks must refuse what they say they refuse.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

#include "tests/support/temp_dir_test.h"
#include "tests/support/synthetic_trace.h"
#include "traces/schema.h"
#include "traces/table_description.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"
#include "traces/trace_writer.h"

namespace accordion {
namespace {

const std::string kSamples = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples";

// Every row of `sql` as text, columns joined by '|' (NULL as "<null>").
std::vector<std::string> Query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  std::vector<std::string> rows;
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
      row += (i ? "|" : "") + std::string(text ? text : "<null>");
    }
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

using TraceTablesTest = test_support::TempDirTest;

// The committed samples are schema v1: version 1's DDL must be theirs to
// the letter, and a fresh trace's must be the current version's.
TEST_F(TraceTablesTest, EachVersionsSchemaIsExactlyTheOneItsTracesHave) {
  const std::string fresh = dir_ + "/fresh.trace";
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 2;
  synthetic::WriteSyntheticTrace(fresh, o);
  const std::string sql = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name";
  ASSERT_EQ(Query(kSamples + "/fmnist-mlp-dense.trace", sql).size(), 10u);  // nine tables and meta's key index
  ASSERT_EQ(Query(fresh, sql).size(), 12u);  // and v2's network_probe, v4's error_profile
  // The DDL text itself, not just what SQLite keeps of it.
  const std::string ddl =
      "SELECT group_concat(sql, ';\n') || ';\n' FROM "
      "(SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid)";
  const auto v1 = Query(kSamples + "/fmnist-mlp-dense.trace", ddl);
  ASSERT_EQ(v1.size(), 1u);
  EXPECT_EQ("\n" + v1[0], TraceSchemaSql(1));
  const auto current = Query(fresh, ddl);
  ASSERT_EQ(current.size(), 1u);
  EXPECT_EQ("\n" + current[0], TraceSchemaSql());
  EXPECT_NE(TraceSchemaSql(), TraceSchemaSql(1));
}

// Reads `path` with TraceReader and writes it again with TraceWriter: every
// derived SELECT, row read, check, INSERT and bind takes part.
void Rewrite(const std::string& path, const std::string& copy) {
  auto reader = TraceReader::Open(path);
  std::map<int, EpochData> epochs;
  for (const EpochRecord& e : reader->Epochs()) epochs[e.epoch].epoch = e;
  for (const EpochLayerRecord& r : reader->EpochLayers()) epochs[r.epoch].layers.push_back(r);
  reader->ForEachIteration([&](const IterationRecord& r) { epochs[r.epoch].iterations.push_back(r); });
  reader->ForEachGradReady([&](const GradReadyRecord& r) { epochs[r.epoch].grad_ready.push_back(r); });
  reader->ForEachCollective([&](const CollectiveRecord& r) { epochs[r.epoch].collectives.push_back(r); });
  for (const HessianRecord& r : reader->Hessian()) epochs[r.epoch].hessian.push_back(r);
  for (const ErrorProfileRecord& r : reader->ErrorProfile()) epochs[r.epoch].error_profile.push_back(r);
  auto writer = TraceWriter::Create(copy, reader->run(), reader->layers());
  const std::vector<NetworkProbeRecord> probe = reader->NetworkProbe();
  if (!probe.empty()) writer->WriteNetworkProbe(probe);
  for (const auto& [epoch, data] : epochs) writer->WriteEpoch(data);
  writer->Finish(reader->run().status);
}

TEST_F(TraceTablesTest, EverySampleTraceValidatesAndIsWrittenBackRowForRow) {
  int samples = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kSamples)) {
    if (entry.path().extension() != ".trace") continue;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    ++samples;
    ASSERT_NO_THROW(ValidateTrace(path));
    const std::string copy = dir_ + "/copy.trace";
    std::filesystem::remove(copy);
    Rewrite(path, copy);
    // The copy is of the current version; what the sample's version has must match.
    for (const TableSpec& table : TraceTables(TraceReader::Open(path)->schema_version())) {
      std::string columns;
      for (const char* c : table.columns) {
        // Only the finishing time and meta's facts about the file itself differ.
        if (std::string(c) == "finished_utc") continue;
        columns += (columns.empty() ? "" : ", ") + std::string("quote(") + c + ")";
      }
      std::string sql = "SELECT " + columns + " FROM " + table.name;
      // The copy is of the current version (checked below), the sample of its own.
      if (std::string(table.name) == "meta") sql += " WHERE key IN ('run_id')";
      sql += " ORDER BY " + std::string(table.key);
      EXPECT_EQ(Query(copy, sql), Query(path, sql)) << table.name;
    }
    EXPECT_EQ(TraceReader::Open(copy)->schema_version(), kTraceSchemaVersion);
  }
  EXPECT_GE(samples, 10);
}

// A record of every column type the descriptions know, for the derived SQL.
struct Everything {
  int id = 0;
  int64_t big = 0;
  double real = 0;
  bool flag = false;
  std::string text;
  std::optional<double> maybe;
  Scheme scheme = Scheme::kDense;
  std::vector<int64_t> shape;
  std::string until;
};

const Table<Everything>& EverythingTable() {
  static const Table<Everything> table(
      "everything", {"id", "text"},
      {Column("id", &Everything::id), Column("big", &Everything::big, ValueCheck::kAtLeastOne),
       Column("real", &Everything::real, ValueCheck::kFraction), Column("flag", &Everything::flag),
       Column("text", &Everything::text, ValueCheck::kNotEmpty), Column("maybe", &Everything::maybe),
       Column("scheme", &Everything::scheme), Column("shape", &Everything::shape),
       NullWhenEmptyColumn("until", &Everything::until)});
  return table;
}

TEST(TableDescription, DerivesTheDdlInsertAndSelectFromTheColumns) {
  const Table<Everything>& t = EverythingTable();
  EXPECT_EQ(CreateTableSql(t.layout()),
            "CREATE TABLE everything (\n"
            "  id     INTEGER NOT NULL,\n"
            "  big    INTEGER NOT NULL,\n"
            "  real   REAL    NOT NULL,\n"
            "  flag   INTEGER NOT NULL,\n"
            "  text   TEXT    NOT NULL,\n"
            "  maybe  REAL,\n"
            "  scheme TEXT    NOT NULL,\n"
            "  shape  TEXT    NOT NULL,\n"
            "  until  TEXT,\n"
            "  PRIMARY KEY (id, text)\n"
            ") WITHOUT ROWID");
  EXPECT_EQ(t.InsertSql(),
            "INSERT INTO everything (id, big, real, flag, text, maybe, scheme, shape, until) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  EXPECT_EQ(t.SelectSql(" WHERE id = ?1"),
            "SELECT id, big, real, flag, text, maybe, scheme, shape, until FROM everything WHERE "
            "id = ?1 ORDER BY id, text");
  const TableLayout one_row{"single", {{"id", "INTEGER", false}, {"name", "TEXT", false}}, {"id"}, "id = 1"};
  EXPECT_EQ(CreateTableSql(one_row),
            "CREATE TABLE single (\n"
            "  id   INTEGER PRIMARY KEY CHECK (id = 1),\n"
            "  name TEXT    NOT NULL\n"
            ")");
}

// A column added by a later version: a file of an earlier version has no
// such column, so its SQL leaves it out and its field keeps its default.
struct Grown {
  int id = 0;
  double old_value = 0;
  std::string added = "default";
};

TEST(TableDescription, AColumnSinceALaterVersionIsLeftOutOfAnEarlierOnesSql) {
  static const Table<Grown> t(
      "grown", {"id"},
      {Column("id", &Grown::id), Column("old_value", &Grown::old_value), Since(2, Column("added", &Grown::added))});
  EXPECT_EQ(t.InsertSql(1), "INSERT INTO grown (id, old_value) VALUES (?1, ?2)");
  EXPECT_EQ(t.InsertSql(2), "INSERT INTO grown (id, old_value, added) VALUES (?1, ?2, ?3)");
  EXPECT_EQ(t.SelectSql("", 1), "SELECT id, old_value FROM grown ORDER BY id");
  EXPECT_EQ(CreateTableSql(t.layout(), 1),
            "CREATE TABLE grown (\n"
            "  id        INTEGER PRIMARY KEY,\n"
            "  old_value REAL    NOT NULL\n"
            ")");
  SqliteDb db(":memory:", SqliteDb::Mode::kCreate);
  db.Exec(CreateTableSql(t.layout(), 1));
  {
    SqliteStatement insert(db, t.InsertSql(1));
    t.Bind(insert, Grown{7, 0.5, "not written"}, 1);
    insert.Execute();
  }
  SqliteStatement select(db, t.SelectSql("", 1));
  ASSERT_TRUE(select.Step());
  const Grown g = t.Read(select, 1);
  EXPECT_EQ(g.id, 7);
  EXPECT_EQ(g.old_value, 0.5);
  EXPECT_EQ(g.added, "default");
}

TEST(TableDescription, StoresEachTypeAsTheTraceFormatSaysAndReadsItBack) {
  SqliteDb db(":memory:", SqliteDb::Mode::kCreate);
  const Table<Everything>& t = EverythingTable();
  db.Exec(CreateTableSql(t.layout()));
  Everything a;
  a.id = -7;
  a.big = int64_t{1} << 40;
  a.real = 0.25;
  a.flag = true;
  a.text = "a";
  a.maybe = 2.5;
  a.scheme = Scheme::kPowerSgd;
  a.shape = {64, 3, 3};
  a.until = "2026-11-21T20:15:03Z";
  Everything b = a;
  b.text = "b";
  b.flag = false;
  b.maybe.reset();
  b.shape.clear();
  b.until.clear();
  {
    SqliteStatement insert(db, t.InsertSql());
    for (const Everything& row : {b, a}) {
      t.Bind(insert, row);
      insert.Execute();
    }
  }
  SqliteStatement stored(db,
                         "SELECT flag, typeof(maybe), scheme, shape, typeof(until) FROM everything "
                         "ORDER BY text");
  ASSERT_TRUE(stored.Step());
  EXPECT_EQ(stored.Int(0, "flag"), 1);
  EXPECT_EQ(stored.Text(1, "maybe"), "real");
  EXPECT_EQ(stored.Text(2, "scheme"), "powersgd");
  EXPECT_EQ(stored.Text(3, "shape"), "64,3,3");
  EXPECT_EQ(stored.Text(4, "until"), "text");
  ASSERT_TRUE(stored.Step());
  EXPECT_EQ(stored.Int(0, "flag"), 0);
  EXPECT_EQ(stored.Text(1, "maybe"), "null");
  EXPECT_EQ(stored.Text(4, "until"), "null");

  SqliteStatement select(db, t.SelectSql());
  std::vector<Everything> back;
  while (select.Step()) back.push_back(t.Read(select));
  ASSERT_EQ(back.size(), 2u);
  auto fields = [](const Everything& e) {
    return std::tie(e.id, e.big, e.real, e.flag, e.text, e.maybe, e.scheme, e.shape, e.until);
  };
  EXPECT_TRUE(fields(back[0]) == fields(a));
  EXPECT_TRUE(fields(back[1]) == fields(b));

  // An int column refuses what does not fit, an enum column a name it does not know.
  db.Exec(
      "UPDATE everything SET id = 4294967296 WHERE text = 'a'; "
      "UPDATE everything SET scheme = 'zip' WHERE text = 'b'");
  SqliteStatement hostile(db, t.SelectSql());  // b (id -7) comes first
  auto refusal = [&] {
    EXPECT_TRUE(hostile.Step());
    try {
      t.Read(hostile);
    } catch (const TraceError& e) {
      return std::string(ToString(e.code())) + ": " + e.what();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(), "invalid-value: everything.scheme 'zip' is unknown");
  EXPECT_EQ(refusal(), "out-of-range: everything.id 4294967296 is out of range");
}

TEST(TableDescription, EachValueCheckRefusesWhatItNamesAndNothingElse) {
  const Table<Everything>& t = EverythingTable();
  Everything ok;
  ok.big = 1;
  ok.real = 1.0;
  ok.text = "x";
  EXPECT_NO_THROW(t.CheckValues(ok, "row"));
  auto message = [&](const std::function<void(Everything&)>& damage) {
    Everything row = ok;
    damage(row);
    try {
      t.CheckValues(row, "row");
    } catch (const TraceError& e) {
      EXPECT_EQ(e.code(), TraceErrorCode::kInvalidValue);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message([](Everything& r) { r.big = 0; }), "row: big must be >= 1");
  EXPECT_EQ(message([](Everything& r) { r.real = 1.5; }), "row: real is above 1 (1.5)");
  EXPECT_EQ(message([](Everything& r) { r.real = -0.5; }), "row: real is negative (-0.5)");
  EXPECT_EQ(message([](Everything& r) { r.real = std::numeric_limits<double>::quiet_NaN(); }),
            "row: real is not finite (nan)");
  EXPECT_EQ(message([](Everything& r) { r.text.clear(); }), "row: text is empty");
  EXPECT_EQ(message([](Everything& r) { r.id = -1; }), "accepted");  // kAny
}

// The trace's own descriptions carry the checks the writer applies: one
// damaged value per check kind, each refused with its column named.
TEST_F(TraceTablesTest, TheWriterRefusesWhatTheTraceColumnsForbid) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 1;
  const std::string path = dir_ + "/source.trace";
  synthetic::WriteSyntheticTrace(path, o);
  auto reader = TraceReader::Open(path);
  EpochData good;
  good.epoch = reader->Epochs().at(0);
  good.layers = reader->EpochLayers();
  reader->ForEachCollective([&](const CollectiveRecord& r) { good.collectives.push_back(r); });
  good.hessian = reader->Hessian();
  ASSERT_FALSE(good.collectives.empty());
  ASSERT_FALSE(good.hessian.empty());

  struct Damage {
    std::function<void(EpochData&)> apply;
    std::string message;
  };
  const std::vector<Damage> damages = {
      {[](EpochData& d) { d.epoch.lr = std::numeric_limits<double>::infinity(); },
       "epochs row for epoch 0: lr is not finite"},
      {[](EpochData& d) { d.epoch.test_acc = 93.5; }, "epochs row for epoch 0: test_acc is above 1"},
      {[](EpochData& d) { d.epoch.batch_size = 0; }, "epochs row for epoch 0: batch_size must be >= 1"},
      {[](EpochData& d) { d.epoch.iterations = -1; }, "epochs row for epoch 0: iterations is negative"},
      {[](EpochData& d) { d.layers[1].ratio = -0.5; }, "epoch_layers row for epoch 0 layer 1: ratio is negative"},
      {[](EpochData& d) { d.collectives[0].bytes = -4; }, "bytes is negative"},
      {[](EpochData& d) { d.hessian[0].eigenvalue = std::nan(""); },
       "hessian row for epoch 0: eigenvalue is not finite"},
  };
  int refused = 0;
  for (const Damage& damage : damages) {
    const std::string copy = dir_ + "/copy" + std::to_string(refused) + ".trace";
    auto writer = TraceWriter::Create(copy, reader->run(), reader->layers());
    EpochData bad = good;
    damage.apply(bad);
    try {
      writer->WriteEpoch(bad);
    } catch (const TraceError& e) {
      EXPECT_EQ(e.code(), TraceErrorCode::kInvalidValue);
      EXPECT_NE(std::string(e.what()).find(damage.message), std::string::npos) << e.what();
      ++refused;
    }
    // A negative eigenvalue is allowed (non-convex losses): kFinite, not kNonNegative.
    if (damage.message.find("eigenvalue") != std::string::npos) {
      EpochData negative = good;
      negative.hessian[0].eigenvalue = -3;
      EXPECT_NO_THROW(writer->WriteEpoch(negative));
    }
  }
  EXPECT_EQ(refused, static_cast<int>(damages.size()));

  RunInfo run = reader->run();
  run.model.clear();
  try {
    TraceWriter::Create(dir_ + "/no-model.trace", run, reader->layers());
    FAIL() << "wrote a run without a model";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "run: model is empty");
  }
}

}  // namespace
}  // namespace accordion
