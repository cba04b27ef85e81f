//===- core/text/lexer.cpp - Tokens of the graph text format --------------===//
//
// A hand-written, single-pass lexer. It works in bounded memory per token and
// never looks further back than the token it is building, so arbitrary input
// (fuzzed bytes, NULs, unterminated strings) ends in an Error token rather
// than a crash or a hang.
//
//===----------------------------------------------------------------------===//
#include "lexer.h"

#include <algorithm>
#include <cstring>

#include "syntax.h"

namespace subgraph::text {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::string printableChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* kHex = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

}  // namespace

std::string describeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kError: return "invalid input";
    case TokenKind::kIdentifier: return "identifier '" + std::string(token.text) + "'";
    case TokenKind::kValueName: return "value " + sigilName('%', token.text);
    case TokenKind::kAtName: return "name " + sigilName('@', token.text);
    case TokenKind::kInteger: return "integer " + std::string(token.text);
    case TokenKind::kFloat: return "float " + std::string(token.text);
    case TokenKind::kString: return "string " + quoteString(token.text);
    case TokenKind::kLParen: return "'('";
    case TokenKind::kRParen: return "')'";
    case TokenKind::kLBrace: return "'{'";
    case TokenKind::kRBrace: return "'}'";
    case TokenKind::kLBracket: return "'['";
    case TokenKind::kRBracket: return "']'";
    case TokenKind::kComma: return "','";
    case TokenKind::kEquals: return "'='";
    case TokenKind::kColon: return "':'";
    case TokenKind::kQuestion: return "'?'";
    case TokenKind::kEllipsis: return "'...'";
  }
  return "token";
}

size_t reservedStatementCount(std::string_view source, uint64_t maxStatements) {
  // memchr jumps a line at a time with vector loads; std::count compiles
  // to a byte loop here.
  uint64_t lines = 1;
  for (const char *p = source.data(), *end = p + source.size();
       (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))); ++p)
    ++lines;
  const uint64_t bySize = source.size() / kBytesPerReservedStatement;
  return static_cast<size_t>(std::min({lines, bySize, maxStatements}));
}

std::string_view TokenTextStore::keep(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > freeBytes_) {
    // A long text gets a block of its own, so the tail of the current
    // chunk stays in use for the short ones that follow.
    size_t bytes = text.size() > kChunkBytes / 4 ? text.size() : kChunkBytes;
    chunks_.push_back(std::make_unique<char[]>(bytes));
    if (bytes != kChunkBytes) {
      std::memcpy(chunks_.back().get(), text.data(), text.size());
      return {chunks_.back().get(), text.size()};
    }
    free_ = chunks_.back().get();
    freeBytes_ = bytes;
  }
  std::memcpy(free_, text.data(), text.size());
  std::string_view kept(free_, text.size());
  free_ += text.size();
  freeBytes_ -= text.size();
  return kept;
}

void Lexer::skipSpaceAndComments() {
  const char* data = source_.data();
  const size_t size = source_.size();
  while (pos_ < size) {
    char c = data[pos_];
    if (c == '\n') {
      ++line_;
      lineStart_ = ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      const void* eol = std::memchr(data + pos_, '\n', size - pos_);
      pos_ = eol ? static_cast<size_t>(static_cast<const char*>(eol) - data) : size;
    } else {
      break;
    }
  }
}

Token Lexer::makeError(SourceLoc loc, const std::string& message) {
  Token t;
  t.kind = TokenKind::kError;
  t.text = store_.keep(message);
  t.loc = loc;
  return t;
}

Token Lexer::next() {
  skipSpaceAndComments();
  SourceLoc loc = here();
  Token t;
  t.loc = loc;
  if (atEnd()) return t;
  char c = peekChar();
  auto punct = [&](TokenKind kind, size_t width = 1) {
    t.kind = kind;
    advance(width);
    return t;
  };
  switch (c) {
    case '(': return punct(TokenKind::kLParen);
    case ')': return punct(TokenKind::kRParen);
    case '{': return punct(TokenKind::kLBrace);
    case '}': return punct(TokenKind::kRBrace);
    case '[': return punct(TokenKind::kLBracket);
    case ']': return punct(TokenKind::kRBracket);
    case ',': return punct(TokenKind::kComma);
    case '=': return punct(TokenKind::kEquals);
    case ':': return punct(TokenKind::kColon);
    case '?': return punct(TokenKind::kQuestion);
    case '%': return lexSigilName(loc, TokenKind::kValueName, '%');
    case '@': return lexSigilName(loc, TokenKind::kAtName, '@');
    case '"': {
      t.kind = TokenKind::kString;
      t.quoted = true;
      std::string error = lexQuoted(t.text, loc);
      if (!error.empty()) return makeError(quotedErrorLoc_, error);
      return t;
    }
    default: break;
  }
  if (c == '.' && peekChar(1) == '.' && peekChar(2) == '.') return punct(TokenKind::kEllipsis, 3);
  if (isDigit(c) || c == '-') return lexNumber(loc);
  if (isIdentStart(c)) return lexIdentifier(loc);
  advance();
  return makeError(loc, "unexpected character " + printableChar(c));
}

Token Lexer::lexNumber(SourceLoc loc) {
  size_t start = pos_;
  if (peekChar() == '-') advance();
  // `-inf` and `-nan` are single float tokens so that lists like [-inf]
  // need no unary-minus rule in the parser.
  if (isIdentStart(peekChar())) {
    size_t wordStart = pos_;
    advanceWhile(isIdentChar);
    std::string_view word = source_.substr(wordStart, pos_ - wordStart);
    if (word != "inf" && word != "nan")
      return makeError(loc, "expected a number after '" + std::string(1, source_[start]) +
                                "', found '" + std::string(word) + "'");
    Token t;
    t.kind = TokenKind::kFloat;
    t.text = source_.substr(start, pos_ - start);
    t.loc = loc;
    return t;
  }
  if (!isDigit(peekChar()))
    return makeError(loc, "expected a digit after '" + std::string(1, source_[start]) + "'");
  Token t;
  t.kind = TokenKind::kInteger;
  t.loc = loc;
  if (peekChar() == '0' && (peekChar(1) == 'x' || peekChar(1) == 'X')) {
    advance(2);
    if (!isHexDigit(peekChar())) return makeError(loc, "expected hex digits after '0x'");
    advanceWhile(isHexDigit);
  } else {
    advanceWhile(isDigit);
    if (peekChar() == '.' && isDigit(peekChar(1))) {
      t.kind = TokenKind::kFloat;
      advance();
      advanceWhile(isDigit);
    }
    if ((peekChar() == 'e' || peekChar() == 'E') &&
        (isDigit(peekChar(1)) ||
         ((peekChar(1) == '+' || peekChar(1) == '-') && isDigit(peekChar(2))))) {
      t.kind = TokenKind::kFloat;
      advance(2);
      advanceWhile(isDigit);
    }
  }
  if (isIdentChar(peekChar()) || peekChar() == '.') {
    return makeError(here(), "unexpected " + printableChar(peekChar()) + " after number '" +
                                 std::string(source_.substr(start, pos_ - start)) + "'");
  }
  t.text = source_.substr(start, pos_ - start);
  return t;
}

Token Lexer::lexIdentifier(SourceLoc loc) {
  size_t start = pos_;
  while (true) {
    advanceWhile(isIdentChar);
    // A dot continues the identifier only when another segment follows, so
    // `onednn.ConvBnRelu` is one token.
    if (peekChar() == '.' && isIdentStart(peekChar(1)))
      advance();
    else
      break;
  }
  Token t;
  t.kind = TokenKind::kIdentifier;
  t.text = source_.substr(start, pos_ - start);
  t.loc = loc;
  return t;
}

Token Lexer::lexSigilName(SourceLoc loc, TokenKind kind, char sigil) {
  advance();  // the sigil
  Token t;
  t.kind = kind;
  t.loc = loc;
  if (peekChar() == '"') {
    t.quoted = true;
    std::string error = lexQuoted(t.text, here());
    if (!error.empty()) return makeError(quotedErrorLoc_, error);
    return t;
  }
  size_t start = pos_;
  advanceWhile(isSigilNameChar);
  if (pos_ == start) {
    std::string found = atEnd() ? "end of input" : printableChar(peekChar());
    return makeError(loc, std::string("expected a name or a quoted string after '") + sigil +
                              "', found " + found);
  }
  t.text = source_.substr(start, pos_ - start);
  return t;
}

std::string Lexer::lexQuoted(std::string_view& out, SourceLoc openLoc) {
  advance();  // opening quote
  quotedErrorLoc_ = openLoc;
  // Nearly every string has no escapes: its bytes are the source's, and
  // the token views them there.
  const size_t start = pos_;
  while (!atEnd()) {
    char c = source_[pos_];
    if (c == '\n') return "unterminated string: missing closing '\"' before end of line";
    if (c == '"') {
      out = source_.substr(start, pos_ - start);
      advance();
      return {};
    }
    if (c == '\\') {
      std::string decoded(source_.substr(start, pos_ - start));
      std::string error = lexEscapedRest(decoded);
      if (error.empty()) out = store_.keep(decoded);
      return error;
    }
    advance();
  }
  return "unterminated string: missing closing '\"' before end of input";
}

std::string Lexer::lexEscapedRest(std::string& out) {
  const SourceLoc openLoc = quotedErrorLoc_;
  while (true) {
    quotedErrorLoc_ = openLoc;
    if (atEnd()) return "unterminated string: missing closing '\"' before end of input";
    char c = peekChar();
    if (c == '\n') return "unterminated string: missing closing '\"' before end of line";
    if (c == '"') {
      advance();
      return {};
    }
    if (c != '\\') {
      out += c;
      advance();
      continue;
    }
    if (pos_ + 1 >= source_.size())
      return "unterminated string: missing closing '\"' before end of input";
    char e = peekChar(1);
    quotedErrorLoc_ = here();
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'x': {
        if (!isHexDigit(peekChar(2)) || !isHexDigit(peekChar(3)))
          return "escape '\\x' needs two hex digits";
        auto hex = [](char h) { return h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10; };
        out += static_cast<char>(hex(peekChar(2)) * 16 + hex(peekChar(3)));
        advance(4);
        continue;
      }
      default:
        return "unknown escape '\\' followed by " + printableChar(e) +
               " in string (use \\\" \\\\ \\n \\t \\r or \\xHH)";
    }
    advance(2);
  }
}

}  // namespace subgraph::text
