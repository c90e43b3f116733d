// ACCORDION_ARG: what one line declares (setter, getter, member, default).
#include "common/options.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace accordion {
namespace {

class ExampleOptions {
 public:
  int Sum() const { return count_ + static_cast<int>(sizes_.size()); }

  ACCORDION_ARG(int, count) = 3;
  ACCORDION_ARG(std::string, label) = "none";
  ACCORDION_ARG(std::vector<int>, sizes) = {1, 2};
  ACCORDION_ARG(const int*, target) = nullptr;
};

TEST(AccordionArg, DefaultsAreTheDeclaredValues) {
  const ExampleOptions o;
  EXPECT_EQ(o.count(), 3);
  EXPECT_EQ(o.label(), "none");
  EXPECT_EQ(o.sizes(), (std::vector<int>{1, 2}));
  EXPECT_EQ(o.target(), nullptr);
}

TEST(AccordionArg, SettersChainOnTheSameObject) {
  ExampleOptions o;
  ExampleOptions& chained = o.count(7).label("seven").sizes({4});
  EXPECT_EQ(&chained, &o);
  EXPECT_EQ(o.count(), 7);
  EXPECT_EQ(o.label(), "seven");
  EXPECT_EQ(o.sizes(), std::vector<int>{4});
  // The members, not copies: what the class's own functions read.
  EXPECT_EQ(o.Sum(), 8);
}

TEST(AccordionArg, GetterIsAReferenceToTheMember) {
  ExampleOptions o;
  const std::string& label = o.label();
  o.label("changed");
  EXPECT_EQ(label, "changed");
}

TEST(AccordionArg, PointerOptionsKeepTheirPointee) {
  const int value = 42;
  ExampleOptions o;
  o.target(&value);
  ASSERT_EQ(o.target(), &value);
  EXPECT_EQ(*o.target(), 42);
}

TEST(AccordionArg, CopiesAreIndependent) {
  const ExampleOptions base = ExampleOptions().count(1);
  ExampleOptions copy = base;
  copy.count(2);
  EXPECT_EQ(base.count(), 1);
  EXPECT_EQ(copy.count(), 2);
}

}  // namespace
}  // namespace accordion
