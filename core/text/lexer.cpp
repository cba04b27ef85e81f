//===- core/text/lexer.cpp - Tokens of the graph text format --------------===//
//
// A hand-written, single-pass lexer. It works in bounded memory per token and
// never looks further back than the token it is building, so arbitrary input
// (fuzzed bytes, NULs, unterminated strings) ends in an Error token rather
// than a crash or a hang.
//
//===----------------------------------------------------------------------===//
#include "lexer.h"

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
    case TokenKind::kIdentifier: return "identifier '" + token.text + "'";
    case TokenKind::kValueName: return "value " + sigilName('%', token.text);
    case TokenKind::kAtName: return "name " + sigilName('@', token.text);
    case TokenKind::kInteger: return "integer " + token.text;
    case TokenKind::kFloat: return "float " + token.text;
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

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < source_.size(); ++i, ++pos_) {
    if (source_[pos_] == '\n') {
      ++loc_.line;
      loc_.column = 1;
    } else {
      ++loc_.column;
    }
  }
}

void Lexer::skipSpaceAndComments() {
  while (!atEnd()) {
    char c = peekChar();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '#') {
      while (!atEnd() && peekChar() != '\n') advance();
    } else {
      break;
    }
  }
}

Token Lexer::makeError(SourceLoc loc, std::string message) const {
  Token t;
  t.kind = TokenKind::kError;
  t.text = std::move(message);
  t.loc = loc;
  return t;
}

Token Lexer::next() {
  skipSpaceAndComments();
  SourceLoc loc = loc_;
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
    while (isIdentChar(peekChar())) advance();
    std::string_view word = source_.substr(wordStart, pos_ - wordStart);
    if (word != "inf" && word != "nan")
      return makeError(loc, "expected a number after '" + std::string(1, source_[start]) +
                                "', found '" + std::string(word) + "'");
    Token t;
    t.kind = TokenKind::kFloat;
    t.text = std::string(source_.substr(start, pos_ - start));
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
    while (isHexDigit(peekChar())) advance();
  } else {
    while (isDigit(peekChar())) advance();
    if (peekChar() == '.' && isDigit(peekChar(1))) {
      t.kind = TokenKind::kFloat;
      advance();
      while (isDigit(peekChar())) advance();
    }
    if ((peekChar() == 'e' || peekChar() == 'E') &&
        (isDigit(peekChar(1)) ||
         ((peekChar(1) == '+' || peekChar(1) == '-') && isDigit(peekChar(2))))) {
      t.kind = TokenKind::kFloat;
      advance(2);
      while (isDigit(peekChar())) advance();
    }
  }
  if (isIdentChar(peekChar()) || peekChar() == '.') {
    SourceLoc bad = loc_;
    return makeError(bad, "unexpected " + printableChar(peekChar()) + " after number '" +
                              std::string(source_.substr(start, pos_ - start)) + "'");
  }
  t.text = std::string(source_.substr(start, pos_ - start));
  return t;
}

Token Lexer::lexIdentifier(SourceLoc loc) {
  size_t start = pos_;
  while (true) {
    while (isIdentChar(peekChar())) advance();
    // A dot continues the identifier only when another segment follows, so
    // `onednn.ConvBnRelu` is one token.
    if (peekChar() == '.' && isIdentStart(peekChar(1)))
      advance();
    else
      break;
  }
  Token t;
  t.kind = TokenKind::kIdentifier;
  t.text = std::string(source_.substr(start, pos_ - start));
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
    std::string error = lexQuoted(t.text, loc_);
    if (!error.empty()) return makeError(quotedErrorLoc_, error);
    return t;
  }
  size_t start = pos_;
  while (isSigilNameChar(peekChar())) advance();
  if (pos_ == start) {
    std::string found = atEnd() ? "end of input" : printableChar(peekChar());
    return makeError(loc, std::string("expected a name or a quoted string after '") + sigil +
                              "', found " + found);
  }
  t.text = std::string(source_.substr(start, pos_ - start));
  return t;
}

std::string Lexer::lexQuoted(std::string& out, SourceLoc openLoc) {
  advance();  // opening quote
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
    quotedErrorLoc_ = loc_;
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
