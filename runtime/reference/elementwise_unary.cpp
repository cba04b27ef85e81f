//===- runtime/reference/elementwise_unary.cpp - One-input elementwise ops -===//
//
// Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Sqrt, Exp,
// Log, Neg, Abs, Reciprocal, Sin, Cos, Not and Clip. Each op computes in its
// element type's compute type (float for f16/bf16) and runs as a parallel
// flat loop; the output has the input's desc.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class UnaryOp {
  kRelu,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kTanh,
  kErf,
  kSqrt,
  kExp,
  kLog,
  kNeg,
  kAbs,
  kReciprocal,
  kSin,
  kCos,
  kNot,
};

unsigned typesOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::kRelu:
    case UnaryOp::kNeg: return kSignedNumeric;
    case UnaryOp::kAbs:
    case UnaryOp::kErf: return kNumeric;
    case UnaryOp::kNot: return kBoolType;
    default: return kFloatTypes;
  }
}

template <typename T, typename F>
void mapElements(const TensorView& in, const TensorView& out, F f) {
  const T* x = in.data<T>();
  T* y = out.mutableData<T>();
  parallelFor(in.numElements(), 8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = store<T>(f(load(x[i])));
  });
}

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const Node& node, UnaryOp op) : op_(op) {
    if (op == UnaryOp::kLeakyRelu) alpha_ = node.getFloat("alpha", 0.01f);
    if (op == UnaryOp::kHardSigmoid) {
      alpha_ = node.getFloat("alpha", 0.2f);
      beta_ = node.getFloat("beta", 0.5f);
    }
  }

  Status resize(ResizeContext& ctx) const override {
    if (!typeInSet(ctx.inputDesc(0).dtype, typesOf(op_)))
      return unsupportedType(ctx.node(), ctx.inputDesc(0).dtype);
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& in = ctx.input(0);
    const TensorView& out = ctx.output(0);
    const float alpha = alpha_, beta = beta_;
    bool ok = true;
    auto floats = [&](auto f) {
      ok = visitType<kFloatTypes>(
          in.dtype(), [&](auto tag) { mapElements<typename decltype(tag)::type>(in, out, f); });
    };
    switch (op_) {
      case UnaryOp::kRelu:
        ok = visitType<kSignedNumeric>(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          mapElements<T>(in, out, [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; });
        });
        break;
      case UnaryOp::kNeg:
        ok = visitType<kSignedNumeric>(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          // Through the unsigned type for integers, so the most negative
          // value wraps instead of overflowing.
          mapElements<T>(in, out, [](auto x) {
            using C = decltype(x);
            if constexpr (std::is_integral_v<C>)
              return static_cast<C>(-static_cast<std::make_unsigned_t<C>>(x));
            else
              return -x;
          });
        });
        break;
      case UnaryOp::kAbs:
        ok = visitType<kNumeric>(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          mapElements<T>(in, out, [](auto x) {
            using C = decltype(x);
            if constexpr (std::is_unsigned_v<C>)
              return x;
            else if constexpr (std::is_integral_v<C>)
              return x < 0 ? static_cast<C>(-static_cast<std::make_unsigned_t<C>>(x)) : x;
            else
              return std::fabs(x);
          });
        });
        break;
      case UnaryOp::kErf:
        ok = visitType<kNumeric>(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          mapElements<T>(in, out, [](auto x) {
            using C = decltype(x);
            if constexpr (std::is_integral_v<C>)
              return static_cast<C>(std::erf(static_cast<double>(x)));
            else
              return std::erf(x);
          });
        });
        break;
      case UnaryOp::kNot: {
        const bool* x = in.data<bool>();
        bool* y = out.mutableData<bool>();
        for (int64_t i = 0, n = in.numElements(); i < n; ++i) y[i] = !x[i];
        break;
      }
      case UnaryOp::kLeakyRelu:
        floats([alpha](auto x) { return x < 0 ? static_cast<decltype(x)>(alpha) * x : x; });
        break;
      case UnaryOp::kSigmoid:
        floats([](auto x) {
          using C = decltype(x);
          // Split by sign so exp never overflows.
          if (x >= 0) return C(1) / (C(1) + std::exp(-x));
          C e = std::exp(x);
          return e / (C(1) + e);
        });
        break;
      case UnaryOp::kHardSigmoid:
        floats([alpha, beta](auto x) {
          using C = decltype(x);
          return std::max(C(0), std::min(C(1), static_cast<C>(alpha) * x + static_cast<C>(beta)));
        });
        break;
      case UnaryOp::kHardSwish:
        floats([](auto x) {
          using C = decltype(x);
          return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
        });
        break;
      case UnaryOp::kTanh: floats([](auto x) { return std::tanh(x); }); break;
      case UnaryOp::kSqrt: floats([](auto x) { return std::sqrt(x); }); break;
      case UnaryOp::kExp: floats([](auto x) { return std::exp(x); }); break;
      case UnaryOp::kLog: floats([](auto x) { return std::log(x); }); break;
      case UnaryOp::kReciprocal: floats([](auto x) { return decltype(x)(1) / x; }); break;
      case UnaryOp::kSin: floats([](auto x) { return std::sin(x); }); break;
      case UnaryOp::kCos: floats([](auto x) { return std::cos(x); }); break;
    }
    return ok ? Status::ok() : unsupportedType(ctx.node(), in.dtype());
  }

 private:
  UnaryOp op_;
  float alpha_ = 0, beta_ = 0;
};

// Clip(input, min?, max?): bounds come from optional inputs (opset 11+) or
// from the min/max attributes (older opsets); a missing bound is the type's
// lowest/highest value.
class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const Node& node) {
    if (node.attr("min")) attrMin_ = node.getFloat("min");
    if (node.attr("max")) attrMax_ = node.getFloat("max");
  }

  Status resize(ResizeContext& ctx) const override {
    DataType dt = ctx.inputDesc(0).dtype;
    if (!typeInSet(dt, kNumeric)) return unsupportedType(ctx.node(), dt);
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.hasInput(i)) continue;
      if (ctx.inputDesc(i).numElements() != 1)
        return ctx.fail(std::string(i == 1 ? "min" : "max") + " must be a scalar, got " +
                        ctx.inputDesc(i).toString());
      if (ctx.inputDesc(i).dtype != dt)
        return ctx.fail("bound type " + std::string(dataTypeName(ctx.inputDesc(i).dtype)) +
                        " differs from the input type " + std::string(dataTypeName(dt)));
    }
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& in = ctx.input(0);
    bool ok = visitType<kNumeric>(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
      if constexpr (std::is_floating_point_v<C>) {
        lo = -std::numeric_limits<C>::infinity();
        hi = std::numeric_limits<C>::infinity();
      }
      if (ctx.hasInput(1))
        lo = load(ctx.input(1).data<T>()[0]);
      else if (attrMin_)
        lo = static_cast<C>(*attrMin_);
      if (ctx.hasInput(2))
        hi = load(ctx.input(2).data<T>()[0]);
      else if (attrMax_)
        hi = static_cast<C>(*attrMax_);
      mapElements<T>(in, ctx.output(0), [lo, hi](C x) {
        // NaN passes through, as in ONNX Runtime.
        return x < lo ? lo : (x > hi ? hi : x);
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), in.dtype());
  }

 private:
  std::optional<float> attrMin_, attrMax_;
};

KernelCreator unary(UnaryOp op) {
  return [op](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel>(node, op));
  };
}

}  // namespace

void registerUnaryKernels(Provider& p) {
  p.add("Relu", unary(UnaryOp::kRelu));
  p.add("LeakyRelu", unary(UnaryOp::kLeakyRelu));
  p.add("Sigmoid", unary(UnaryOp::kSigmoid));
  p.add("HardSigmoid", unary(UnaryOp::kHardSigmoid));
  p.add("HardSwish", unary(UnaryOp::kHardSwish));
  p.add("Tanh", unary(UnaryOp::kTanh));
  p.add("Erf", unary(UnaryOp::kErf));
  p.add("Sqrt", unary(UnaryOp::kSqrt));
  p.add("Exp", unary(UnaryOp::kExp));
  p.add("Log", unary(UnaryOp::kLog));
  p.add("Neg", unary(UnaryOp::kNeg));
  p.add("Abs", unary(UnaryOp::kAbs));
  p.add("Reciprocal", unary(UnaryOp::kReciprocal));
  p.add("Sin", unary(UnaryOp::kSin));
  p.add("Cos", unary(UnaryOp::kCos));
  p.add("Not", unary(UnaryOp::kNot));
  p.add("Clip", creatorFor<ClipKernel>());
}

}  // namespace subgraph::runtime::reference
