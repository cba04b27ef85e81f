//===- runtime/reference/kernel_util.h - Shared reference-kernel helpers -*- C++ -*-===//
//
// Internal to the reference backend: 16-bit float types, element-type
// dispatch, numpy broadcasting over collapsed dims, axis normalization,
// reading shape-like inputs, parallel loops, and the creator template every
// kernel file uses to register itself.
//
// Invariant of the dispatch helpers: a kernel instantiates its loop only for
// the element types its op allows, and reports any other type as one error
// line naming the node and the type.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

// SUBGRAPH_ISA_CLONES before a function compiles it for AVX-512 (x86-64-v4),
// AVX2 (v3) and baseline x86-64, picked once at load. The loop kernels it
// marks keep a fixed order of operations, and floating-point contraction is
// off, so every clone gives the same bits.
//
// ThreadSanitizer instruments the ifunc resolver that target_clones emits,
// and the dynamic loader runs that resolver before TSan's runtime exists
// (a SIGSEGV in __tsan_func_entry at startup); TSan builds use one clone.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SUBGRAPH_NO_IFUNC 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SUBGRAPH_NO_IFUNC 1
#endif

#if defined(__GNUC__) && defined(__x86_64__) && !defined(SUBGRAPH_NO_IFUNC)
#define SUBGRAPH_ISA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SUBGRAPH_ISA_CLONES
#endif

#include "subgraph/ir/graph.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/runtime/kernel.h"
#include "subgraph/support/checked_int.h"
#include "subgraph/support/half.h"

namespace subgraph::runtime::reference {

//===--- 16-bit floats ----------------------------------------------------===//

/// IEEE binary16, stored as bits; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
};
/// bfloat16 (the top half of a binary32), stored as bits.
struct BFloat16 {
  uint16_t bits = 0;
};

/// The type arithmetic on T is done in: float for the 16-bit floats.
template <typename T>
struct ComputeType {
  using type = T;
};
template <>
struct ComputeType<Half> {
  using type = float;
};
template <>
struct ComputeType<BFloat16> {
  using type = float;
};
template <typename T>
using Compute = typename ComputeType<T>::type;

/// Widens an element to its compute type.
template <typename T>
inline Compute<T> load(T v) {
  return v;
}
template <>
inline float load(Half v) {
  return halfBitsToFloat(v.bits);
}
template <>
inline float load(BFloat16 v) {
  return bfloat16BitsToFloat(v.bits);
}

/// Narrows a compute value back to T.
template <typename T>
inline T store(Compute<T> v) {
  return static_cast<T>(v);
}
template <>
inline Half store(float v) {
  return Half{floatToHalfBits(v)};
}
template <>
inline BFloat16 store(float v) {
  return BFloat16{floatToBFloat16Bits(v)};
}

/// x + y, x - y and x * y that wrap around for integers (two's complement,
/// as ONNX Runtime's integer kernels do) instead of overflowing, which C++
/// leaves undefined; plain arithmetic for floats.
template <typename C>
C wrapAdd(C x, C y) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}
template <typename C>
C wrapSub(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(x) - static_cast<U>(y));
  } else {
    return x - y;
  }
}
template <typename C>
C wrapMul(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    // Promote first: uint16 * uint16 would otherwise promote to a signed int
    // and could overflow.
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    return static_cast<C>(static_cast<U>(x) * static_cast<U>(y));
  } else {
    return x * y;
  }
}

//===--- Element-type dispatch --------------------------------------------===//

template <typename T>
struct TypeTag {
  using type = T;
};

/// Element-type families a dispatch may accept; combine with |.
enum TypeBits : unsigned {
  kFloatTypes = 1,    ///< f16, bf16, f32, f64
  kSignedInts = 2,    ///< i8, i16, i32, i64
  kUnsignedInts = 4,  ///< u8, u16, u32, u64
  kBoolType = 8,      ///< bool
  kIndexTypes = 16,   ///< i32, i64 only
};
inline constexpr unsigned kSignedNumeric = kFloatTypes | kSignedInts;
inline constexpr unsigned kNumeric = kFloatTypes | kSignedInts | kUnsignedInts;
inline constexpr unsigned kAllTypes = kNumeric | kBoolType;

/// Calls f(TypeTag<T>{}) for `dtype` if it is in `Bits`, and returns
/// whether it did. Only the types in `Bits` are instantiated, so f may use
/// operations that other types lack.
template <unsigned Bits, typename F>
bool visitType(DataType dtype, F&& f) {
#define SUBGRAPH_VISIT_CASE(DT, T, FAMILY)  \
  case DataType::DT:                        \
    if constexpr ((Bits & (FAMILY)) != 0) { \
      f(TypeTag<T>{});                      \
      return true;                          \
    } else {                                \
      return false;                         \
    }
  switch (dtype) {
    SUBGRAPH_VISIT_CASE(kFloat32, float, kFloatTypes)
    SUBGRAPH_VISIT_CASE(kFloat64, double, kFloatTypes)
    SUBGRAPH_VISIT_CASE(kFloat16, Half, kFloatTypes)
    SUBGRAPH_VISIT_CASE(kBFloat16, BFloat16, kFloatTypes)
    SUBGRAPH_VISIT_CASE(kInt8, int8_t, kSignedInts)
    SUBGRAPH_VISIT_CASE(kInt16, int16_t, kSignedInts)
    SUBGRAPH_VISIT_CASE(kInt32, int32_t, kSignedInts | kIndexTypes)
    SUBGRAPH_VISIT_CASE(kInt64, int64_t, kSignedInts | kIndexTypes)
    SUBGRAPH_VISIT_CASE(kUInt8, uint8_t, kUnsignedInts)
    SUBGRAPH_VISIT_CASE(kUInt16, uint16_t, kUnsignedInts)
    SUBGRAPH_VISIT_CASE(kUInt32, uint32_t, kUnsignedInts)
    SUBGRAPH_VISIT_CASE(kUInt64, uint64_t, kUnsignedInts)
    SUBGRAPH_VISIT_CASE(kBool, bool, kBoolType)
    default: return false;
  }
#undef SUBGRAPH_VISIT_CASE
}

/// Calls f(TypeTag<U>{}) with U an unsigned integer as wide as one element
/// of `dtype`, for kernels that only move elements around. Returns false
/// for sizes other than 1, 2, 4 and 8 bytes.
template <typename F>
bool visitBySize(DataType dtype, F&& f) {
  switch (dataTypeSize(dtype)) {
    case 1: f(TypeTag<uint8_t>{}); return true;
    case 2: f(TypeTag<uint16_t>{}); return true;
    case 4: f(TypeTag<uint32_t>{}); return true;
    case 8: f(TypeTag<uint64_t>{}); return true;
    default: return false;
  }
}

/// True if `dtype` belongs to the families in `bits`.
bool typeInSet(DataType dtype, unsigned bits);

/// True for the 16-bit float storage types.
template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// "<op> node '<name>': element type <t> is not supported".
Status unsupportedType(const Node* node, DataType dtype);

//===--- Work limits ------------------------------------------------------===//

/// The kernel work limit (WorkLimits::kernelWork, 0: none) of the session
/// whose kernels are being made; kernels read it once, when created.
uint64_t kernelWorkLimit();

/// Where an attribute or the data, not the size of the tensors, sets how
/// many steps (samples, window taps) a kernel takes, it checks the count
/// here first: kLimitExceeded naming the node, `what` sets the count and
/// the limit when `steps` passes `limit` (a count that overflowed passes
/// every limit); OK otherwise or when `limit` is 0.
Status checkKernelWork(const Node* node, CheckedInt steps, uint64_t limit, const std::string& what);

//===--- Shapes and axes --------------------------------------------------===//

/// Multidirectional (numpy) broadcast of several shapes; false when two
/// dims differ and neither is 1.
bool broadcastDims(std::span<const std::vector<int64_t>* const> shapes, std::vector<int64_t>& out);

/// Maps `axis` in [-rank, rank) to [0, rank); false when out of range.
bool normalizeAxis(int64_t& axis, int64_t rank);

/// Elements of an integer (or bool/float) tensor as int64.
std::vector<int64_t> readInts(const TensorView& view);
/// Elements of a numeric tensor as double.
std::vector<double> readDoubles(const TensorView& view);

/// The ai.onnx opset the node's graph imports (a large number if none).
int64_t opsetOf(const Node& node);

/// "[1, 2, 3]".
std::string dimsToString(std::span<const int64_t> dims);

/// Runs f(begin, end) over [0, n), in parallel when n * costPerItem is
/// large enough to be worth the scheduling.
template <typename F>
void parallelFor(int64_t n, int64_t costPerItem, F&& f) {
  if (n <= 0) return;
  constexpr int64_t kSerialWork = 1 << 15;
  if (n == 1 || n * std::max<int64_t>(costPerItem, 1) < kSerialWork) {
    f(int64_t{0}, n);
    return;
  }
  int64_t grain = std::max<int64_t>(1, kSerialWork / std::max<int64_t>(costPerItem, 1));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { f(r.begin(), r.end()); });
}

//===--- Broadcast iteration ----------------------------------------------===//

/// Iterates an output of `outDims` and up to four inputs broadcast to it,
/// as rows of the innermost (collapsed) dim. For each row it calls
/// f(outOffset, inOffsets, inSteps, count) where inSteps[k] is 0 (the input
/// repeats along the row) or 1. Rows run in parallel.
class BroadcastLoop {
 public:
  static constexpr size_t kMaxInputs = 4;
  BroadcastLoop(std::span<const int64_t> outDims,
                std::span<const std::vector<int64_t>* const> inputDims);

  template <typename F>
  void run(F&& f) const {
    int64_t rows = numRows_;
    parallelFor(rows, inner_, [&](int64_t begin, int64_t end) {
      int64_t offs[kMaxInputs];
      for (int64_t r = begin; r < end; ++r) {
        rowOffsets(r, offs);
        f(r * inner_, offs, steps_, inner_);
      }
    });
  }
  int64_t total() const { return numRows_ * inner_; }

 private:
  void rowOffsets(int64_t row, int64_t* offs) const;
  size_t numInputs_ = 0;
  int64_t inner_ = 1;
  int64_t numRows_ = 1;
  std::vector<int64_t> outerDims_;                  // collapsed outer dims
  std::vector<std::vector<int64_t>> outerStrides_;  // per input, per outer dim
  int64_t steps_[kMaxInputs] = {0, 0, 0, 0};
};

//===--- Registration -----------------------------------------------------===//

/// A creator that constructs K from the node (K's constructor may throw
/// `Error` for invalid attributes).
template <typename K>
KernelCreator creatorFor() {
  return [](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<K>(node));
  };
}

/// Throws `Error` naming the node; for attribute checks in constructors.
[[noreturn]] void throwNodeError(const Node& node, const std::string& message);

}  // namespace subgraph::runtime::reference
