//===- subgraph/support/checked_int.h - Overflow-aware int64 ----*- C++ -*-===//
//
// Sizes, offsets and shapes computed from model data (dims, pads, steps,
// block sizes) come from untrusted files, and a product or sum that wraps
// silently yields a wrong shape or a division by zero (SIGFPE). Such
// formulas in kernels' resize() and in the tools go through CheckedInt,
// which either holds the exact value or says it overflowed, so the caller
// can fail with a message instead. (Shape inference has had the same class,
// private to core/ops, in infer_helpers.h; it is to move here.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>

namespace subgraph {

/// int64 arithmetic that remembers overflow, for size formulas fed by
/// attributes and dims from untrusted files: `(CheckedInt(k) - 1) * d + 1`
/// either holds the exact value or is not ok().
class CheckedInt {
 public:
  CheckedInt(int64_t v) : value_(v) {}  // NOLINT: implicit, to mix with int64_t
  /// False when any step of the computation overflowed or divided by zero.
  bool ok() const { return ok_; }
  /// The value; only meaningful when ok().
  int64_t value() const { return value_; }
  /// The value when ok(), else nullopt.
  std::optional<int64_t> get() const { return ok_ ? std::optional<int64_t>(value_) : std::nullopt; }

  // The overflow flag is computed before combine() sees `a`: as an
  // argument beside `a` it would depend on the order in which the compiler
  // evaluates arguments, and clang (left to right) copies `a` before the
  // builtin writes the result into it, so every sum was its left operand.
  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    const bool overflow = __builtin_add_overflow(a.value_, b.value_, &a.value_);
    return combine(a, b, overflow);
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    const bool overflow = __builtin_sub_overflow(a.value_, b.value_, &a.value_);
    return combine(a, b, overflow);
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    const bool overflow = __builtin_mul_overflow(a.value_, b.value_, &a.value_);
    return combine(a, b, overflow);
  }
  /// Truncating division; division by zero is not ok().
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    bool bad = b.value_ == 0 || (b.value_ == -1 && a.value_ == INT64_MIN);
    if (!bad) a.value_ /= b.value_;
    return combine(a, b, bad);
  }
  /// Remainder; division by zero is not ok().
  friend CheckedInt operator%(CheckedInt a, CheckedInt b) {
    bool bad = b.value_ == 0 || (b.value_ == -1 && a.value_ == INT64_MIN);
    a.value_ = bad ? 0 : a.value_ % b.value_;
    return combine(a, b, bad);
  }

 private:
  static CheckedInt combine(CheckedInt result, CheckedInt other, bool overflow) {
    result.ok_ = result.ok_ && other.ok_ && !overflow;
    return result;
  }
  int64_t value_;
  bool ok_ = true;
};

}  // namespace subgraph
