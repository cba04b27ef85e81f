//===- subgraph/support/half.h - IEEE half and bfloat16 conversions -*- C++ -*-===//
//
// The one conversion between float and the two 16-bit float formats, used
// by the text format, tensors, the constant folder and the runtime's
// kernels alike, so that a value folded at compile time and the same value
// computed at run time are the same bits. Narrowing rounds to nearest even
// (subnormal halves included: 2^-24 is the half 0x0001, not 0), overflow
// gives infinity, and a NaN stays a quiet NaN with its top payload bits.
// Widening is exact.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace subgraph {

/// IEEE half bits to float; exact, since every half is a float.
inline float halfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  // A subnormal half is mant * 2^-24, exact in float.
  const float magnitude = std::ldexp(static_cast<float>(mant), -24);
  return sign ? -magnitude : magnitude;
}

/// Float to IEEE half bits, rounding to nearest even; NaNs stay quiet NaNs.
inline uint16_t floatToHalfBits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf, or NaN keeping its top payload bits, made quiet
    if (absx == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    return static_cast<uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (absx <= 0x33000000u) return sign;  // at most 2^-25: rounds (to even) to zero
  const uint32_t exp = absx >> 23;
  const uint32_t mant = absx & 0x7fffffu;
  uint32_t result, remainder, halfway;
  if (exp < 113) {
    // A half subnormal, in units of 2^-24: the float's significand (with
    // its implicit bit, in units of 2^(exp - 150)) shifted by 126 - exp.
    const uint32_t full = mant | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    result = full >> shift;
    remainder = full & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {
    result = ((exp - 112) << 10) | (mant >> 13);
    remainder = mant & 0x1fffu;
    halfway = 0x1000u;
  }
  if (remainder > halfway || (remainder == halfway && (result & 1u)))
    ++result;  // may carry into the exponent, up to infinity: still right
  return static_cast<uint16_t>(sign | result);
}

/// bfloat16 bits to float; exact.
inline float bfloat16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

/// Float to bfloat16 bits, rounding to nearest even; NaNs stay quiet NaNs.
inline uint16_t floatToBFloat16Bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace subgraph
