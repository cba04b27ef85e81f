//===- runtime/reference/reduce.cpp - Reductions --------------------------===//
//
// The Reduce* family (Mean, Sum, Max, Min, Prod, L1, L2, LogSum,
// LogSumExp, SumSquare) over a set of axes, given as an attribute (older
// opsets) or as the optional second input (ReduceSum 13+, all of them from
// opset 18), with keepdims and noop_with_empty_axes; and ArgMax/ArgMin along
// one axis with select_last_index; and the CumSum scan.
//
// Floating reductions accumulate in double. Integer Sum, Prod, SumSquare
// and L1 wrap in the element type, like numpy; integer means, norms and
// logarithms go through double. Empty reductions give the identity of the
// operation: 0 (Sum, L1, L2, SumSquare), 1 (Prod), -inf or the lowest value
// (Max, LogSum, LogSumExp), +inf or the highest (Min), NaN (Mean).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class ReduceOp { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Kept and reduced dims of an input, with the input strides of each.
struct ReduceGeometry {
  std::vector<int64_t> keptDims, keptStrides, redDims, redStrides;
  int64_t outCount = 1, redCount = 1;

  ReduceGeometry(const std::vector<int64_t>& dims, const std::vector<bool>& reduced) {
    std::vector<int64_t> strides = contiguousStrides(dims);
    for (size_t d = 0; d < dims.size(); ++d) {
      (reduced[d] ? redDims : keptDims).push_back(dims[d]);
      (reduced[d] ? redStrides : keptStrides).push_back(strides[d]);
    }
    for (int64_t d : keptDims) outCount *= d;
    for (int64_t d : redDims) redCount *= d;
  }
  int64_t base(int64_t o) const {
    int64_t off = 0;
    for (size_t k = keptDims.size(); k-- > 0;) {
      off += (o % keptDims[k]) * keptStrides[k];
      o /= keptDims[k];
    }
    return off;
  }
  // Calls f(offset) for each reduced element of output `o`, in row-major order.
  template <typename F>
  void forEach(int64_t o, F&& f) const {
    const int64_t b = base(o);
    std::vector<int64_t> idx(redDims.size(), 0);
    for (int64_t r = 0; r < redCount; ++r) {
      int64_t off = b;
      for (size_t k = 0; k < redDims.size(); ++k) off += idx[k] * redStrides[k];
      f(off);
      for (size_t k = redDims.size(); k-- > 0;) {
        if (++idx[k] < redDims[k]) break;
        idx[k] = 0;
      }
    }
  }
};

// Reduces the values f(offset) yields for one output with `op`.
template <typename C, typename Values>
C reduceOne(ReduceOp op, int64_t count, Values&& forEach) {
  constexpr bool kFloat = std::is_floating_point_v<C>;
  constexpr C kLowest =
      kFloat ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
  constexpr C kHighest =
      kFloat ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
  switch (op) {
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      C best = op == ReduceOp::kMax ? kLowest : kHighest;
      bool nan = false;
      forEach([&](C v) {
        if constexpr (kFloat) nan = nan || std::isnan(v);
        if (op == ReduceOp::kMax ? v > best : v < best) best = v;
      });
      if constexpr (kFloat)
        if (nan) return std::numeric_limits<C>::quiet_NaN();
      return best;
    }
    case ReduceOp::kLogSumExp: {
      C m = kLowest;
      forEach([&](C v) { m = std::max(m, v); });
      if (count == 0) return kLowest;
      double shift = std::isfinite(static_cast<double>(m)) ? static_cast<double>(m) : 0.0;
      double s = 0;
      forEach([&](C v) { s += std::exp(static_cast<double>(v) - shift); });
      return static_cast<C>(shift + std::log(s));
    }
    default: break;
  }
  if constexpr (!kFloat) {
    // Wrapping integer accumulation, as numpy does.
    if (op == ReduceOp::kSum || op == ReduceOp::kProd || op == ReduceOp::kSumSquare ||
        op == ReduceOp::kL1) {
      C acc = op == ReduceOp::kProd ? C(1) : C(0);
      forEach([&](C v) {
        if (op == ReduceOp::kSum)
          acc = wrapAdd(acc, v);
        else if (op == ReduceOp::kProd)
          acc = wrapMul(acc, v);
        else if (op == ReduceOp::kSumSquare)
          acc = wrapAdd(acc, wrapMul(v, v));
        else
          acc = wrapAdd(acc, static_cast<C>(v < 0 ? wrapMul(v, static_cast<C>(-1)) : v));
      });
      return acc;
    }
  }
  double acc = op == ReduceOp::kProd ? 1.0 : 0.0;
  forEach([&](C v) {
    double d = static_cast<double>(v);
    switch (op) {
      case ReduceOp::kProd: acc *= d; break;
      case ReduceOp::kL1: acc += std::fabs(d); break;
      case ReduceOp::kL2:
      case ReduceOp::kSumSquare: acc += d * d; break;
      default: acc += d; break;
    }
  });
  switch (op) {
    case ReduceOp::kMean:
      acc = count ? acc / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
      break;
    case ReduceOp::kL2: acc = std::sqrt(acc); break;
    case ReduceOp::kLogSum: acc = std::log(acc); break;
    default: break;
  }
  if constexpr (!kFloat) {
    // Integer results of means, norms and logs: truncate, saturating.
    if (std::isnan(acc)) return C(0);
    acc = std::clamp(acc, static_cast<double>(std::numeric_limits<C>::lowest()),
                     static_cast<double>(std::numeric_limits<C>::max()));
  }
  return static_cast<C>(acc);
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(const Node& node, ReduceOp op)
      : op_(op),
        axesAttr_(node.getInts("axes")),
        keepDims_(node.getInt("keepdims", 1) != 0),
        noopWithEmptyAxes_(node.getInt("noop_with_empty_axes", 0) != 0) {}

  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    unsigned types = op_ == ReduceOp::kMax || op_ == ReduceOp::kMin ? kAllTypes : kNumeric;
    if (!typeInSet(x.dtype, types)) return unsupportedType(ctx.node(), x.dtype);
    std::vector<bool> reduced;
    SUBGRAPH_RETURN_IF_ERROR(
        reducedAxes(ctx, x.dims, ctx.hasInput(1) ? ctx.inputContent(1) : nullptr, reduced));
    std::vector<int64_t> out;
    for (size_t d = 0; d < x.dims.size(); ++d) {
      if (!reduced[d])
        out.push_back(x.dims[d]);
      else if (keepDims_)
        out.push_back(1);
    }
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<bool> reduced;
    SUBGRAPH_RETURN_IF_ERROR(
        reducedAxes(ctx, x.dims(), ctx.hasInput(1) ? &ctx.input(1) : nullptr, reduced));
    ReduceGeometry g(x.dims(), reduced);
    bool ok = visitType<kAllTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<std::is_same_v<T, bool>, uint8_t, Compute<T>>;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(g.outCount, g.redCount, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          C r = reduceOne<C>(op_, g.redCount, [&](auto&& f) {
            g.forEach(o, [&](int64_t off) { f(static_cast<C>(load(px[off]))); });
          });
          if constexpr (std::is_same_v<T, bool>)
            py[o] = r != 0;
          else
            py[o] = store<T>(r);
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  template <typename Ctx>
  Status reducedAxes(const Ctx& ctx, const std::vector<int64_t>& dims, const TensorView* axesInput,
                     std::vector<bool>& reduced) const {
    const int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> axes = axesInput ? readInts(*axesInput) : axesAttr_;
    reduced.assign(dims.size(), false);
    if (axes.empty()) {
      // No axes: reduce everything, unless noop_with_empty_axes says not to.
      if (!noopWithEmptyAxes_) reduced.assign(dims.size(), true);
      return Status::ok();
    }
    for (int64_t a : axes) {
      int64_t axis = a;
      if (!normalizeAxis(axis, rank))
        return ctx.fail("axis " + std::to_string(a) + " is out of range for rank " +
                        std::to_string(rank));
      if (reduced[static_cast<size_t>(axis)])
        return ctx.fail("axis " + std::to_string(a) + " is repeated");
      reduced[static_cast<size_t>(axis)] = true;
    }
    return Status::ok();
  }

  ReduceOp op_;
  std::vector<int64_t> axesAttr_;
  bool keepDims_;
  bool noopWithEmptyAxes_;
};

// ArgMax / ArgMin along one axis -> int64 indices.
class ArgKernel final : public Kernel {
 public:
  ArgKernel(const Node& node, bool max)
      : max_(max),
        axis_(node.getInt("axis", 0)),
        keepDims_(node.getInt("keepdims", 1) != 0),
        selectLast_(node.getInt("select_last_index", 0) != 0) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kNumeric)) return unsupportedType(ctx.node(), x.dtype);
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    if (x.dims[static_cast<size_t>(axis)] == 0)
      return ctx.fail("cannot take the arg of an empty axis");
    std::vector<int64_t> out;
    for (size_t d = 0; d < x.dims.size(); ++d) {
      if (static_cast<int64_t>(d) != axis)
        out.push_back(x.dims[d]);
      else if (keepDims_)
        out.push_back(1);
    }
    ctx.setOutput(0, TensorDesc{DataType::kInt64, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= x.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= x.dims()[d];
    }
    const int64_t len = x.dim(axis);
    int64_t* py = ctx.output(0).mutableData<int64_t>();
    bool ok = visitType<kNumeric>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      parallelFor(outer * inner, len, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t base = (r / inner) * len * inner + r % inner;
          auto best = load(px[base]);
          int64_t at = 0;
          for (int64_t i = 1; i < len; ++i) {
            auto v = load(px[base + i * inner]);
            bool better =
                max_ ? (selectLast_ ? v >= best : v > best) : (selectLast_ ? v <= best : v < best);
            if (better) {
              best = v;
              at = i;
            }
          }
          py[r] = at;
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  bool max_;
  int64_t axis_;
  bool keepDims_, selectLast_;
};

// CumSum(x, axis) with exclusive and reverse; the axis is read at run time
// (it does not change the shape).
class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const Node& node)
      : exclusive_(node.getInt("exclusive", 0) != 0), reverse_(node.getInt("reverse", 0) != 0) {}

  Status resize(ResizeContext& ctx) const override {
    if (!typeInSet(ctx.inputDesc(0).dtype, kNumeric))
      return unsupportedType(ctx.node(), ctx.inputDesc(0).dtype);
    if (!ctx.hasInput(1) || ctx.inputDesc(1).numElements() != 1)
      return ctx.fail("axis must hold one value");
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = readInts(ctx.input(1)).at(0);
    if (!normalizeAxis(axis, static_cast<int64_t>(x.rank())))
      return ctx.fail("axis " + std::to_string(readInts(ctx.input(1)).at(0)) +
                      " is out of range for " + x.desc().toString());
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= x.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= x.dims()[d];
    }
    const int64_t len = x.dim(axis);
    visitType<kNumeric>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(outer * inner, len, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t base = (r / inner) * len * inner + r % inner;
          C acc = 0;
          for (int64_t s = 0; s < len; ++s) {
            const int64_t j = reverse_ ? len - 1 - s : s;
            const C v = load(px[base + j * inner]);
            // Integer sums wrap, as ONNX Runtime's do (C++ overflow is
            // undefined).
            if (exclusive_) {
              py[base + j * inner] = store<T>(acc);
              acc = wrapAdd<C>(acc, v);
            } else {
              acc = wrapAdd<C>(acc, v);
              py[base + j * inner] = store<T>(acc);
            }
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  bool exclusive_, reverse_;
};

KernelCreator reduce(ReduceOp op) {
  return [op](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel>(node, op));
  };
}

KernelCreator arg(bool max) {
  return [max](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<ArgKernel>(node, max));
  };
}

}  // namespace

void registerReduceKernels(Provider& p) {
  p.add("ReduceMean", reduce(ReduceOp::kMean));
  p.add("ReduceSum", reduce(ReduceOp::kSum));
  p.add("ReduceMax", reduce(ReduceOp::kMax));
  p.add("ReduceMin", reduce(ReduceOp::kMin));
  p.add("ReduceProd", reduce(ReduceOp::kProd));
  p.add("ReduceL1", reduce(ReduceOp::kL1));
  p.add("ReduceL2", reduce(ReduceOp::kL2));
  p.add("ReduceLogSum", reduce(ReduceOp::kLogSum));
  p.add("ReduceLogSumExp", reduce(ReduceOp::kLogSumExp));
  p.add("ReduceSumSquare", reduce(ReduceOp::kSumSquare));
  p.add("ArgMax", arg(true));
  p.add("ArgMin", arg(false));
  p.add("CumSum", creatorFor<CumSumKernel>());
}

}  // namespace subgraph::runtime::reference
