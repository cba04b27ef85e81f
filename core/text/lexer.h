//===- core/text/lexer.h - Tokens of the graph text format ------*- C++ -*-===//
//
// Splits text-format source into tokens on demand. The lexer never fails by
// throwing: malformed input (an unterminated string, a stray character)
// becomes an Error token carrying a message, which the parser reports at
// the token's position, so that errors come out in source order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

/// One token and where it starts.
struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  SourceLoc loc;
  /// True for a `%`/`@` name or string written in quotes, so that `"graph"`
  /// is not mistaken for the keyword.
  bool quoted = false;
};

/// A short description of a token for "expected X, found Y" messages, such
/// as "identifier 'Conv'", "'}'" or "end of input".
std::string describeToken(const Token& token);

/// Produces tokens from a source string, skipping whitespace and `#`
/// comments.
class Lexer {
 public:
  /// `source` must outlive the lexer. A leading UTF-8 byte order mark,
  /// which some editors add, is skipped without moving the column.
  explicit Lexer(std::string_view source) : source_(source) {
    if (source_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  }

  /// Lexes and returns the next token; after the end, returns kEnd forever.
  Token next();

 private:
  char peekChar(size_t ahead = 0) const {
    return pos_ + ahead < source_.size() ? source_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= source_.size(); }
  void advance(size_t n = 1);
  void skipSpaceAndComments();
  Token makeError(SourceLoc loc, std::string message) const;
  Token lexNumber(SourceLoc loc);
  Token lexIdentifier(SourceLoc loc);
  Token lexSigilName(SourceLoc loc, TokenKind kind, char sigil);
  /// Reads a quoted string starting at the opening quote (at `openLoc`)
  /// into `out`; returns an error message, or empty on success, in which
  /// case quotedErrorLoc_ says where the problem is.
  std::string lexQuoted(std::string& out, SourceLoc openLoc);

  std::string_view source_;
  size_t pos_ = 0;
  SourceLoc loc_;
  SourceLoc quotedErrorLoc_;
};

}  // namespace subgraph::text
