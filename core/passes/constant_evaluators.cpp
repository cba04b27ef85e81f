//===- core/passes/constant_evaluators.cpp - Evaluating constant nodes ----===//
//
// One small evaluator per op, looked up by op name. Every evaluator first
// validates its inputs and computes the result's dims, then checks the size
// limit, and only then allocates and computes: a ConstantOfShape asking for
// 10^12 elements must be refused, not attempted.
//
// Element handling is deliberately uniform rather than fast:
//  * data movement (Gather, Slice, Transpose, Concat, Expand, Tile, Where,
//    Reshape, ...) copies raw elements and so works for every element type,
//    strings included;
//  * floating-point math reads each element as double and rounds the result
//    once to the element type, which gives correctly rounded f32 results for
//    + - * / and sqrt;
//  * integer math runs in int64 with two's-complement wrap-around, and
//    refuses what ONNX leaves undefined (division by zero, negative powers,
//    out-of-range float-to-int casts) instead of guessing.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/constant_evaluators.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "subgraph/ir/attribute.h"
#include "subgraph/support/half.h"

namespace subgraph {
namespace {

using Dims = std::vector<int64_t>;
using Outputs = std::vector<Tensor>;

//===--- Context and small helpers ----------------------------------------===//

/// What an evaluator sees: the node (for attributes and messages), its
/// constant inputs and the limits.
struct EvalContext {
  const Node& node;
  std::span<const Tensor* const> inputs;
  const EvaluationLimits& limits;

  const Tensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  std::string prefix() const {
    return node.qualifiedOpType() + " node '" + node.displayName() + "': ";
  }
  Status invalid(const std::string& message) const {
    return Status(StatusCode::kInvalidArgument, prefix() + message);
  }
  Status unsupported(const std::string& message) const {
    return Status(StatusCode::kUnsupported, prefix() + message);
  }
};

// The number of elements of `dims`, or nullopt on a negative dim or int64
// overflow.
std::optional<int64_t> countOf(const Dims& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    count *= d;
  }
  return count;
}

// Checks that a result of `dims` is well formed and within the limit, and
// returns its element count.
StatusOr<int64_t> checkResultSize(const EvalContext& ctx, const Dims& dims) {
  std::optional<int64_t> count = countOf(dims);
  if (!count) return ctx.invalid("result shape has a negative dim or overflows int64");
  if (*count > ctx.limits.maxOutputElements)
    return Status(StatusCode::kLimitExceeded, ctx.prefix() + "result has " +
                                                  std::to_string(*count) +
                                                  " elements, over the limit of " +
                                                  std::to_string(ctx.limits.maxOutputElements));
  return *count;
}

std::string dimsToString(const Dims& dims) {
  return shapeToString(Shape(dims.begin(), dims.end()));
}

// Row-major strides of `dims`.
Dims stridesOf(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

StatusOr<const Tensor*> requireInput(const EvalContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t) return ctx.invalid("input #" + std::to_string(i) + " is missing");
  return t;
}

// Reads an integer tensor (shape, axes, indices, repeats) as int64 values.
StatusOr<Dims> readIntInput(const EvalContext& ctx, size_t i, const char* what) {
  StatusOr<const Tensor*> t = requireInput(ctx, i);
  if (!t) return t.status();
  if (!isInteger((*t)->dtype()))
    return ctx.invalid(std::string(what) + " must be an integer tensor, got " +
                       std::string(dataTypeName((*t)->dtype())));
  return (*t)->toInt64Vector();
}

// Maps `axis` in [-rank, rank) to [0, rank).
StatusOr<int64_t> normalizeAxis(const EvalContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

//===--- Element conversion ------------------------------------------------===//

template <typename T>
void store(std::vector<std::byte>& bytes, size_t i, T value) {
  std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
}

// Builds a tensor of `dtype` from values computed in double or int64.
template <typename Src>
Tensor makeTensor(DataType dtype, Dims dims, const std::vector<Src>& values) {
  std::vector<std::byte> bytes(values.size() * dataTypeSize(dtype));
  constexpr bool kFromDouble = std::is_same_v<Src, double>;
  auto asInt = [](Src v) {
    if constexpr (kFromDouble) {
      // Callers range-check float->int casts; this guard only keeps an
      // unexpected NaN or huge value from being undefined behaviour.
      return v >= -9.2e18 && v <= 9.2e18 ? static_cast<int64_t>(v) : int64_t{0};
    } else {
      return v;
    }
  };
  for (size_t i = 0; i < values.size(); ++i) {
    Src v = values[i];
    switch (dtype) {
      case DataType::kFloat32: store(bytes, i, static_cast<float>(v)); break;
      case DataType::kFloat64: store(bytes, i, static_cast<double>(v)); break;
      case DataType::kFloat16: store(bytes, i, floatToHalfBits(static_cast<float>(v))); break;
      case DataType::kBFloat16: store(bytes, i, floatToBFloat16Bits(static_cast<float>(v))); break;
      case DataType::kBool: store(bytes, i, static_cast<uint8_t>(v != 0 ? 1 : 0)); break;
      case DataType::kInt8: store(bytes, i, static_cast<int8_t>(asInt(v))); break;
      case DataType::kUInt8: store(bytes, i, static_cast<uint8_t>(asInt(v))); break;
      case DataType::kInt16: store(bytes, i, static_cast<int16_t>(asInt(v))); break;
      case DataType::kUInt16: store(bytes, i, static_cast<uint16_t>(asInt(v))); break;
      case DataType::kInt32: store(bytes, i, static_cast<int32_t>(asInt(v))); break;
      case DataType::kUInt32: store(bytes, i, static_cast<uint32_t>(asInt(v))); break;
      case DataType::kInt64: store(bytes, i, asInt(v)); break;
      case DataType::kUInt64: store(bytes, i, static_cast<uint64_t>(asInt(v))); break;
      default: break;  // callers only pass numeric types
    }
  }
  return Tensor(dtype, std::move(dims), std::move(bytes));
}

std::vector<double> readDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numElements()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.elementAsDouble(static_cast<int64_t>(i));
  return out;
}

// Element types the arithmetic evaluators accept. uint64 is refused because
// int64 arithmetic would misorder and misdivide values above 2^63.
bool isArithmeticType(DataType t) {
  return t != DataType::kString && t != DataType::kUndefined && t != DataType::kUInt64;
}

// The range of integer type `t` as doubles (for checked float->int casts).
std::pair<double, double> integerRange(DataType t) {
  switch (t) {
    case DataType::kInt8: return {-128.0, 127.0};
    case DataType::kUInt8: return {0.0, 255.0};
    case DataType::kInt16: return {-32768.0, 32767.0};
    case DataType::kUInt16: return {0.0, 65535.0};
    case DataType::kInt32: return {-2147483648.0, 2147483647.0};
    case DataType::kUInt32: return {0.0, 4294967295.0};
    // 2^63 itself is not representable in int64, hence the strict bound
    // below 9223372036854775808.0 applied by the caller.
    default: return {-9223372036854775808.0, 9223372036854775807.0};
  }
}

//===--- Raw element movement ----------------------------------------------===//

// A tensor of `dims` whose element i is `src` element srcIndex(i). Works for
// every element type because it copies raw elements.
template <typename IndexFn>
Tensor gatherElements(const Tensor& src, Dims dims, int64_t count, IndexFn srcIndex) {
  if (src.dtype() == DataType::kString) {
    std::vector<std::string> out(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      out[static_cast<size_t>(i)] = src.strings()[static_cast<size_t>(srcIndex(i))];
    return Tensor(std::move(dims), std::move(out));
  }
  size_t size = dataTypeSize(src.dtype());
  std::vector<std::byte> out(static_cast<size_t>(count) * size);
  const std::byte* in = src.bytes().data();
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(out.data() + static_cast<size_t>(i) * size,
                in + static_cast<size_t>(srcIndex(i)) * size, size);
  return Tensor(src.dtype(), std::move(dims), std::move(out));
}

// The same elements under new dims (Reshape, Squeeze, ...).
Tensor withDims(const Tensor& src, Dims dims) {
  if (src.dtype() == DataType::kString) return Tensor(std::move(dims), src.strings());
  auto bytes = src.bytes();
  return Tensor(src.dtype(), std::move(dims), std::vector<std::byte>(bytes.begin(), bytes.end()));
}

// The elements of `parts` (all of one element type) one after another, as a
// 1-D tensor.
Tensor joinFlat(const std::vector<const Tensor*>& parts) {
  int64_t total = 0;
  for (const Tensor* t : parts) total += t->numElements();
  if (parts.front()->dtype() == DataType::kString) {
    std::vector<std::string> strings;
    for (const Tensor* t : parts)
      strings.insert(strings.end(), t->strings().begin(), t->strings().end());
    return Tensor(Dims{total}, std::move(strings));
  }
  std::vector<std::byte> bytes;
  for (const Tensor* t : parts) bytes.insert(bytes.end(), t->bytes().begin(), t->bytes().end());
  return Tensor(parts.front()->dtype(), Dims{total}, std::move(bytes));
}

// Maps an index into a broadcast result to the index of the element of one
// input that it reads.
class BroadcastMap {
 public:
  BroadcastMap(const Dims& in, const Dims& out) : outDims_(out), strides_(out.size(), 0) {
    int64_t stride = 1;
    size_t offset = out.size() - in.size();
    for (size_t i = in.size(); i-- > 0;) {
      strides_[i + offset] = in[i] == 1 ? 0 : stride;
      stride *= in[i];
    }
  }
  int64_t operator()(int64_t index) const {
    int64_t source = 0;
    for (size_t r = outDims_.size(); r-- > 0;) {
      int64_t d = outDims_[r];
      source += (index % d) * strides_[r];
      index /= d;
    }
    return source;
  }

 private:
  Dims outDims_;
  Dims strides_;
};

// Numpy-style broadcast of two static shapes.
StatusOr<Dims> broadcastDims(const EvalContext& ctx, const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      return ctx.invalid("shapes " + dimsToString(a) + " and " + dimsToString(b) +
                         " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

//===--- Elementwise math -------------------------------------------------===//

/// The two implementations of a unary op; a null member means the op is not
/// defined for that family of types.
struct UnaryKernels {
  double (*real)(double) = nullptr;
  bool (*integer)(int64_t, int64_t&) = nullptr;
};

const UnaryKernels* unaryKernels(std::string_view op) {
  static const std::map<std::string_view, UnaryKernels> kTable = {
      {"Neg",
       {[](double a) { return -a; },
        [](int64_t a, int64_t& r) {
          r = static_cast<int64_t>(0 - static_cast<uint64_t>(a));
          return true;
        }}},
      {"Abs",
       {[](double a) { return std::fabs(a); },
        [](int64_t a, int64_t& r) {
          r = a < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a;
          return true;
        }}},
      {"Relu",
       {[](double a) { return a > 0 ? a : 0.0; },
        [](int64_t a, int64_t& r) {
          r = a > 0 ? a : 0;
          return true;
        }}},
      {"Sign",
       {[](double a) { return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0); },
        [](int64_t a, int64_t& r) {
          r = (a > 0) - (a < 0);
          return true;
        }}},
      {"Not",
       {nullptr,
        [](int64_t a, int64_t& r) {
          r = a == 0;
          return true;
        }}},
      {"Sqrt", {[](double a) { return std::sqrt(a); }, nullptr}},
      {"Reciprocal", {[](double a) { return 1.0 / a; }, nullptr}},
      {"Exp", {[](double a) { return std::exp(a); }, nullptr}},
      {"Log", {[](double a) { return std::log(a); }, nullptr}},
      {"Floor", {[](double a) { return std::floor(a); }, nullptr}},
      {"Ceil", {[](double a) { return std::ceil(a); }, nullptr}},
      {"Round", {[](double a) { return std::nearbyint(a); }, nullptr}},
      {"Erf", {[](double a) { return std::erf(a); }, nullptr}},
      {"Tanh", {[](double a) { return std::tanh(a); }, nullptr}},
      {"Sigmoid", {[](double a) { return 1.0 / (1.0 + std::exp(-a)); }, nullptr}},
      {"Sin", {[](double a) { return std::sin(a); }, nullptr}},
      {"Cos", {[](double a) { return std::cos(a); }, nullptr}},
  };
  auto it = kTable.find(op);
  return it == kTable.end() ? nullptr : &it->second;
}

StatusOr<Outputs> evalUnary(EvalContext& ctx) {
  const UnaryKernels* k = unaryKernels(ctx.node.opType());
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Tensor& t = **x;
  DataType dtype = t.dtype();
  if (!isArithmeticType(dtype))
    return ctx.unsupported("element type " + std::string(dataTypeName(dtype)));
  if ((ctx.node.opType() == "Not") != (dtype == DataType::kBool))
    return ctx.unsupported("element type " + std::string(dataTypeName(dtype)));
  StatusOr<int64_t> count = checkResultSize(ctx, t.dims());
  if (!count) return count.status();
  if (isFloatingPoint(dtype)) {
    if (!k->real) return ctx.unsupported("floating-point input");
    std::vector<double> v = readDoubles(t);
    for (double& e : v) e = k->real(e);
    return Outputs{makeTensor(dtype, t.dims(), v)};
  }
  if (!k->integer) return ctx.unsupported("integer input");
  std::vector<int64_t> v = t.toInt64Vector();
  for (int64_t& e : v)
    if (!k->integer(e, e)) return ctx.unsupported("result is undefined");
  return Outputs{makeTensor(dtype, t.dims(), v)};
}

/// The implementations of a binary op. `integer` returns false where the
/// result is undefined (division by zero), which refuses the fold.
struct BinaryKernels {
  double (*real)(double, double) = nullptr;
  bool (*integer)(int64_t, int64_t, int64_t&) = nullptr;
  bool boolResult = false;    ///< Comparisons and logic produce bool.
  bool boolOperands = false;  ///< And/Or/Xor take bool only.
};

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

const BinaryKernels* binaryKernels(std::string_view op) {
  using I = int64_t;
  static const std::map<std::string_view, BinaryKernels> kTable = {
      {"Add",
       {[](double a, double b) { return a + b; },
        [](I a, I b, I& r) { return r = wrapAdd(a, b), true; }}},
      {"Sub",
       {[](double a, double b) { return a - b; },
        [](I a, I b, I& r) { return r = wrapSub(a, b), true; }}},
      {"Mul",
       {[](double a, double b) { return a * b; },
        [](I a, I b, I& r) { return r = wrapMul(a, b), true; }}},
      {"Div",
       {[](double a, double b) { return a / b; },
        [](I a, I b, I& r) {
          if (b == 0 || (b == -1 && a == std::numeric_limits<I>::min())) return false;
          return r = a / b, true;  // ONNX integer Div truncates, as C++ does
        }}},
      {"Min",
       {[](double a, double b) { return std::isnan(a) || a < b ? a : b; },
        [](I a, I b, I& r) { return r = std::min(a, b), true; }}},
      {"Max",
       {[](double a, double b) { return std::isnan(a) || a > b ? a : b; },
        [](I a, I b, I& r) { return r = std::max(a, b), true; }}},
      {"Equal",
       {[](double a, double b) { return a == b ? 1.0 : 0.0; },
        [](I a, I b, I& r) { return r = a == b, true; }, true}},
      {"Less",
       {[](double a, double b) { return a < b ? 1.0 : 0.0; },
        [](I a, I b, I& r) { return r = a < b, true; }, true}},
      {"LessOrEqual",
       {[](double a, double b) { return a <= b ? 1.0 : 0.0; },
        [](I a, I b, I& r) { return r = a <= b, true; }, true}},
      {"Greater",
       {[](double a, double b) { return a > b ? 1.0 : 0.0; },
        [](I a, I b, I& r) { return r = a > b, true; }, true}},
      {"GreaterOrEqual",
       {[](double a, double b) { return a >= b ? 1.0 : 0.0; },
        [](I a, I b, I& r) { return r = a >= b, true; }, true}},
      {"And", {nullptr, [](I a, I b, I& r) { return r = (a != 0) && (b != 0), true; }, true, true}},
      {"Or", {nullptr, [](I a, I b, I& r) { return r = (a != 0) || (b != 0), true; }, true, true}},
      {"Xor", {nullptr, [](I a, I b, I& r) { return r = (a != 0) != (b != 0), true; }, true, true}},
  };
  auto it = kTable.find(op);
  return it == kTable.end() ? nullptr : &it->second;
}

// Applies a binary kernel to two constant tensors with broadcasting.
StatusOr<Tensor> applyBinary(const EvalContext& ctx, const BinaryKernels& k, const Tensor& a,
                             const Tensor& b) {
  DataType dtype = a.dtype();
  if (b.dtype() != dtype)
    return ctx.invalid("operands have different element types " + std::string(dataTypeName(dtype)) +
                       " and " + std::string(dataTypeName(b.dtype())));
  if (!isArithmeticType(dtype) || k.boolOperands != (dtype == DataType::kBool))
    return ctx.unsupported("element type " + std::string(dataTypeName(dtype)));
  StatusOr<Dims> dims = broadcastDims(ctx, a.dims(), b.dims());
  if (!dims) return dims.status();
  StatusOr<int64_t> count = checkResultSize(ctx, *dims);
  if (!count) return count.status();
  BroadcastMap mapA(a.dims(), *dims), mapB(b.dims(), *dims);
  DataType outType = k.boolResult ? DataType::kBool : dtype;
  auto n = static_cast<size_t>(*count);
  if (isFloatingPoint(dtype)) {
    std::vector<double> x = readDoubles(a), y = readDoubles(b), out(n);
    for (size_t i = 0; i < n; ++i) {
      auto idx = static_cast<int64_t>(i);
      out[i] = k.real(x[static_cast<size_t>(mapA(idx))], y[static_cast<size_t>(mapB(idx))]);
    }
    return makeTensor(outType, *dims, out);
  }
  std::vector<int64_t> x = a.toInt64Vector(), y = b.toInt64Vector(), out(n);
  for (size_t i = 0; i < n; ++i) {
    auto idx = static_cast<int64_t>(i);
    if (!k.integer(x[static_cast<size_t>(mapA(idx))], y[static_cast<size_t>(mapB(idx))], out[i]))
      return ctx.unsupported("integer result is undefined (division by zero or overflow)");
  }
  return makeTensor(outType, *dims, out);
}

StatusOr<Outputs> evalBinary(EvalContext& ctx) {
  const BinaryKernels* k = binaryKernels(ctx.node.opType());
  StatusOr<const Tensor*> a = requireInput(ctx, 0);
  if (!a) return a.status();
  // Min and Max are variadic: fold them pairwise, left to right.
  Tensor acc = **a;
  size_t arity = ctx.inputs.size();
  if (arity < 2 && ctx.node.opType() != "Min" && ctx.node.opType() != "Max")
    return ctx.invalid("expects two inputs");
  for (size_t i = 1; i < arity; ++i) {
    StatusOr<const Tensor*> b = requireInput(ctx, i);
    if (!b) return b.status();
    StatusOr<Tensor> next = applyBinary(ctx, *k, acc, **b);
    if (!next) return next.status();
    acc = std::move(next).value();
  }
  return Outputs{std::move(acc)};
}

StatusOr<Outputs> evalMod(EvalContext& ctx) {
  bool fmod = ctx.node.getInt("fmod", 0) != 0;
  BinaryKernels k;
  if (fmod) {
    k.real = [](double a, double b) { return std::fmod(a, b); };
    k.integer = [](int64_t a, int64_t b, int64_t& r) {
      if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) return false;
      return r = a % b, true;
    };
  } else {
    // Python-style modulo: the result takes the divisor's sign.
    k.integer = [](int64_t a, int64_t b, int64_t& r) {
      if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) return false;
      r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return true;
    };
  }
  StatusOr<const Tensor*> a = requireInput(ctx, 0), b = requireInput(ctx, 1);
  if (!a) return a.status();
  if (!b) return b.status();
  if (isFloatingPoint((*a)->dtype()) && !fmod)
    return ctx.invalid("floating-point Mod requires fmod=1");
  StatusOr<Tensor> out = applyBinary(ctx, k, **a, **b);
  if (!out) return out.status();
  return Outputs{std::move(out).value()};
}

StatusOr<Outputs> evalPow(EvalContext& ctx) {
  StatusOr<const Tensor*> a = requireInput(ctx, 0), b = requireInput(ctx, 1);
  if (!a) return a.status();
  if (!b) return b.status();
  const Tensor &base = **a, &exponent = **b;
  if (!isArithmeticType(base.dtype()) || !isArithmeticType(exponent.dtype()) ||
      base.dtype() == DataType::kBool || exponent.dtype() == DataType::kBool)
    return ctx.unsupported("element types " + std::string(dataTypeName(base.dtype())) + ", " +
                           std::string(dataTypeName(exponent.dtype())));
  StatusOr<Dims> dims = broadcastDims(ctx, base.dims(), exponent.dims());
  if (!dims) return dims.status();
  StatusOr<int64_t> count = checkResultSize(ctx, *dims);
  if (!count) return count.status();
  BroadcastMap mapA(base.dims(), *dims), mapB(exponent.dims(), *dims);
  std::vector<double> x = readDoubles(base), y = readDoubles(exponent);
  auto n = static_cast<size_t>(*count);
  if (isFloatingPoint(base.dtype())) {
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i) {
      auto idx = static_cast<int64_t>(i);
      out[i] = std::pow(x[static_cast<size_t>(mapA(idx))], y[static_cast<size_t>(mapB(idx))]);
    }
    return Outputs{makeTensor(base.dtype(), *dims, out)};
  }
  std::vector<int64_t> xs = base.toInt64Vector(), out(n);
  for (size_t i = 0; i < n; ++i) {
    auto idx = static_cast<int64_t>(i);
    double e = y[static_cast<size_t>(mapB(idx))];
    if (e < 0 || e != std::floor(e) || e > 64)
      return ctx.unsupported("integer Pow needs a small non-negative integral exponent");
    int64_t r = 1, bse = xs[static_cast<size_t>(mapA(idx))];
    for (int64_t j = 0; j < static_cast<int64_t>(e); ++j) r = wrapMul(r, bse);
    out[i] = r;
  }
  return Outputs{makeTensor(base.dtype(), *dims, out)};
}

StatusOr<Outputs> evalWhere(EvalContext& ctx) {
  StatusOr<const Tensor*> c = requireInput(ctx, 0), x = requireInput(ctx, 1),
                          y = requireInput(ctx, 2);
  if (!c) return c.status();
  if (!x) return x.status();
  if (!y) return y.status();
  const Tensor &cond = **c, &a = **x, &b = **y;
  if (cond.dtype() != DataType::kBool) return ctx.invalid("condition must be bool");
  if (a.dtype() != b.dtype()) return ctx.invalid("X and Y have different element types");
  StatusOr<Dims> ab = broadcastDims(ctx, a.dims(), b.dims());
  if (!ab) return ab.status();
  StatusOr<Dims> dims = broadcastDims(ctx, cond.dims(), *ab);
  if (!dims) return dims.status();
  StatusOr<int64_t> count = checkResultSize(ctx, *dims);
  if (!count) return count.status();
  BroadcastMap mapC(cond.dims(), *dims), mapA(a.dims(), *dims), mapB(b.dims(), *dims);
  // Joining X and Y lets one raw-element gather pick from either.
  int64_t n = a.numElements();
  Tensor both = joinFlat({&a, &b});
  auto condData = cond.data<uint8_t>();
  return Outputs{gatherElements(both, *dims, *count, [&](int64_t i) {
    return condData[static_cast<size_t>(mapC(i))] ? mapA(i) : n + mapB(i);
  })};
}

StatusOr<Outputs> evalCast(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Tensor& t = **x;
  auto to = static_cast<DataType>(ctx.node.getInt("to", 0));
  if (dataTypeName(to).empty() || dataTypeSize(to) == 0 || !isArithmeticType(to) ||
      !isArithmeticType(t.dtype()))
    return ctx.unsupported("cast from " + std::string(dataTypeName(t.dtype())) + " to type #" +
                           std::to_string(static_cast<int>(to)));
  StatusOr<int64_t> count = checkResultSize(ctx, t.dims());
  if (!count) return count.status();
  if (!isFloatingPoint(t.dtype())) {
    std::vector<int64_t> v = t.toInt64Vector();
    if (isFloatingPoint(to))
      return Outputs{makeTensor(to, t.dims(), std::vector<double>(v.begin(), v.end()))};
    return Outputs{makeTensor(to, t.dims(), v)};
  }
  std::vector<double> v = readDoubles(t);
  if (isFloatingPoint(to) || to == DataType::kBool) return Outputs{makeTensor(to, t.dims(), v)};
  auto [lo, hi] = integerRange(to);
  std::vector<int64_t> ints(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    double e = std::trunc(v[i]);
    // ONNX leaves out-of-range and NaN casts undefined; refuse them.
    if (!(e >= lo && (to == DataType::kInt64 ? e < 9223372036854775808.0 : e <= hi)))
      return ctx.unsupported("value " + std::to_string(v[i]) + " is out of range for " +
                             std::string(dataTypeName(to)));
    ints[i] = static_cast<int64_t>(e);
  }
  return Outputs{makeTensor(to, t.dims(), ints)};
}

//===--- Shape and data movement -------------------------------------------===//

StatusOr<Outputs> evalIdentity(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  StatusOr<int64_t> count = checkResultSize(ctx, (*x)->dims());
  if (!count) return count.status();
  return Outputs{**x};
}

StatusOr<Outputs> evalShape(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Dims& dims = (*x)->dims();
  auto rank = static_cast<int64_t>(dims.size());
  auto clampIndex = [rank](int64_t i) {
    if (i < 0) i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t start = clampIndex(ctx.node.getInt("start", 0));
  int64_t end = clampIndex(ctx.node.getInt("end", rank));
  Dims out(dims.begin() + start, dims.begin() + std::max(start, end));
  return Outputs{
      Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(out.size())}, out)};
}

StatusOr<Outputs> evalSize(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  return Outputs{Tensor::fromVector<int64_t>(DataType::kInt64, {}, {(*x)->numElements()})};
}

StatusOr<Outputs> evalReshape(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  StatusOr<Dims> shape = readIntInput(ctx, 1, "shape");
  if (!shape) return shape.status();
  const Dims& in = (*x)->dims();
  bool allowZero = ctx.node.getInt("allowzero", 0) != 0;
  Dims out = *shape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (i >= in.size())
        return ctx.invalid("shape " + dimsToString(*shape) + " copies dim " + std::to_string(i) +
                           " that input " + dimsToString(in) + " lacks");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      if (inferred >= 0) return ctx.invalid("shape " + dimsToString(*shape) + " has two -1 dims");
      inferred = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      return ctx.invalid("shape " + dimsToString(*shape) + " has a negative dim");
    } else {
      known *= out[i];
    }
  }
  int64_t total = (*x)->numElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return ctx.invalid("cannot reshape " + dimsToString(in) + " to " + dimsToString(*shape));
    out[static_cast<size_t>(inferred)] = total / known;
  }
  std::optional<int64_t> count = countOf(out);
  if (!count || *count != total)
    return ctx.invalid("cannot reshape " + dimsToString(in) + " to " + dimsToString(*shape));
  StatusOr<int64_t> checked = checkResultSize(ctx, out);
  if (!checked) return checked.status();
  return Outputs{withDims(**x, out)};
}

StatusOr<Outputs> evalFlatten(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Dims& in = (*x)->dims();
  auto rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  if (axis < 0) axis += rank;
  Dims out{1, 1};
  for (int64_t i = 0; i < rank; ++i) out[i < axis ? 0 : 1] *= in[static_cast<size_t>(i)];
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  return Outputs{withDims(**x, out)};
}

// Axes for Squeeze/Unsqueeze: the second input (opset 13+) or the `axes`
// attribute (older opsets); nullopt when neither is given.
StatusOr<std::optional<Dims>> axesOf(const EvalContext& ctx) {
  if (ctx.input(1)) {
    StatusOr<Dims> axes = readIntInput(ctx, 1, "axes");
    if (!axes) return axes.status();
    return std::optional<Dims>(*axes);
  }
  if (ctx.node.hasAttr("axes")) return std::optional<Dims>(ctx.node.getInts("axes"));
  return std::optional<Dims>();
}

StatusOr<Outputs> evalSqueeze(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Dims& in = (*x)->dims();
  auto rank = static_cast<int64_t>(in.size());
  StatusOr<std::optional<Dims>> axes = axesOf(ctx);
  if (!axes) return axes.status();
  std::vector<bool> drop(in.size(), false);
  if (!axes->has_value()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : **axes) {
      StatusOr<int64_t> axis = normalizeAxis(ctx, a, rank);
      if (!axis) return axis.status();
      if (in[static_cast<size_t>(*axis)] != 1)
        return ctx.invalid("cannot squeeze dim " + std::to_string(*axis) + " of " +
                           dimsToString(in) + ": it is not 1");
      drop[static_cast<size_t>(*axis)] = true;
    }
  }
  Dims out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  return Outputs{withDims(**x, out)};
}

StatusOr<Outputs> evalUnsqueeze(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  StatusOr<std::optional<Dims>> axes = axesOf(ctx);
  if (!axes) return axes.status();
  if (!axes->has_value()) return ctx.invalid("axes are missing");
  const Dims& in = (*x)->dims();
  auto rank = static_cast<int64_t>(in.size() + (*axes)->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : **axes) {
    StatusOr<int64_t> axis = normalizeAxis(ctx, a, rank);
    if (!axis) return axis.status();
    if (inserted[static_cast<size_t>(*axis)])
      return ctx.invalid("axis " + std::to_string(a) + " is repeated");
    inserted[static_cast<size_t>(*axis)] = true;
  }
  Dims out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(inserted[static_cast<size_t>(i)] ? 1 : in[next++]);
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  return Outputs{withDims(**x, out)};
}

StatusOr<Outputs> evalTranspose(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Dims& in = (*x)->dims();
  size_t rank = in.size();
  Dims perm = ctx.node.getInts("perm");
  if (perm.empty())
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) return ctx.invalid("perm does not match rank " + std::to_string(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
      return ctx.invalid("perm " + dimsToString(perm) + " is not a permutation");
    seen[static_cast<size_t>(p)] = true;
  }
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = in[static_cast<size_t>(perm[i])];
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  Dims inStrides = stridesOf(in);
  return Outputs{gatherElements(**x, out, *count, [&](int64_t i) {
    int64_t source = 0;
    for (size_t r = rank; r-- > 0;) {
      source += (i % out[r]) * inStrides[static_cast<size_t>(perm[r])];
      i /= out[r];
    }
    return source;
  })};
}

StatusOr<Outputs> evalConcat(EvalContext& ctx) {
  if (ctx.inputs.empty()) return ctx.invalid("has no inputs");
  std::vector<const Tensor*> parts;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    StatusOr<const Tensor*> t = requireInput(ctx, i);
    if (!t) return t.status();
    parts.push_back(*t);
  }
  const Tensor& first = *parts[0];
  auto rank = static_cast<int64_t>(first.dims().size());
  StatusOr<int64_t> axisOr = normalizeAxis(ctx, ctx.node.getInt("axis", 0), rank);
  if (!axisOr) return axisOr.status();
  auto axis = static_cast<size_t>(*axisOr);
  Dims out = first.dims();
  out[axis] = 0;
  for (const Tensor* t : parts) {
    bool compatible = t->dtype() == first.dtype() && t->dims().size() == first.dims().size();
    for (size_t d = 0; compatible && d < out.size(); ++d)
      compatible = d == axis || t->dims()[d] == first.dims()[d];
    if (!compatible)
      return ctx.invalid("inputs " + dimsToString(first.dims()) + " and " +
                         dimsToString(t->dims()) + " cannot be concatenated on axis " +
                         std::to_string(axis));
    out[axis] += t->dims()[axis];
  }
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  // Element i of the result: find its (outer, position on axis, inner)
  // coordinates, then the part that holds that axis position.
  int64_t inner = 1;
  for (size_t d = axis + 1; d < out.size(); ++d) inner *= out[d];
  Dims partStart;  // first axis position of each part, then the total
  int64_t acc = 0;
  for (const Tensor* t : parts) {
    partStart.push_back(acc);
    acc += t->dims()[axis];
  }
  // Join every part into one flat source so a single gather can read them.
  Dims partOffset;
  int64_t total = 0;
  for (const Tensor* t : parts) {
    partOffset.push_back(total);
    total += t->numElements();
  }
  Tensor joined = joinFlat(parts);
  int64_t axisLen = out[axis];
  return Outputs{gatherElements(joined, out, *count, [&](int64_t i) {
    int64_t innerPos = i % inner, pos = (i / inner) % axisLen, outer = i / inner / axisLen;
    size_t p = static_cast<size_t>(std::upper_bound(partStart.begin(), partStart.end(), pos) -
                                   partStart.begin()) -
               1;
    int64_t len = parts[p]->dims()[axis];
    return partOffset[p] + (outer * len + (pos - partStart[p])) * inner + innerPos;
  })};
}

StatusOr<Outputs> evalGather(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  StatusOr<Dims> indices = readIntInput(ctx, 1, "indices");
  if (!indices) return indices.status();
  const Dims& in = (*x)->dims();
  auto rank = static_cast<int64_t>(in.size());
  if (rank == 0) return ctx.invalid("cannot gather from a scalar");
  StatusOr<int64_t> axisOr = normalizeAxis(ctx, ctx.node.getInt("axis", 0), rank);
  if (!axisOr) return axisOr.status();
  auto axis = static_cast<size_t>(*axisOr);
  int64_t axisLen = in[axis];
  for (int64_t& idx : *indices) {
    if (idx < -axisLen || idx >= axisLen)
      return ctx.invalid("index " + std::to_string(idx) + " is out of range for dim " +
                         std::to_string(axisLen));
    if (idx < 0) idx += axisLen;
  }
  const Dims& idxDims = ctx.input(1)->dims();
  Dims out(in.begin(), in.begin() + static_cast<int64_t>(axis));
  out.insert(out.end(), idxDims.begin(), idxDims.end());
  out.insert(out.end(), in.begin() + static_cast<int64_t>(axis) + 1, in.end());
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  int64_t inner = 1;
  for (size_t d = axis + 1; d < in.size(); ++d) inner *= in[d];
  auto numIdx = static_cast<int64_t>(indices->size());
  return Outputs{gatherElements(**x, out, *count, [&](int64_t i) {
    int64_t innerPos = i % inner, k = (i / inner) % numIdx, outer = i / inner / numIdx;
    return (outer * axisLen + (*indices)[static_cast<size_t>(k)]) * inner + innerPos;
  })};
}

StatusOr<Outputs> evalSlice(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  const Dims& in = (*x)->dims();
  auto rank = static_cast<int64_t>(in.size());
  // Opset 10+ passes starts/ends/axes/steps as inputs; opset 1 as attributes.
  Dims starts, ends, axes, steps;
  if (ctx.inputs.size() >= 3) {
    StatusOr<Dims> s = readIntInput(ctx, 1, "starts"), e = readIntInput(ctx, 2, "ends");
    if (!s) return s.status();
    if (!e) return e.status();
    starts = *s;
    ends = *e;
    if (ctx.input(3)) {
      StatusOr<Dims> a = readIntInput(ctx, 3, "axes");
      if (!a) return a.status();
      axes = *a;
    }
    if (ctx.input(4)) {
      StatusOr<Dims> st = readIntInput(ctx, 4, "steps");
      if (!st) return st.status();
      steps = *st;
    }
  } else {
    starts = ctx.node.getInts("starts");
    ends = ctx.node.getInts("ends");
    axes = ctx.node.getInts("axes");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.invalid("starts, ends, axes and steps have different lengths");
  Dims begin(in.size(), 0), step(in.size(), 1), out = in;
  std::vector<bool> seen(in.size(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    StatusOr<int64_t> axisOr = normalizeAxis(ctx, axes[k], rank);
    if (!axisOr) return axisOr.status();
    auto a = static_cast<size_t>(*axisOr);
    if (seen[a]) return ctx.invalid("axis " + std::to_string(a) + " is repeated");
    seen[a] = true;
    int64_t d = in[a], s = starts[k], e = ends[k], st = steps[k];
    if (st == 0) return ctx.invalid("step is 0");
    if (s < 0) s = s < -d ? 0 : s + d;
    if (e < 0) e = e < -d ? -1 : e + d;
    int64_t count;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      count = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    begin[a] = s;
    step[a] = st;
    out[a] = count;
  }
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  Dims inStrides = stridesOf(in);
  return Outputs{gatherElements(**x, out, *count, [&](int64_t i) {
    int64_t source = 0;
    for (size_t r = out.size(); r-- > 0;) {
      source += (begin[r] + (i % out[r]) * step[r]) * inStrides[r];
      i /= out[r];
    }
    return source;
  })};
}

StatusOr<Outputs> evalExpand(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  StatusOr<Dims> shape = readIntInput(ctx, 1, "shape");
  if (!shape) return shape.status();
  StatusOr<Dims> out = broadcastDims(ctx, (*x)->dims(), *shape);
  if (!out) return out.status();
  StatusOr<int64_t> count = checkResultSize(ctx, *out);
  if (!count) return count.status();
  BroadcastMap map((*x)->dims(), *out);
  return Outputs{gatherElements(**x, *out, *count, [&](int64_t i) { return map(i); })};
}

StatusOr<Outputs> evalTile(EvalContext& ctx) {
  StatusOr<const Tensor*> x = requireInput(ctx, 0);
  if (!x) return x.status();
  StatusOr<Dims> repeats = readIntInput(ctx, 1, "repeats");
  if (!repeats) return repeats.status();
  const Dims& in = (*x)->dims();
  if (repeats->size() != in.size())
    return ctx.invalid("repeats has " + std::to_string(repeats->size()) + " entries for rank " +
                       std::to_string(in.size()));
  Dims out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if ((*repeats)[i] < 0) return ctx.invalid("repeats are negative");
    out[i] = in[i] * (*repeats)[i];
  }
  StatusOr<int64_t> count = checkResultSize(ctx, out);
  if (!count) return count.status();
  Dims inStrides = stridesOf(in);
  return Outputs{gatherElements(**x, out, *count, [&](int64_t i) {
    int64_t source = 0;
    for (size_t r = out.size(); r-- > 0;) {
      source += ((i % out[r]) % in[r]) * inStrides[r];
      i /= out[r];
    }
    return source;
  })};
}

//===--- Constant creation -------------------------------------------------===//

StatusOr<Outputs> evalConstantOfShape(EvalContext& ctx) {
  StatusOr<Dims> shape = readIntInput(ctx, 0, "shape");
  if (!shape) return shape.status();
  if (ctx.input(0)->dims().size() != 1) return ctx.invalid("shape must be 1-D");
  StatusOr<int64_t> count = checkResultSize(ctx, *shape);
  if (!count) return count.status();
  Tensor fill = Tensor::splat(DataType::kFloat32, {1}, 0.0);
  if (const Attribute* value = ctx.node.attr("value")) {
    if (value->kind() != AttrKind::kTensor || value->asTensor().numElements() != 1)
      return ctx.invalid("attribute 'value' must be a one-element tensor");
    fill = value->asTensor();
  }
  return Outputs{gatherElements(fill, *shape, *count, [](int64_t) { return int64_t{0}; })};
}

StatusOr<Outputs> evalRange(EvalContext& ctx) {
  std::array<const Tensor*, 3> args{};
  for (size_t i = 0; i < 3; ++i) {
    StatusOr<const Tensor*> t = requireInput(ctx, i);
    if (!t) return t.status();
    if ((*t)->numElements() != 1) return ctx.invalid("start, limit and delta must be scalars");
    args[i] = *t;
  }
  DataType dtype = args[0]->dtype();
  if (args[1]->dtype() != dtype || args[2]->dtype() != dtype || !isArithmeticType(dtype) ||
      dtype == DataType::kBool)
    return ctx.unsupported("start, limit and delta must share a numeric type");
  if (isFloatingPoint(dtype)) {
    double start = args[0]->elementAsDouble(0), limit = args[1]->elementAsDouble(0),
           delta = args[2]->elementAsDouble(0);
    double steps = std::ceil((limit - start) / delta);
    if (delta == 0 || !std::isfinite(steps)) return ctx.invalid("delta is 0 or not finite");
    if (steps > static_cast<double>(ctx.limits.maxOutputElements))
      return Status(StatusCode::kLimitExceeded, ctx.prefix() + "result would have over " +
                                                    std::to_string(ctx.limits.maxOutputElements) +
                                                    " elements");
    auto n = static_cast<int64_t>(std::max(steps, 0.0));
    StatusOr<int64_t> count = checkResultSize(ctx, {n});
    if (!count) return count.status();
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = start + static_cast<double>(i) * delta;
    return Outputs{makeTensor(dtype, {n}, v)};
  }
  int64_t start = args[0]->elementAsInt(0), limit = args[1]->elementAsInt(0),
          delta = args[2]->elementAsInt(0);
  if (delta == 0) return ctx.invalid("delta is 0");
  // ceil((limit - start) / delta) without overflow: work in the direction
  // of delta with unsigned distances.
  int64_t n = 0;
  if ((delta > 0 && limit > start) || (delta < 0 && limit < start)) {
    uint64_t distance = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                  : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    uint64_t magnitude =
        delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
    uint64_t steps = distance / magnitude + (distance % magnitude != 0);
    n = steps > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
            ? std::numeric_limits<int64_t>::max()
            : static_cast<int64_t>(steps);
  }
  StatusOr<int64_t> count = checkResultSize(ctx, {n});
  if (!count) return count.status();
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = wrapAdd(start, wrapMul(i, delta));
  return Outputs{makeTensor(dtype, {n}, v)};
}

StatusOr<Outputs> evalConstant(EvalContext& ctx) {
  static constexpr std::string_view kValueAttrs[] = {"value",         "value_float", "value_floats",
                                                     "value_int",     "value_ints",  "value_string",
                                                     "value_strings", "sparse_value"};
  const Attribute* found = nullptr;
  for (std::string_view name : kValueAttrs)
    if (const Attribute* a = ctx.node.attr(name)) {
      if (found) return ctx.invalid("has both '" + found->name() + "' and '" + a->name() + "'");
      found = a;
    }
  if (!found) return ctx.invalid("has no value attribute");
  Tensor value;
  const std::string& name = found->name();
  try {
    if (name == "value") {
      value = found->asTensor();
    } else if (name == "value_float") {
      value = Tensor::fromVector<float>(DataType::kFloat32, {}, {found->asFloat()});
    } else if (name == "value_floats") {
      const auto& v = found->asFloats();
      value = Tensor::fromVector<float>(DataType::kFloat32, {static_cast<int64_t>(v.size())}, v);
    } else if (name == "value_int") {
      value = Tensor::fromVector<int64_t>(DataType::kInt64, {}, {found->asInt()});
    } else if (name == "value_ints") {
      const auto& v = found->asInts();
      value = Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
    } else if (name == "value_string") {
      value = Tensor({}, std::vector<std::string>{found->asString()});
    } else if (name == "value_strings") {
      const auto& v = found->asStrings();
      value = Tensor({static_cast<int64_t>(v.size())}, v);
    } else {
      return ctx.unsupported("sparse_value constants are not supported");
    }
  } catch (const Error& e) {
    // The attribute has the right name but the wrong kind.
    return ctx.invalid(e.what());
  }
  StatusOr<int64_t> count = checkResultSize(ctx, value.dims());
  if (!count) return count.status();
  return Outputs{std::move(value)};
}

//===--- The table ---------------------------------------------------------===//

using Evaluator = StatusOr<Outputs> (*)(EvalContext&);

const std::map<std::string_view, Evaluator>& evaluatorTable() {
  static const std::map<std::string_view, Evaluator> kTable = [] {
    std::map<std::string_view, Evaluator> t = {
        {"Cast", evalCast},
        {"Concat", evalConcat},
        {"Constant", evalConstant},
        {"ConstantOfShape", evalConstantOfShape},
        {"Expand", evalExpand},
        {"Flatten", evalFlatten},
        {"Gather", evalGather},
        {"Identity", evalIdentity},
        {"Mod", evalMod},
        {"Pow", evalPow},
        {"Range", evalRange},
        {"Reshape", evalReshape},
        {"Shape", evalShape},
        {"Size", evalSize},
        {"Slice", evalSlice},
        {"Squeeze", evalSqueeze},
        {"Tile", evalTile},
        {"Transpose", evalTranspose},
        {"Unsqueeze", evalUnsqueeze},
        {"Where", evalWhere},
    };
    for (std::string_view op :
         {"Neg", "Abs", "Relu", "Sign", "Not", "Sqrt", "Reciprocal", "Exp", "Log", "Floor", "Ceil",
          "Round", "Erf", "Tanh", "Sigmoid", "Sin", "Cos"})
      t.emplace(op, evalUnary);
    for (std::string_view op : {"Add", "Sub", "Mul", "Div", "Min", "Max", "Equal", "Less",
                                "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"})
      t.emplace(op, evalBinary);
    return t;
  }();
  return kTable;
}

}  // namespace

bool hasConstantEvaluator(std::string_view domain, std::string_view opType) {
  return canonicalDomain(domain).empty() && evaluatorTable().count(opType) != 0;
}

std::vector<std::string_view> constantEvaluatorOps() {
  std::vector<std::string_view> ops;
  for (const auto& [name, fn] : evaluatorTable()) ops.push_back(name);
  return ops;
}

StatusOr<std::vector<Tensor>> evaluateConstantNode(const Node& node,
                                                   std::span<const Tensor* const> inputs,
                                                   const EvaluationLimits& limits) {
  EvalContext ctx{node, inputs, limits};
  if (!node.domain().empty()) return ctx.unsupported("no evaluator for this domain");
  auto it = evaluatorTable().find(node.opType());
  if (it == evaluatorTable().end()) return ctx.unsupported("no evaluator for this op");
  try {
    StatusOr<Outputs> outputs = it->second(ctx);
    if (outputs && outputs->size() != node.numOutputs())
      return ctx.unsupported("node has " + std::to_string(node.numOutputs()) +
                             " outputs; the evaluator computes " + std::to_string(outputs->size()));
    return outputs;
  } catch (const Error& e) {
    // Tensor construction and attribute accessors throw on malformed data;
    // a bad constant must not abort the pass that asked.
    return ctx.invalid(e.what());
  }
}

}  // namespace subgraph
