// CheckedInt: exact results and remembered overflow. CMake also compiles
// this file with clang (CheckedIntUnderClang) where the build's compiler is
// another: the operators once depended on the order in which a compiler
// evaluates function arguments, which GCC and clang choose differently.
#include "subgraph/support/checked_int.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace subgraph {
namespace {

TEST(CheckedInt, SumsDifferencesAndProductsAreExact) {
  EXPECT_EQ((CheckedInt(3) + 4).value(), 7);
  EXPECT_EQ((CheckedInt(3) - 10).value(), -7);
  EXPECT_EQ((CheckedInt(1) * 8 * 4 * 9 * 36).value(), 10368);
  EXPECT_EQ(((CheckedInt(3) - 1) * 2 + 1).value(), 5);
  EXPECT_EQ((CheckedInt(17) / 5).value(), 3);
  EXPECT_EQ((CheckedInt(17) % 5).value(), 2);
  EXPECT_TRUE((CheckedInt(1) * 8 * 4).ok());
}

/// The negative side: an overflow, or a division by zero, anywhere in a
/// formula leaves it not ok(), and the flag survives later steps.
TEST(CheckedInt, OverflowIsRememberedNotWrapped) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE((CheckedInt(big) + 1).ok());
  EXPECT_FALSE((CheckedInt(-big) - 2).ok());
  EXPECT_FALSE((CheckedInt(big / 2 + 1) * 2).ok());
  EXPECT_FALSE(((CheckedInt(big) * 2) / big).ok());
  EXPECT_FALSE((CheckedInt(1) / 0).ok());
  EXPECT_FALSE((CheckedInt(1) % 0).ok());
  EXPECT_FALSE((CheckedInt(INT64_MIN) / -1).ok());
  EXPECT_FALSE((CheckedInt(big) + 1).get().has_value());
  EXPECT_EQ((CheckedInt(6) * 7).get(), 42);
}

}  // namespace
}  // namespace subgraph
