//===- tests/core/text_lexer_test.cpp - How much room the parser reserves ===//
//
// White-box checks of core/text/lexer.h, which is not public API: the count
// of statements the parser makes room for before it parses a large input,
// and the fast path that reads a type's plain dims at once.
// The count comes from the input itself, so these tests hold it to its
// bounds for inputs that lie: it never exceeds the lines, the byte budget per
// statement or the node limit, whichever is least.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

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

/// Reads a '[' with next(), then tries the static-dims fast path; returns
/// the dims it read, or nullopt, and the kind of the token after.
std::optional<std::vector<int64_t>> scanAfterBracket(std::string_view text, TokenKind& after) {
  Lexer lexer(text);
  EXPECT_EQ(lexer.next().kind, TokenKind::kLBracket);
  std::vector<int64_t> dims;
  std::optional<SourceLoc> closing = lexer.scanStaticDims(dims);
  after = lexer.next().kind;
  if (!closing) {
    EXPECT_TRUE(dims.empty());
    return std::nullopt;
  }
  EXPECT_EQ(closing->line, 1u);
  EXPECT_EQ(text[closing->column - 1], ']');
  return dims;
}

/// Plain dims on one line are read at once, spaces and all, up to the ']'.
TEST(ScanStaticDims, ReadsPlainDimsAndMovesPastTheBracket) {
  TokenKind after;
  EXPECT_EQ(scanAfterBracket("[1, 4, 8, 8] = Relu", after), (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_EQ(after, TokenKind::kEquals);
  EXPECT_EQ(scanAfterBracket("[]", after), std::vector<int64_t>{});
  EXPECT_EQ(after, TokenKind::kEnd);
  EXPECT_EQ(scanAfterBracket("[ 0 ,\t12 ]", after), (std::vector<int64_t>{0, 12}));
  EXPECT_EQ(scanAfterBracket("[999999999999999999]", after),
            (std::vector<int64_t>{999999999999999999}));
}

/// Negative: anything else is left to the tokens, with nothing consumed:
/// symbols, unknown dims, signs, leading zeros, floats, 19 digits, a
/// trailing comma, a comment or a line break inside, an unclosed list.
TEST(ScanStaticDims, LeavesEverythingElseToTheTokens) {
  for (std::string_view text : {"[N, 3]", "[2, ?]", "[-1]", "[+1]", "[01]", "[1.5]", "[1e3]",
                                "[1x]", "[1234567890123456789]", "[1, 2,]", "[1,, 2]", "[1 2]",
                                "[1 # c\n]", "[1,\n2]", "[1, 2", "[", "[1]]"}) {
    TokenKind after;
    std::optional<std::vector<int64_t>> dims = scanAfterBracket(text, after);
    if (text == "[1]]") {
      // Read up to the first ']'; the second is the next token.
      EXPECT_EQ(dims, std::vector<int64_t>{1}) << text;
      EXPECT_EQ(after, TokenKind::kRBracket);
      continue;
    }
    EXPECT_EQ(dims, std::nullopt) << text;
    EXPECT_NE(after, TokenKind::kRBracket) << text << ": the lexer moved";
  }
}

}  // namespace
}  // namespace subgraph::text
