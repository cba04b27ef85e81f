//===- core/text/syntax.h - Lexical rules shared by printer and parser ----===//
//
// The printer and the parser must agree exactly on which names may be written
// bare, how strings are escaped and how floating-point numbers are spelled, or
// the round trip breaks. Both therefore take those rules from this one place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <string_view>
#include "subgraph/support/half.h"

#include "subgraph/ir/types.h"

namespace subgraph::text {

// The character classes are inline, and read one table: the lexer asks
// them once per byte of the input, and an out-of-line call or a chain of
// range tests per byte was a visible share of the time to load a large
// graph.
namespace detail {
inline constexpr uint8_t kIdentStartClass = 1, kIdentCharClass = 2, kSigilNameClass = 4;
inline constexpr std::array<uint8_t, 256> kCharClasses = [] {
  std::array<uint8_t, 256> table{};
  constexpr uint8_t kLetter = kIdentStartClass | kIdentCharClass | kSigilNameClass;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = kLetter;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = kLetter;
  table['_'] = kLetter;
  for (int c = '0'; c <= '9'; ++c) table[c] = kIdentCharClass | kSigilNameClass;
  table['.'] = kSigilNameClass;
  return table;
}();
inline bool inClass(char c, uint8_t cls) {
  return (kCharClasses[static_cast<unsigned char>(c)] & cls) != 0;
}
}  // namespace detail

/// True for a character that may start an identifier: [A-Za-z_].
inline bool isIdentStart(char c) { return detail::inClass(c, detail::kIdentStartClass); }
/// True for a character that may continue an identifier: [A-Za-z0-9_].
inline bool isIdentChar(char c) { return detail::inClass(c, detail::kIdentCharClass); }
/// True for characters allowed in a bare `%value` or `@node` name:
/// [A-Za-z0-9_.], so that ONNX names like `input.1` or `layer1.0.conv1` need
/// no quotes.
inline bool isSigilNameChar(char c) { return detail::inClass(c, detail::kSigilNameClass); }

/// True if `name` can follow `%` or `@` without quotes.
bool isBareSigilName(std::string_view name);
/// True if `name` is a plain identifier ([A-Za-z_][A-Za-z0-9_]*) that is not
/// a reserved word, i.e. an attribute name or dim symbol that needs no quotes.
bool isBareIdentifier(std::string_view name);
/// True if `name` is a dotted identifier (`onednn.ConvBnRelu`) usable as a
/// bare op name or opset domain without quotes.
bool isBareDottedIdentifier(std::string_view name);
/// True for the words the grammar reserves (`graph`, `const`, `return`, ...),
/// which the printer quotes wherever a name could be mistaken for them.
bool isReservedWord(std::string_view word);

/// `"..."` with `\"`, `\\`, `\n`, `\t`, `\r` and `\xHH` escapes for other
/// control bytes. Bytes >= 0x80 are kept raw so UTF-8 stays readable.
std::string quoteString(std::string_view s);
/// `%name`, quoted when the name is not bare.
std::string sigilName(char sigil, std::string_view name);
/// A user-given name inside an error message: `'name'` when it is plain
/// printable text, else the escaped `"..."` form, so that a message stays
/// one line whatever the input holds.
std::string nameForMessage(std::string_view name);
/// `[1, N, "a b", ?]`: a shape as the text format writes it, with symbols
/// quoted when they are not bare identifiers.
std::string shapeText(const Shape& shape);

/// The spelling of a float attribute or f32 element that parses back to the
/// same bits: shortest round-trip digits, always with a `.`, an exponent,
/// `inf` or `nan` so that it lexes as a float; `nan(0x...)` for a NaN other
/// than the default quiet NaN of either sign.
std::string formatF32(float value);
/// As formatF32 for f64 elements.
std::string formatF64(double value);
/// As formatF32 for f16 elements given as raw IEEE half bits; picks the
/// fewest digits that parse back (through float) to the same half.
std::string formatF16(uint16_t bits);
/// As formatF16 for bfloat16 bits.
std::string formatBF16(uint16_t bits);

/// The bits the parser gives a plain `nan` (negated: `-nan`) of a float
/// dtype; the printer spells exactly these as `nan`/`-nan`.
uint64_t canonicalNanBits(DataType dtype, bool negative);

}  // namespace subgraph::text
