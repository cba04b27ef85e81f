//===- core/text/lexer.h - Tokens of the graph text format ------*- C++ -*-===//
//
// Splits text-format source into tokens on demand. The lexer never fails by
// throwing: malformed input (an unterminated string, a stray character)
// becomes an Error token carrying a message, which the parser reports at
// the token's position, so that errors come out in source order.
//
// A token's text is a view, not a string of its own: into the source for
// everything written without escapes (nearly every token of a real file),
// else into text the lexer keeps for its own lifetime. A large graph has
// millions of tokens, and a heap block per token was a visible share of
// the time to load one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "syntax.h"

namespace subgraph::text {

/// A 1-based line and column (columns count bytes).
struct SourceLoc {
  uint32_t line = 1;
  uint32_t column = 1;
};

/// What a token is.
enum class TokenKind : uint8_t {
  kEnd,         ///< End of input.
  kError,       ///< Malformed input; `text` holds the message.
  kIdentifier,  ///< `Conv`, `f32`, `onednn.ConvBnRelu` (dots join segments).
  kValueName,   ///< `%x` or `%"a b"`; `text` holds the unquoted name.
  kAtName,      ///< `@conv1` or `@"conv 1"`; `text` holds the unquoted name.
  kInteger,     ///< `12`, `-3`, `0x7fc00001`; `text` is the spelling.
  kFloat,       ///< `1.5`, `-2e-05`, `-inf`, `-nan`; `text` is the spelling.
  kString,      ///< `"..."`; `text` holds the unescaped bytes.
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLBracket,
  kRBracket,
  kComma,
  kEquals,
  kColon,
  kQuestion,
  kEllipsis,  ///< `...`, which marks elided constant data.
};

/// One token and where it starts. Cheap to copy; its text stays valid as
/// long as the Lexer that made it and the source it lexes.
struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  SourceLoc loc;
  /// True for a `%`/`@` name or string written in quotes, so that `"graph"`
  /// is not mistaken for the keyword.
  bool quoted = false;
};

/// A short description of a token for "expected X, found Y" messages, such
/// as "identifier 'Conv'", "'}'" or "end of input".
std::string describeToken(const Token& token);

/// How many statements to make room for before parsing `source`: its
/// number of lines, which is the statement count of a printed graph, but
/// at most `maxStatements` and at most one per kBytesPerReservedStatement
/// bytes. Room costs about 60 bytes a statement (node and value tables,
/// name index, definition table), so a file of empty lines that lies about
/// its size makes the parser reserve less memory than the file itself.
size_t reservedStatementCount(std::string_view source, uint64_t maxStatements);
/// The input bytes each reserved statement needs; see reservedStatementCount().
inline constexpr size_t kBytesPerReservedStatement = 64;

/// Text the lexer decoded (a string with escapes) or composed (an error
/// message), kept at a stable address for the lexer's lifetime. It holds
/// at most what the source spells out plus the one error message a parse
/// stops at, so input cannot make it outgrow the source.
class TokenTextStore {
 public:
  /// A stable copy of `text`.
  std::string_view keep(std::string_view text);

 private:
  static constexpr size_t kChunkBytes = size_t{64} << 10;
  std::vector<std::unique_ptr<char[]>> chunks_;
  char* free_ = nullptr;
  size_t freeBytes_ = 0;
};

/// Produces tokens from a source string, skipping whitespace and `#`
/// comments.
class Lexer {
 public:
  /// `source` must outlive the lexer. A leading UTF-8 byte order mark,
  /// which some editors add, is skipped without moving the column.
  explicit Lexer(std::string_view source) : source_(source) {
    if (source_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = lineStart_ = 3;
  }

  /// Lexes and returns the next token; after the end, returns kEnd forever.
  Token next();

  /// A fast path for the parser, called right after next() returned a '[':
  /// if what follows is a list of plain dims on the same line (`1, 4, 8,
  /// 8]`: decimal integers below 10^18 without leading zeros, commas,
  /// spaces), appends them to `dims`, moves past the ']' and returns where
  /// the ']' is. Otherwise returns nullopt, appends nothing and moves
  /// nothing, so that the parser reads the list token by token and reports
  /// any error as before. Text graphs spell a type per value, and this
  /// reads one in a single loop instead of a token per digit and comma.
  template <typename Ints>
  std::optional<SourceLoc> scanStaticDims(Ints& dims) {
    const char* data = source_.data();
    const size_t size = source_.size();
    size_t p = pos_;
    const size_t first = dims.size();
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    auto fail = [&] {
      dims.resize(first);
      return std::optional<SourceLoc>();
    };
    while (p < size && blank(data[p])) ++p;
    for (bool firstDim = true;; firstDim = false) {
      if (p < size && data[p] == ']' && firstDim) break;
      if (p >= size || !digit(data[p]) || (data[p] == '0' && p + 1 < size && digit(data[p + 1])))
        return fail();
      int64_t value = 0;
      for (size_t digits = 0; p < size && digit(data[p]); ++p) {
        if (++digits > 18) return fail();
        value = value * 10 + (data[p] - '0');
      }
      if (p < size && (isSigilNameChar(data[p]) || data[p] == '-' || data[p] == '+')) return fail();
      dims.push_back(value);
      while (p < size && blank(data[p])) ++p;
      if (p < size && data[p] == ']') break;
      if (p >= size || data[p] != ',') return fail();
      ++p;
      while (p < size && blank(data[p])) ++p;
    }
    SourceLoc closing{line_, static_cast<uint32_t>(p - lineStart_ + 1)};
    pos_ = p + 1;
    return closing;
  }

 private:
  char peekChar(size_t ahead = 0) const {
    return pos_ + ahead < source_.size() ? source_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= source_.size(); }
  /// Where the next character is. Lines start after each '\n', which only
  /// whitespace and comments contain (a token never spans lines), so only
  /// skipSpaceAndComments() moves to a new line.
  SourceLoc here() const { return SourceLoc{line_, static_cast<uint32_t>(pos_ - lineStart_ + 1)}; }
  /// Moves past `n` characters of the current line (clamped to the end).
  void advance(size_t n = 1) { pos_ = pos_ + n < source_.size() ? pos_ + n : source_.size(); }
  /// Moves past the characters that satisfy `pred`, in one bounds-checked
  /// loop rather than a peekChar() and an advance() per character.
  template <typename Pred>
  void advanceWhile(Pred pred) {
    const char* data = source_.data();
    const size_t size = source_.size();
    size_t p = pos_;
    while (p < size && pred(data[p])) ++p;
    pos_ = p;
  }
  void skipSpaceAndComments();
  Token makeError(SourceLoc loc, const std::string& message);
  Token lexNumber(SourceLoc loc);
  Token lexIdentifier(SourceLoc loc);
  Token lexSigilName(SourceLoc loc, TokenKind kind, char sigil);
  /// Reads a quoted string starting at the opening quote (at `openLoc`)
  /// into `out`; returns an error message, or empty on success, in which
  /// case quotedErrorLoc_ says where the problem is.
  std::string lexQuoted(std::string_view& out, SourceLoc openLoc);
  /// The slow path of lexQuoted() for a string with escapes, from the
  /// first backslash; `decoded` holds the bytes before it.
  std::string lexEscapedRest(std::string& decoded);

  std::string_view source_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t lineStart_ = 0;
  SourceLoc quotedErrorLoc_;
  TokenTextStore store_;
};

}  // namespace subgraph::text
