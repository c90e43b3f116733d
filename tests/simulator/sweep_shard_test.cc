// Sweeps in slices: which points a slice runs, where Slurm's array says a
// task's slice is, what a slice file says about its sweep, and merging the
// slices back into the one-process CSV (no simulation: rows are made up).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "simulator/sweep.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::sim {
namespace {

using accordion::test_support::ReadFile;

TEST(SweepShard, ParsesKOfNAndOffAndRefusesTheRest) {
  const std::optional<SweepShard> s = ParseShard("2/3");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 3);
  EXPECT_EQ(s->origin, "--shard 2/3");
  EXPECT_EQ(ParseShard("1/1")->count, 1);
  EXPECT_FALSE(ParseShard("off"));
  for (const std::string bad : {"0/3", "4/3", "1/0", "0/0", "3", "/3", "2/", "a/b", "-1/3", "+1/3", "1/3/4", " 1/3",
                                "1 /3", "1/3 ", "", "1.5/3", "99999999999999999999/3"}) {
    EXPECT_THROW(ParseShard(bad), InputError) << bad;
  }
}

// Round-robin slices: every point in exactly one slice, in grid order
// within it, slice sizes at most one apart.
TEST(SweepShard, SlicesCoverTheGridOnceAndBalanced) {
  for (int64_t points = 1; points <= 40; ++points) {
    for (int64_t count = 1; count <= points; ++count) {
      std::vector<int> seen(static_cast<size_t>(points), 0);
      int64_t smallest = points, largest = 0;
      for (int64_t index = 1; index <= count; ++index) {
        const SweepShard shard{index, count, ""};
        const int64_t n = shard.Points(points);
        smallest = std::min(smallest, n);
        largest = std::max(largest, n);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_LT(shard.PointAt(i), points);
          if (i > 0) {
            EXPECT_GT(shard.PointAt(i), shard.PointAt(i - 1));
          }
          ++seen[static_cast<size_t>(shard.PointAt(i))];
        }
      }
      for (int64_t p = 0; p < points; ++p) EXPECT_EQ(seen[static_cast<size_t>(p)], 1) << p << " of " << points;
      EXPECT_LE(largest - smallest, 1) << count << " slices of " << points;
    }
  }
  EXPECT_EQ((SweepShard{3, 3, ""}.Points(8)), 2);
  EXPECT_EQ((SweepShard{3, 3, ""}.PointAt(1)), 5);
}

TEST(SweepShard, NeedsAPointForEverySlice) {
  EXPECT_NO_THROW(CheckShard(SweepShard{4, 4, "--shard 4/4"}, 4));
  try {
    CheckShard(SweepShard{1, 5, "--shard 1/5"}, 4);
    FAIL() << "5 slices of 4 points";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--shard 1/5: the grid has 4 points"), std::string::npos) << e.what();
  }
}

// The environment of one Slurm array task.
std::optional<SweepShard> FromSlurm(const std::map<std::string, std::string>& env) {
  return ShardFromSlurm([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::map<std::string, std::string> Array(int64_t id, int64_t min, int64_t max, int64_t count) {
  return {{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
          {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
          {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
          {"SLURM_ARRAY_TASK_COUNT", std::to_string(count)},
          {"SLURM_ARRAY_TASK_STEP", "1"}};
}

TEST(SweepShard, SlurmArrayTasksInIdOrderAreSlicesOneToN) {
  EXPECT_FALSE(FromSlurm({}));
  EXPECT_FALSE(FromSlurm({{"SLURM_JOB_ID", "12"}}));
  // --array=0-7, 1-8 and 10-17: the same 8 slices.
  for (const int64_t min : {0, 1, 10}) {
    for (int64_t k = 1; k <= 8; ++k) {
      const std::optional<SweepShard> s = FromSlurm(Array(min + k - 1, min, min + 7, 8));
      ASSERT_TRUE(s) << min;
      EXPECT_EQ(s->index, k) << min;
      EXPECT_EQ(s->count, 8);
      EXPECT_NE(s->origin.find("Slurm array task " + std::to_string(min + k - 1)), std::string::npos) << s->origin;
    }
  }
  // --array=0-14:2 (Slurm sets the step), and without _MAX and _STEP (1).
  std::map<std::string, std::string> stepped = Array(14, 0, 14, 8);
  stepped["SLURM_ARRAY_TASK_STEP"] = "2";
  EXPECT_EQ(FromSlurm(stepped)->index, 8);
  stepped["SLURM_ARRAY_TASK_ID"] = "3";  // between the steps
  EXPECT_THROW(FromSlurm(stepped), InputError);
  EXPECT_EQ(
      FromSlurm({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})->index,
      3);
}

TEST(SweepShard, SlurmVariablesThatDoNotNameASliceAreRefused) {
  auto refused = [](std::map<std::string, std::string> env, const std::string& fragment) {
    try {
      FromSlurm(env);
      ADD_FAILURE() << "accepted " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("give --shard K/N"), std::string::npos) << e.what();
    }
  };
  refused({{"SLURM_ARRAY_TASK_ID", "3"}}, "SLURM_ARRAY_TASK_COUNT is not");
  refused({{"SLURM_ARRAY_TASK_COUNT", "3"}}, "SLURM_ARRAY_TASK_ID is not");
  refused({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, "SLURM_ARRAY_TASK_MIN is not");
  std::map<std::string, std::string> env = Array(3, 1, 4, 4);
  env["SLURM_ARRAY_TASK_ID"] = "x3";
  refused(env, "SLURM_ARRAY_TASK_ID='x3'");
  // sbatch --array=5, re-running one task: which slice is it?
  refused(Array(5, 5, 5, 1), "an array of one task");
  // --array=1,3,7: not MIN, MIN+STEP, ..., MAX.
  refused(Array(3, 1, 7, 3), "not MIN, MIN+STEP");
  refused(Array(0, 1, 4, 4), "not MIN, MIN+STEP");  // below MIN
  refused(Array(5, 1, 5, 4), "not MIN, MIN+STEP");  // past COUNT
}

SweepRow Row(int64_t point) {
  SweepRow r;
  r.bandwidth_gbps = 1 + static_cast<double>(point % 3);
  r.latency_us = 5;
  r.workers = 4 << (point % 2);
  r.eta = 0.5;
  r.interval = 5;
  r.level_low = 2;
  r.level_high = 1;
  r.accordion_s = 10.0 + static_cast<double>(point) / 7;
  r.static_low_s = 13.0 + static_cast<double>(point) / 3;
  r.static_high_s = 9.5;
  r.accordion_exposed_comm_s = 1.25;
  r.accordion_payload_bytes = 1e9 + static_cast<double>(point);
  r.distinct_patterns = 2;
  return r;
}

class SweepSlices : public accordion::test_support::TempDirTest {
 protected:
  static constexpr int64_t kPoints = 8;

  // Slice `index` of `count` as `sweep slice --shard` writes it; returns its path.
  std::string Slice(int64_t index, int64_t count, const SweepIdentity& id = Id(), const std::string& name = "") {
    const std::string path = Path(name.empty() ? "slice-" + std::to_string(index) + ".csv" : name);
    std::ofstream out(path);
    const SweepShard shard{index, count, ""};
    SweepSliceWriter writer(out, shard, kPoints, id);
    for (int64_t n = 0; n < shard.Points(kPoints); ++n) writer.Add(shard.PointAt(n), Row(shard.PointAt(n)));
    return path;
  }
  static SweepIdentity Id() { return {"0123456789abcdef", "00000000000000aa", "00000000000000bb"}; }

  static std::string Whole() {
    std::vector<SweepRow> rows;
    for (int64_t p = 0; p < kPoints; ++p) rows.push_back(Row(p));
    std::ostringstream out;
    WriteSweepCsv(rows, out);
    return out.str();
  }
  static std::string Merge(const std::vector<std::string>& paths) {
    std::ostringstream out;
    MergeSweepSlices(paths, out);
    return out.str();
  }
  // Merging `paths` fails with a message holding `fragment`.
  static void Refused(const std::vector<std::string>& paths, const std::string& fragment) {
    try {
      Merge(paths);
      ADD_FAILURE() << "merged; expected: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
};

TEST_F(SweepSlices, MergeInAnyOrderIsTheOneProcessCsv) {
  for (const int64_t count : {1, 2, 3, 8}) {
    std::vector<std::string> paths;
    for (int64_t k = count; k >= 1; --k) paths.push_back(Slice(k, count));
    EXPECT_EQ(Merge(paths), Whole()) << count << " slices";
  }
  const std::string slice = ReadFile(Path("slice-2.csv"));  // of 8: point 1 only
  EXPECT_EQ(slice.rfind("# accordion-sim ", 0), 0u) << slice;
  EXPECT_NE(slice.find(" sweep slice 2/8 of 8 points; trace 0123456789abcdef, grid 00000000000000aa, options "
                       "00000000000000bb\npoint,bandwidth_gbps,latency_us,"),
            std::string::npos)
      << slice;
  EXPECT_NE(slice.find("\n1,2,5,8,"), std::string::npos) << slice;
}

TEST_F(SweepSlices, MergeRefusesSlicesOfOtherSweepsMissingOrTwice) {
  const std::string one = Slice(1, 3), two = Slice(2, 3), three = Slice(3, 3);
  Refused({one, three}, "1 of the sweep's 3 slices missing: 2");
  Refused({two}, "2 of the sweep's 3 slices missing: 1, 3");
  Refused({one, two, three, two}, "slice 2/3 is given twice");
  std::filesystem::copy_file(two, Path("copy.csv"));
  Refused({one, two, three, Path("copy.csv")}, "slice 2/3 is given twice: " + two + " and " + Path("copy.csv"));
  SweepIdentity other = Id();
  other.options = "00000000000000cc";
  Refused({one, Slice(2, 3, other, "other-options.csv"), three}, "slices of different sweeps: their options differ");
  other = Id();
  other.grid = "00000000000000cc";
  Refused({one, Slice(2, 3, other, "other-grid.csv"), three}, "their grids differ");
  other = Id();
  other.trace = "00000000000000cc";
  Refused({one, Slice(2, 3, other, "other-trace.csv"), three}, "their traces differ");
  Refused({one, two, three, Slice(2, 4, Id(), "of-four.csv")}, "their slice counts (3, 4) differ");
  Refused({}, "no slices");
}

TEST_F(SweepSlices, MergeRefusesRowsOutOfPlace) {
  const std::string one = Slice(1, 3), two = Slice(2, 3), three = Slice(3, 3);
  ASSERT_EQ(Merge({one, two, three}), Whole());
  const std::string text = ReadFile(two);  // points 1, 4, 7
  const size_t last = text.rfind("\n7,");
  ASSERT_NE(last, std::string::npos);
  auto with = [&](const std::string& name, const std::string& content) {
    std::ofstream(Path(name)) << content;
    return Path(name);
  };
  // A row of slice 1 (point 3) in slice 2, in place of its own and besides them.
  std::string foreign = text;
  foreign.replace(last + 1, 1, "3");
  Refused({one, with("foreign.csv", foreign), three}, "row 3 is point 3, which is not one of slice 2/3's points");
  Refused({one, with("extra.csv", text + "3" + text.substr(last + 2)), three}, "has rows past slice 2/3's 3");
  Refused({one, with("repeated.csv", text.substr(0, last + 1) + "4" + text.substr(last + 2)), three},
          "row 3 is point 4 where point 7 belongs");
  Refused({one, with("beyond.csv", text.substr(0, last + 1) + "10" + text.substr(last + 2)), three},
          "row 3 is point 10, which is not one of");
  Refused({one, with("short.csv", text.substr(0, last + 1)), three}, "ends after 2 of its 3 rows");
  Refused({one, with("cut.csv", text.substr(0, text.size() - 3)), three}, "the last line is cut short");
  Refused({one, with("columns.csv", text.substr(0, last + 1) + "7,1,2\n"), three}, "row 3 is not a row of the sweep");
  Refused({one, with("plain.csv", Whole()), three}, "plain.csv is not a sweep slice");
  Refused({one, with("header.csv", text.substr(0, text.find('\n') + 1) + Whole()), three},
          "the second line is not the sweep's columns");
  Refused({one, Path("absent.csv"), three}, "absent.csv: cannot read");
  // Nothing of a refused merge was written.
  std::ostringstream out;
  EXPECT_THROW(MergeSweepSlices({one, with("foreign2.csv", foreign), three}, out), InputError);
  EXPECT_TRUE(out.str().empty()) << out.str();
}

// What tells sweeps apart: the trace's bytes, the grid, the options that
// change rows - not the trace's name, --jobs or --sim-timeout.
TEST_F(SweepSlices, IdentityFollowsTheTraceGridAndOptions) {
  std::ofstream(Path("a.trace")) << "some trace bytes";
  std::ofstream(Path("copy.trace")) << "some trace bytes";
  std::ofstream(Path("b.trace")) << "other trace bytes";
  SweepGrid grid;
  grid.workers = {4, 8};
  grid.levels = {{2, 1}};
  const ReplayOptions base = ReplayOptions().eta(0.3);
  const SweepIdentity id = IdentifySweep(Path("a.trace"), base, grid);
  for (const std::string* h : {&id.trace, &id.grid, &id.options}) EXPECT_EQ(h->size(), 16u) << *h;
  const SweepIdentity same = IdentifySweep(Path("copy.trace"), ReplayOptions(base).jobs(7).timeout_s(5), grid);
  EXPECT_EQ(same.trace, id.trace);
  EXPECT_EQ(same.grid, id.grid);
  EXPECT_EQ(same.options, id.options);
  EXPECT_NE(IdentifySweep(Path("b.trace"), base, grid).trace, id.trace);
  SweepGrid reordered = grid;
  reordered.workers = {8, 4};
  EXPECT_NE(IdentifySweep(Path("a.trace"), base, reordered).grid, id.grid);
  EXPECT_NE(IdentifySweep(Path("a.trace"), ReplayOptions(base).level_low(4), grid).options, id.options);
  EXPECT_NE(IdentifySweep(Path("a.trace"), ReplayOptions(base).straggler_cv(0.1), grid).options, id.options);
  EXPECT_NE(IdentifySweep(Path("a.trace"), ReplayOptions(base).platform(StarPlatformOptions().bandwidth_gbps(1)), grid)
                .options,
            id.options);
  EXPECT_THROW(IdentifySweep(Path("absent.trace"), base, grid), InputError);
}

}  // namespace
}  // namespace accordion::sim
