//===- runtime/reference/elementwise_binary.cpp - Broadcasting elementwise ops -===//
//
// Add, Sub, Mul, Div, Mod, Pow, PRelu, the comparisons (Equal, Less,
// Greater, LessOrEqual, GreaterOrEqual), the logical And, Or, Xor (two
// inputs), Max, Min, Sum, Mean (variadic) and Where (three inputs), all with
// numpy broadcasting.
// The iteration runs over collapsed rows (BroadcastLoop) with the inner loop
// specialized for contiguous and repeated operands, so the common cases
// (same shape, scalar, per-channel) are straight vectorizable loops.
//
// Integer semantics: Add/Sub/Mul wrap around (computed in the unsigned type),
// Div truncates toward zero, and integer division by zero gives 0 instead of
// trapping.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kPRelu,
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
  kMax,
  kMin,
  kSum,
  kMean,
};

bool isComparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kGreater ||
         op == BinaryOp::kLessOrEqual || op == BinaryOp::kGreaterOrEqual;
}

bool isVariadic(BinaryOp op) {
  return op == BinaryOp::kMax || op == BinaryOp::kMin || op == BinaryOp::kSum ||
         op == BinaryOp::kMean;
}

unsigned typesOf(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEqual: return kAllTypes;
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
    case BinaryOp::kXor: return kBoolType;
    case BinaryOp::kSum:
    case BinaryOp::kMean: return kFloatTypes;
    case BinaryOp::kPRelu: return kFloatTypes | kIndexTypes | kUnsignedInts;
    case BinaryOp::kPow: return kFloatTypes | kIndexTypes;
    default: return kNumeric;
  }
}

// out[i] = f(a[i*], b[i*]) over a broadcast loop.
template <typename TA, typename TB, typename TO, typename F>
void binaryLoop(const BroadcastLoop& loop, const TA* a, const TB* b, TO* o, F f) {
  loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t n) {
    const TA* pa = a + off[0];
    const TB* pb = b + off[1];
    TO* po = o + oo;
    if (step[0] && step[1]) {
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (step[1]) {
      const TA av = pa[0];
      for (int64_t i = 0; i < n; ++i) po[i] = f(av, pb[i]);
    } else if (step[0]) {
      const TB bv = pb[0];
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], bv);
    } else {
      const TO v = f(pa[0], pb[0]);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    }
  });
}

template <typename C>
C safeDiv(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<C>)
      if (y == -1) return wrapSub(C(0), x);  // INT_MIN / -1 would trap.
    return static_cast<C>(x / y);
  } else {
    return x / y;
  }
}
// Mod: with fmod, C's fmod / % (the sign of the dividend); without, the
// floor modulus of Python and numpy (the sign of the divisor).
template <typename C>
C modOf(C x, C y, bool fmod) {
  if constexpr (std::is_integral_v<C>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<C>)
      if (y == -1) return 0;  // x % -1 is 0, and INT_MIN % -1 would trap.
    C r = static_cast<C>(x % y);
    if constexpr (std::is_signed_v<C>)
      if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
    return r;
  } else {
    C r = std::fmod(x, y);
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
}

template <typename C>
C maxOf(C x, C y) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
  }
  return x < y ? y : x;
}
template <typename C>
C minOf(C x, C y) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
  }
  return y < x ? y : x;
}

template <typename T>
void applySameType(BinaryOp op, bool fmod, const BroadcastLoop& loop, const T* a, const T* b,
                   T* o) {
  using C = Compute<T>;
  auto run = [&](auto f) {
    binaryLoop(loop, a, b, o, [f](T x, T y) { return store<T>(f(load(x), load(y))); });
  };
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kSum:
    case BinaryOp::kMean: run([](C x, C y) { return wrapAdd(x, y); }); break;
    case BinaryOp::kMod: run([fmod](C x, C y) { return modOf(x, y, fmod); }); break;
    case BinaryOp::kSub: run([](C x, C y) { return wrapSub(x, y); }); break;
    case BinaryOp::kMul: run([](C x, C y) { return wrapMul(x, y); }); break;
    case BinaryOp::kDiv: run([](C x, C y) { return safeDiv(x, y); }); break;
    case BinaryOp::kMax: run([](C x, C y) { return maxOf(x, y); }); break;
    case BinaryOp::kMin: run([](C x, C y) { return minOf(x, y); }); break;
    case BinaryOp::kPRelu:
      run([](C x, C slope) {
        if constexpr (std::is_unsigned_v<C>)
          return x;
        else
          return x < C(0) ? wrapMul(slope, x) : x;
      });
      break;
    default: break;
  }
}

template <typename T>
void applyComparison(BinaryOp op, const BroadcastLoop& loop, const T* a, const T* b, bool* o) {
  switch (op) {
    case BinaryOp::kEqual:
      binaryLoop(loop, a, b, o, [](T x, T y) { return load(x) == load(y); });
      break;
    case BinaryOp::kLess:
      binaryLoop(loop, a, b, o, [](T x, T y) { return load(x) < load(y); });
      break;
    case BinaryOp::kLessOrEqual:
      binaryLoop(loop, a, b, o, [](T x, T y) { return load(x) <= load(y); });
      break;
    case BinaryOp::kGreaterOrEqual:
      binaryLoop(loop, a, b, o, [](T x, T y) { return load(x) >= load(y); });
      break;
    default: binaryLoop(loop, a, b, o, [](T x, T y) { return load(x) > load(y); }); break;
  }
}

// Pow(X: T, Y: T1) -> T. Float bases with a float exponent use the base's
// own pow (matching numpy); mixed types go through double.
template <typename TX, typename TY>
void applyPow(const BroadcastLoop& loop, const TX* a, const TY* b, TX* o) {
  binaryLoop(loop, a, b, o, [](TX x, TY y) {
    using CX = Compute<TX>;
    using CY = Compute<TY>;
    if constexpr (std::is_same_v<CX, CY> && std::is_floating_point_v<CX>)
      return store<TX>(std::pow(load(x), load(y)));
    else
      return store<TX>(
          static_cast<CX>(std::pow(static_cast<double>(load(x)), static_cast<double>(load(y)))));
  });
}

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const Node& node, BinaryOp op) : op_(op), fmod_(node.getInt("fmod", 0) != 0) {
    bool variadic = isVariadic(op);
    if (!variadic && node.numInputs() != 2)
      throwNodeError(node, "expects 2 inputs, got " + std::to_string(node.numInputs()));
    if (variadic && node.numInputs() == 0) throwNodeError(node, "needs at least one input");
  }

  Status resize(ResizeContext& ctx) const override {
    std::vector<const std::vector<int64_t>*> shapes;
    DataType dt = ctx.inputDesc(0).dtype;
    if (!typeInSet(dt, typesOf(op_))) return unsupportedType(ctx.node(), dt);
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) return ctx.fail("input " + std::to_string(i) + " is missing");
      shapes.push_back(&ctx.inputDesc(i).dims);
      bool typeMatches = op_ == BinaryOp::kPow ? typeInSet(ctx.inputDesc(i).dtype, kNumeric)
                                               : ctx.inputDesc(i).dtype == dt;
      if (!typeMatches)
        return ctx.fail("input " + std::to_string(i) + " has element type " +
                        std::string(dataTypeName(ctx.inputDesc(i).dtype)) + ", input 0 has " +
                        std::string(dataTypeName(dt)));
    }
    std::vector<int64_t> dims;
    if (!broadcastDims(shapes, dims)) {
      std::string all;
      for (size_t i = 0; i < shapes.size(); ++i)
        all += (i ? " and " : "") + dimsToString(*shapes[i]);
      return ctx.fail("shapes " + all + " do not broadcast");
    }
    if (op_ == BinaryOp::kPRelu && dims != ctx.inputDesc(0).dims)
      return ctx.fail("slope " + dimsToString(ctx.inputDesc(1).dims) + " does not broadcast to X " +
                      dimsToString(ctx.inputDesc(0).dims));
    if (op_ == BinaryOp::kMod && isFloatingPoint(dt) && !fmod_)
      return ctx.fail("floating-point Mod needs fmod = 1");
    ctx.setOutput(0, TensorDesc{isComparison(op_) ? DataType::kBool : dt, dims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& out = ctx.output(0);
    const TensorView& a = ctx.input(0);
    if (op_ == BinaryOp::kPow) return runPow(ctx);
    if (ctx.numInputs() == 1) {
      // Variadic with one input: a copy.
      if (out.raw() != a.raw() && a.byteSize()) std::memcpy(out.raw(), a.raw(), a.byteSize());
      return Status::ok();
    }
    bool ok = visitType<kAllTypes>(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (isComparison(op_)) {
        const std::vector<int64_t>* dims[] = {&a.dims(), &ctx.input(1).dims()};
        BroadcastLoop loop(out.dims(), dims);
        applyComparison<T>(op_, loop, a.data<T>(), ctx.input(1).data<T>(), out.mutableData<bool>());
        return;
      }
      if constexpr (std::is_same_v<T, bool>) {
        const std::vector<int64_t>* dims[] = {&a.dims(), &ctx.input(1).dims()};
        BroadcastLoop loop(out.dims(), dims);
        const bool* pb = ctx.input(1).data<bool>();
        bool* po = out.mutableData<bool>();
        if (op_ == BinaryOp::kAnd)
          binaryLoop(loop, a.data<bool>(), pb, po, [](bool x, bool y) { return x && y; });
        else if (op_ == BinaryOp::kOr)
          binaryLoop(loop, a.data<bool>(), pb, po, [](bool x, bool y) { return x || y; });
        else
          binaryLoop(loop, a.data<bool>(), pb, po, [](bool x, bool y) { return x != y; });
        return;
      }
      if constexpr (!std::is_same_v<T, bool>) {
        // Variadic ops fold left: out = op(op(in0, in1), in2) ...; the first
        // step broadcasts in0 and in1 into out, later steps read out itself
        // (same index, so in place is safe).
        const std::vector<int64_t>* dims01[] = {&a.dims(), &ctx.input(1).dims()};
        std::vector<int64_t> partial;
        broadcastDims(dims01, partial);
        for (size_t i = 1; i < ctx.numInputs(); ++i) {
          const TensorView& b = ctx.input(i);
          const T* lhs = i == 1 ? a.data<T>() : out.data<T>();
          const std::vector<int64_t>& lhsDims = i == 1 ? a.dims() : partial;
          std::vector<int64_t> next;
          const std::vector<int64_t>* pair[] = {&lhsDims, &b.dims()};
          broadcastDims(pair, next);
          if (i > 1 && next != partial) {
            // The output grows: spread the partial result first.
            std::vector<T> tmp(
                out.data<T>(),
                out.data<T>() + TensorDesc{a.dtype(), partial, nullptr}.numElements());
            const std::vector<int64_t>* spread[] = {&partial, &b.dims()};
            BroadcastLoop loop(next, spread);
            applySameType<T>(op_, fmod_, loop, tmp.data(), b.data<T>(), out.mutableData<T>());
          } else {
            BroadcastLoop loop(next, pair);
            applySameType<T>(op_, fmod_, loop, lhs, b.data<T>(), out.mutableData<T>());
          }
          partial = std::move(next);
        }
        if (op_ == BinaryOp::kMean) {
          const double scale = 1.0 / static_cast<double>(ctx.numInputs());
          T* po = out.mutableData<T>();
          for (int64_t i = 0, n = out.numElements(); i < n; ++i)
            po[i] = store<T>(static_cast<Compute<T>>(static_cast<double>(load(po[i])) * scale));
        }
      }
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), a.dtype());
  }

 private:
  Status runPow(RunContext& ctx) const {
    const TensorView& x = ctx.input(0);
    const TensorView& y = ctx.input(1);
    if (isSquare(ctx)) {
      // x * x is pow(x, 2) correctly rounded, as powf's result is, without
      // a pow call per element: exporters square a spectrum's magnitude
      // or a variance's deviations this way.
      const float* px = x.data<float>();
      float* po = ctx.output(0).mutableData<float>();
      parallelFor(x.numElements(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = px[i] * px[i];
      });
      return Status::ok();
    }
    const std::vector<int64_t>* dims[] = {&x.dims(), &y.dims()};
    BroadcastLoop loop(ctx.output(0).dims(), dims);
    bool ok = false;
    visitType<kFloatTypes | kIndexTypes>(x.dtype(), [&](auto xt) {
      using TX = typename decltype(xt)::type;
      ok = visitType<kNumeric>(y.dtype(), [&](auto yt) {
        using TY = typename decltype(yt)::type;
        applyPow<TX, TY>(loop, x.data<TX>(), y.data<TY>(), ctx.output(0).mutableData<TX>());
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

  // An f32 base raised to a single exponent of 2 that does not broadcast
  // the base.
  static bool isSquare(const RunContext& ctx) {
    const TensorView& x = ctx.input(0);
    const TensorView& y = ctx.input(1);
    return x.dtype() == DataType::kFloat32 && y.numElements() == 1 &&
           ctx.output(0).numElements() == x.numElements() && readDoubles(y)[0] == 2.0;
  }

  BinaryOp op_;
  bool fmod_;
};

// Where(condition, X, Y): X where condition, else Y, all broadcast.
class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const Node&) {}
  Status resize(ResizeContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (!ctx.hasInput(i)) return ctx.fail("input " + std::to_string(i) + " is missing");
    if (ctx.inputDesc(0).dtype != DataType::kBool)
      return ctx.fail("condition must be bool, got " +
                      std::string(dataTypeName(ctx.inputDesc(0).dtype)));
    if (ctx.inputDesc(1).dtype != ctx.inputDesc(2).dtype)
      return ctx.fail("X and Y have different element types");
    const std::vector<int64_t>* shapes[] = {&ctx.inputDesc(0).dims, &ctx.inputDesc(1).dims,
                                            &ctx.inputDesc(2).dims};
    std::vector<int64_t> dims;
    if (!broadcastDims(shapes, dims))
      return ctx.fail("shapes " + dimsToString(*shapes[0]) + ", " + dimsToString(*shapes[1]) +
                      " and " + dimsToString(*shapes[2]) + " do not broadcast");
    ctx.setOutput(0, TensorDesc{ctx.inputDesc(1).dtype, dims, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const std::vector<int64_t>* shapes[] = {&ctx.input(0).dims(), &ctx.input(1).dims(),
                                            &ctx.input(2).dims()};
    BroadcastLoop loop(ctx.output(0).dims(), shapes);
    size_t size = dataTypeSize(ctx.output(0).dtype());
    const bool* c = ctx.input(0).data<bool>();
    const auto* x = static_cast<const std::byte*>(ctx.input(1).raw());
    const auto* y = static_cast<const std::byte*>(ctx.input(2).raw());
    auto* o = static_cast<std::byte*>(ctx.output(0).raw());
    // Byte-generic: Where only moves elements.
    loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const std::byte* src = c[off[0] + i * step[0]]
                                   ? x + (off[1] + i * step[1]) * static_cast<int64_t>(size)
                                   : y + (off[2] + i * step[2]) * static_cast<int64_t>(size);
        std::memcpy(o + (oo + i) * static_cast<int64_t>(size), src, size);
      }
    });
    return Status::ok();
  }
};

KernelCreator binary(BinaryOp op) {
  return [op](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<BinaryKernel>(node, op));
  };
}

}  // namespace

void registerBinaryKernels(Provider& p) {
  p.add("Add", binary(BinaryOp::kAdd));
  p.add("Sub", binary(BinaryOp::kSub));
  p.add("Mul", binary(BinaryOp::kMul));
  p.add("Div", binary(BinaryOp::kDiv));
  p.add("Pow", binary(BinaryOp::kPow));
  p.add("PRelu", binary(BinaryOp::kPRelu));
  p.add("Equal", binary(BinaryOp::kEqual));
  p.add("Less", binary(BinaryOp::kLess));
  p.add("Greater", binary(BinaryOp::kGreater));
  p.add("Max", binary(BinaryOp::kMax));
  p.add("Min", binary(BinaryOp::kMin));
  p.add("Sum", binary(BinaryOp::kSum));
  p.add("Mean", binary(BinaryOp::kMean));
  p.add("Mod", binary(BinaryOp::kMod));
  p.add("LessOrEqual", binary(BinaryOp::kLessOrEqual));
  p.add("GreaterOrEqual", binary(BinaryOp::kGreaterOrEqual));
  p.add("And", binary(BinaryOp::kAnd));
  p.add("Or", binary(BinaryOp::kOr));
  p.add("Xor", binary(BinaryOp::kXor));
  p.add("Where", creatorFor<WhereKernel>());
}

}  // namespace subgraph::runtime::reference
