//===- core/text/syntax.cpp - Lexical rules shared by printer and parser --===//
//
// Character classes, quoting and number spelling for the text format. Float
// spelling is the delicate part: every element must parse back to the very
// same bits (NaN payloads and -0.0 included), and f16/bf16 values should
// still read like the numbers a person wrote (`0.1`, not `0.099975586`).
//
//===----------------------------------------------------------------------===//
#include "syntax.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace subgraph::text {
namespace {

constexpr std::array<std::string_view, 12> kReservedWords = {"graph",  "const", "return", "splat",
                                                             "opset",  "ints",  "floats", "strings",
                                                             "graphs", "nan",   "inf",    "_"};

// Makes a to_chars result lex as a float: "1" -> "1.0", "-0" -> "-0.0".
std::string ensureFloatSpelling(std::string s) {
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string hexBits(uint64_t bits, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "nan(0x%0*llx)", width, static_cast<unsigned long long>(bits));
  return buf;
}

// Spelling of a NaN: `nan`/`-nan` for the canonical bit patterns, otherwise
// the exact bits, since payloads must survive the round trip.
std::string formatNan(DataType dtype, uint64_t bits, bool negative, int hexWidth) {
  if (bits == canonicalNanBits(dtype, negative)) return negative ? "-nan" : "nan";
  return hexBits(bits, hexWidth);
}

// Fewest significant digits of `value` (a float holding a 16-bit float
// exactly) that parse back as a float which rounds to the same 16 bits.
template <typename RoundFn>
std::string shortestNarrow(float value, uint16_t bits, RoundFn round) {
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, precision);
    float back = 0;
    auto parsed = std::from_chars(buf, res.ptr, back);
    if (parsed.ec == std::errc() && round(back) == bits)
      return ensureFloatSpelling(std::string(buf, res.ptr));
  }
  // Nine significant digits always identify a float exactly, and `value`
  // is exact, so the loop above returns; this keeps the compiler content.
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  return ensureFloatSpelling(std::string(buf, res.ptr));
}

}  // namespace

bool isBareSigilName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!isSigilNameChar(c)) return false;
  return true;
}

bool isReservedWord(std::string_view word) {
  for (std::string_view w : kReservedWords)
    if (w == word) return true;
  return false;
}

bool isBareIdentifier(std::string_view name) {
  if (name.empty() || !isIdentStart(name[0]) || isReservedWord(name)) return false;
  for (char c : name)
    if (!isIdentChar(c)) return false;
  return true;
}

bool isBareDottedIdentifier(std::string_view name) {
  if (name.empty() || isReservedWord(name)) return false;
  bool atSegmentStart = true;
  for (char c : name) {
    if (atSegmentStart) {
      if (!isIdentStart(c)) return false;
      atSegmentStart = false;
    } else if (c == '.') {
      atSegmentStart = true;
    } else if (!isIdentChar(c)) {
      return false;
    }
  }
  return !atSegmentStart;
}

std::string quoteString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\x%02x", u);
          out += buf;
        } else {
          out += c;
        }
      }
    }
  }
  out += '"';
  return out;
}

std::string sigilName(char sigil, std::string_view name) {
  std::string out(1, sigil);
  out += isBareSigilName(name) ? std::string(name) : quoteString(name);
  return out;
}

std::string nameForMessage(std::string_view name) {
  bool plain = true;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    plain &= u >= 0x20 && u < 0x7f && c != '\'';
  }
  return plain ? "'" + std::string(name) + "'" : quoteString(name);
}

std::string shapeText(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    const Dim& d = shape[i];
    if (d.isStatic())
      out += std::to_string(d.size());
    else if (d.isSymbolic())
      out += isBareIdentifier(d.symbolName()) ? d.symbolName() : quoteString(d.symbolName());
    else
      out += '?';
  }
  out += ']';
  return out;
}

uint64_t canonicalNanBits(DataType dtype, bool negative) {
  switch (dtype) {
    case DataType::kFloat64: return negative ? 0xfff8000000000000ULL : 0x7ff8000000000000ULL;
    case DataType::kFloat16: return negative ? 0xfe00 : 0x7e00;
    case DataType::kBFloat16: return negative ? 0xffc0 : 0x7fc0;
    default: return negative ? 0xffc00000U : 0x7fc00000U;
  }
}

std::string formatF32(float value) {
  if (std::isnan(value))
    return formatNan(DataType::kFloat32, std::bit_cast<uint32_t>(value), std::signbit(value), 8);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  return ensureFloatSpelling(std::string(buf, res.ptr));
}

std::string formatF64(double value) {
  if (std::isnan(value))
    return formatNan(DataType::kFloat64, std::bit_cast<uint64_t>(value), std::signbit(value), 16);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  return ensureFloatSpelling(std::string(buf, res.ptr));
}

std::string formatF16(uint16_t bits) {
  if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0)
    return formatNan(DataType::kFloat16, bits, (bits & 0x8000) != 0, 4);
  return shortestNarrow(halfBitsToFloat(bits), bits, floatToHalfBits);
}

std::string formatBF16(uint16_t bits) {
  if ((bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0)
    return formatNan(DataType::kBFloat16, bits, (bits & 0x8000) != 0, 4);
  return shortestNarrow(bfloat16BitsToFloat(bits), bits, floatToBFloat16Bits);
}

}  // namespace subgraph::text
