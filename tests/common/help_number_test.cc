// HelpNumber and HelpChoices: defaults in help text read as they were written
// by hand.
#include <gtest/gtest.h>

#include "common/cli.h"

namespace accordion {
namespace {

TEST(HelpNumber, WholeNumbersHaveNoDecimals) {
  EXPECT_EQ(HelpNumber(10), "10");
  EXPECT_EQ(HelpNumber(0), "0");
  EXPECT_EQ(HelpNumber(4194304), "4194304");
}

TEST(HelpNumber, FractionsHaveNoTrailingZeros) {
  EXPECT_EQ(HelpNumber(0.5), "0.5");
  EXPECT_EQ(HelpNumber(0.1), "0.1");
}

TEST(HelpNumber, UnitConversionsHideTheirRoundingError) {
  // What platform help computes from PlatformSpec's units.
  EXPECT_EQ(HelpNumber(1.25e9 * 8 / 1e9), "10");
  EXPECT_EQ(HelpNumber(5e-6 * 1e6), "5");
  EXPECT_EQ(HelpNumber(1e-6 * 1e6), "1");
  EXPECT_EQ(HelpNumber(75e9 * 8 / 1e9), "600");
  EXPECT_EQ(HelpNumber(0.1 + 0.2), "0.3");
}

TEST(HelpChoices, MarksTheDefaultWhereverItStands) {
  EXPECT_EQ(HelpChoices({"LV08", "CM02"}, "LV08"), "LV08 (default) or CM02");
  EXPECT_EQ(HelpChoices({"on", "off"}, "off"), "on or off (default)");
  EXPECT_EQ(HelpChoices({"star", "fat-tree", "ring"}, "star"), "star (default), fat-tree or ring");
  EXPECT_EQ(HelpChoices({"a"}, "b"), "a");
  EXPECT_EQ(JoinWords({}, ", ", " or "), "");
}

}  // namespace
}  // namespace accordion
