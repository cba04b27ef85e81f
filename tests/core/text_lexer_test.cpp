//===- tests/core/text_lexer_test.cpp - How much room the parser reserves ===//
//
// White-box checks of core/text/lexer.h, which is not public API: the count
// of statements the parser makes room for before it parses a large input.
// The count comes from the input itself, so these tests hold it to its
// bounds for inputs that lie: it never exceeds the lines, the byte budget per
// statement or the node limit, whichever is least.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <string>

#include "../../core/text/lexer.h"

namespace subgraph::text {
namespace {

/// A printed graph gets room for one statement per line when its lines are
/// at least kBytesPerReservedStatement long, as real graphs' lines are.
TEST(ReservedStatementCount, CountsTheLinesOfATypicalFile) {
  std::string line(kBytesPerReservedStatement - 1, 'x');
  line += '\n';
  std::string text;
  for (int i = 0; i < 1000; ++i) text += line;
  EXPECT_EQ(reservedStatementCount(text, 10'000'000), 1000u);
  EXPECT_EQ(reservedStatementCount("graph @g() {}", 10'000'000), 0u);
}

/// Negative: a file of nothing but line breaks, or one line repeated up to
/// a huge count, cannot buy more room than its own size allows, and never
/// more than the node limit.
TEST(ReservedStatementCount, DoesNotTrustAFileThatLiesAboutItsSize) {
  const std::string newlines(size_t{8} << 20, '\n');
  EXPECT_EQ(reservedStatementCount(newlines, 10'000'000),
            newlines.size() / kBytesPerReservedStatement);
  EXPECT_EQ(reservedStatementCount(newlines, 1000), 1000u);
  EXPECT_EQ(reservedStatementCount(newlines, 0), 0u);
  // About 60 bytes of tables per reserved statement: less than the input.
  EXPECT_LE(reservedStatementCount(newlines, UINT64_MAX) * 60, newlines.size());
  EXPECT_EQ(reservedStatementCount("", 10'000'000), 0u);
}

}  // namespace
}  // namespace subgraph::text
