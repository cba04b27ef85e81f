//===- runtime/reference/elementwise_unary.cpp - One-input elementwise ops -===//
//
// Activations (Relu, LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, Sigmoid,
// HardSigmoid, HardSwish, Softplus, Softsign, Gelu, Tanh, Shrink), math (Erf,
// Sqrt, Exp, Log, Neg, Abs, Sign, Reciprocal, Floor, Ceil, Round and the
// trigonometric and hyperbolic functions), Not, Clip, IsNaN and IsInf. Each op computes in its
// element type's compute type (float for f16/bf16) and runs as a parallel
// flat loop; the output has the input's desc.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/gelu_f32.h"
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
  kElu,
  kSelu,
  kCelu,
  kThresholdedRelu,
  kShrink,
  kSoftplus,
  kSoftsign,
  kGelu,
  kFloor,
  kCeil,
  kRound,
  kSign,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
};

unsigned typesOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::kRelu:
    case UnaryOp::kNeg: return kSignedNumeric;
    case UnaryOp::kAbs:
    case UnaryOp::kErf:
    case UnaryOp::kShrink:
    case UnaryOp::kSign: return kNumeric;
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
    switch (op) {
      case UnaryOp::kLeakyRelu: alpha_ = node.getFloat("alpha", 0.01f); break;
      case UnaryOp::kHardSigmoid:
        alpha_ = node.getFloat("alpha", 0.2f);
        beta_ = node.getFloat("beta", 0.5f);
        break;
      case UnaryOp::kElu:
      case UnaryOp::kCelu:
      case UnaryOp::kThresholdedRelu: alpha_ = node.getFloat("alpha", 1.0f); break;
      case UnaryOp::kSelu:
        alpha_ = node.getFloat("alpha", 1.67326319217681884765625f);
        beta_ = node.getFloat("gamma", 1.05070102214813232421875f);
        break;
      case UnaryOp::kShrink:
        alpha_ = node.getFloat("lambd", 0.5f);
        beta_ = node.getFloat("bias", 0.0f);
        break;
      case UnaryOp::kGelu: {
        std::string approx = node.getString("approximate", "none");
        if (approx != "none" && approx != "tanh")
          throwNodeError(node, "unknown approximate '" + approx + "'");
        alpha_ = approx == "tanh" ? 1.0f : 0.0f;
        break;
      }
      default: break;
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
      // The clamps compare, so that NaN passes through them as through Clip
      // (std::min(1, NaN) would be 1, and HardSigmoid(NaN) 1).
      case UnaryOp::kHardSigmoid:
        floats([alpha, beta](auto x) {
          using C = decltype(x);
          const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
          return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
        });
        break;
      case UnaryOp::kHardSwish:
        floats([](auto x) {
          using C = decltype(x);
          const C v = x / C(6) + C(0.5);
          return x * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
        });
        break;
      case UnaryOp::kTanh: floats([](auto x) { return std::tanh(x); }); break;
      case UnaryOp::kSqrt: floats([](auto x) { return std::sqrt(x); }); break;
      case UnaryOp::kExp: floats([](auto x) { return std::exp(x); }); break;
      case UnaryOp::kLog: floats([](auto x) { return std::log(x); }); break;
      case UnaryOp::kReciprocal: floats([](auto x) { return decltype(x)(1) / x; }); break;
      case UnaryOp::kSin: floats([](auto x) { return std::sin(x); }); break;
      case UnaryOp::kCos: floats([](auto x) { return std::cos(x); }); break;
      case UnaryOp::kTan: floats([](auto x) { return std::tan(x); }); break;
      case UnaryOp::kAsin: floats([](auto x) { return std::asin(x); }); break;
      case UnaryOp::kAcos: floats([](auto x) { return std::acos(x); }); break;
      case UnaryOp::kAtan: floats([](auto x) { return std::atan(x); }); break;
      case UnaryOp::kSinh: floats([](auto x) { return std::sinh(x); }); break;
      case UnaryOp::kCosh: floats([](auto x) { return std::cosh(x); }); break;
      case UnaryOp::kAsinh: floats([](auto x) { return std::asinh(x); }); break;
      case UnaryOp::kAcosh: floats([](auto x) { return std::acosh(x); }); break;
      case UnaryOp::kAtanh: floats([](auto x) { return std::atanh(x); }); break;
      case UnaryOp::kFloor: floats([](auto x) { return std::floor(x); }); break;
      case UnaryOp::kCeil: floats([](auto x) { return std::ceil(x); }); break;
      // Round half to even, as ONNX specifies (the default FP rounding mode).
      case UnaryOp::kRound: floats([](auto x) { return std::nearbyint(x); }); break;
      case UnaryOp::kElu:
        floats([alpha](auto x) {
          using C = decltype(x);
          return x >= C(0) ? x : static_cast<C>(alpha) * (std::exp(x) - C(1));
        });
        break;
      case UnaryOp::kCelu:
        floats([alpha](auto x) {
          using C = decltype(x);
          C a = static_cast<C>(alpha);
          return std::max(C(0), x) + std::min(C(0), a * (std::exp(x / a) - C(1)));
        });
        break;
      case UnaryOp::kSelu:
        floats([alpha, beta](auto x) {
          using C = decltype(x);
          return static_cast<C>(beta) *
                 (x > C(0) ? x : static_cast<C>(alpha) * (std::exp(x) - C(1)));
        });
        break;
      case UnaryOp::kThresholdedRelu:
        floats(
            [alpha](auto x) { return x > static_cast<decltype(x)>(alpha) ? x : decltype(x)(0); });
        break;
      case UnaryOp::kSoftplus:
        floats([](auto x) {
          using C = decltype(x);
          // log(1 + exp(x)) without overflow for large x.
          return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
        });
        break;
      case UnaryOp::kSoftsign:
        floats([](auto x) { return x / (decltype(x)(1) + std::fabs(x)); });
        break;
      case UnaryOp::kGelu:
        if (in.dtype() == DataType::kFloat32) {  // vectorized (gelu_f32.h)
          (alpha != 0 ? geluTanhF32 : geluErfF32)(in.data<float>(), out.mutableData<float>(),
                                                  in.numElements());
          break;
        }
        floats([tanhApprox = alpha != 0](auto x) {
          using C = decltype(x);
          // The limit at -inf is 0; the formulas give -inf * 0 there.
          if (x == -std::numeric_limits<C>::infinity()) return C(-0.0);
          if (tanhApprox)
            return C(0.5) * x *
                   (C(1) +
                    std::tanh(static_cast<C>(0.7978845608028654) * (x + C(0.044715) * x * x * x)));
          return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(0.7071067811865476)));
        });
        break;
      case UnaryOp::kShrink:
        ok = visitType<kNumeric>(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          mapElements<T>(in, out, [alpha, beta](auto x) {
            using C = decltype(x);
            double v = static_cast<double>(x);
            double r = v < -alpha ? v + beta : (v > alpha ? v - beta : 0.0);
            if constexpr (std::is_unsigned_v<C>) r = std::max(r, 0.0);  // no negative unsigned
            return static_cast<C>(r);
          });
        });
        break;
      case UnaryOp::kSign:
        ok = visitType<kNumeric>(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          mapElements<T>(in, out, [](auto x) {
            using C = decltype(x);
            if constexpr (std::is_floating_point_v<C>)
              if (std::isnan(x)) return x;
            return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
          });
        });
        break;
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

// IsNaN and IsInf: float in, bool out.
class FloatClassKernel final : public Kernel {
 public:
  FloatClassKernel(const Node& node, bool isInf)
      : isInf_(isInf),
        negative_(node.getInt("detect_negative", 1) != 0),
        positive_(node.getInt("detect_positive", 1) != 0) {}
  Status resize(ResizeContext& ctx) const override {
    if (!typeInSet(ctx.inputDesc(0).dtype, kFloatTypes))
      return unsupportedType(ctx.node(), ctx.inputDesc(0).dtype);
    ctx.setOutput(0, TensorDesc{DataType::kBool, ctx.inputDesc(0).dims, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& in = ctx.input(0);
    bool* y = ctx.output(0).mutableData<bool>();
    visitType<kFloatTypes>(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = in.data<T>();
      for (int64_t i = 0, n = in.numElements(); i < n; ++i) {
        auto v = load(x[i]);
        y[i] = isInf_ ? std::isinf(v) && ((v > 0 && positive_) || (v < 0 && negative_))
                      : std::isnan(v);
      }
    });
    return Status::ok();
  }

 private:
  bool isInf_, negative_, positive_;
};

KernelCreator floatClass(bool isInf) {
  return [isInf](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<FloatClassKernel>(node, isInf));
  };
}

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
  p.add("Elu", unary(UnaryOp::kElu));
  p.add("Selu", unary(UnaryOp::kSelu));
  p.add("Celu", unary(UnaryOp::kCelu));
  p.add("ThresholdedRelu", unary(UnaryOp::kThresholdedRelu));
  p.add("Shrink", unary(UnaryOp::kShrink));
  p.add("Softplus", unary(UnaryOp::kSoftplus));
  p.add("Softsign", unary(UnaryOp::kSoftsign));
  p.add("Gelu", unary(UnaryOp::kGelu));
  p.add("Floor", unary(UnaryOp::kFloor));
  p.add("Ceil", unary(UnaryOp::kCeil));
  p.add("Round", unary(UnaryOp::kRound));
  p.add("Sign", unary(UnaryOp::kSign));
  p.add("Tan", unary(UnaryOp::kTan));
  p.add("Asin", unary(UnaryOp::kAsin));
  p.add("Acos", unary(UnaryOp::kAcos));
  p.add("Atan", unary(UnaryOp::kAtan));
  p.add("Sinh", unary(UnaryOp::kSinh));
  p.add("Cosh", unary(UnaryOp::kCosh));
  p.add("Asinh", unary(UnaryOp::kAsinh));
  p.add("Acosh", unary(UnaryOp::kAcosh));
  p.add("Atanh", unary(UnaryOp::kAtanh));
  p.add("IsNaN", floatClass(false));
  p.add("IsInf", floatClass(true));
}

}  // namespace subgraph::runtime::reference
