//===- runtime/reference/reduce.cpp - Reductions --------------------------===//
//
// ReduceMean, ReduceSum and ReduceMax over a set of axes, given as an
// attribute (older opsets) or as the optional second input (ReduceSum 13+,
// all reductions from opset 18), with keepdims and noop_with_empty_axes.
// Floating sums and means accumulate in double; integer sums wrap in their
// own type. Empty reductions give 0 (Sum), NaN (Mean) and the lowest value
// (Max).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class ReduceOp { kMean, kSum, kMax };

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
    unsigned types = op_ == ReduceOp::kMax ? kAllTypes : kNumeric;
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
    // Split dims into kept (output order) and reduced, with input strides.
    std::vector<int64_t> strides = contiguousStrides(x.dims());
    std::vector<int64_t> keptDims, keptStrides, redDims, redStrides;
    for (size_t d = 0; d < x.rank(); ++d) {
      (reduced[d] ? redDims : keptDims).push_back(x.dims()[d]);
      (reduced[d] ? redStrides : keptStrides).push_back(strides[d]);
    }
    int64_t outCount = 1, redCount = 1;
    for (int64_t d : keptDims) outCount *= d;
    for (int64_t d : redDims) redCount *= d;
    bool ok = visitType<kAllTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(outCount, redCount, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> idx(redDims.size());
        for (int64_t o = begin; o < end; ++o) {
          int64_t base = 0, rest = o;
          for (size_t k = keptDims.size(); k-- > 0;) {
            base += (rest % keptDims[k]) * keptStrides[k];
            rest /= keptDims[k];
          }
          std::fill(idx.begin(), idx.end(), 0);
          double sum = 0;
          C acc = 0;
          C best = std::numeric_limits<C>::lowest();
          if constexpr (std::is_floating_point_v<C>) best = -std::numeric_limits<C>::infinity();
          bool anyNan = false;
          for (int64_t r = 0; r < redCount; ++r) {
            int64_t off = base;
            for (size_t k = 0; k < redDims.size(); ++k) off += idx[k] * redStrides[k];
            C v = load(px[off]);
            if (op_ == ReduceOp::kMax) {
              if constexpr (std::is_floating_point_v<C>) anyNan = anyNan || std::isnan(v);
              if (v > best) best = v;
            } else if constexpr (std::is_floating_point_v<C>) {
              sum += static_cast<double>(v);
            } else if constexpr (std::is_same_v<C, bool>) {
              sum += v ? 1.0 : 0.0;
            } else {
              using U = std::make_unsigned_t<C>;
              acc = static_cast<C>(static_cast<U>(acc) + static_cast<U>(v));
              sum += static_cast<double>(v);
            }
            for (size_t k = redDims.size(); k-- > 0;) {
              if (++idx[k] < redDims[k]) break;
              idx[k] = 0;
            }
          }
          C result;
          if (op_ == ReduceOp::kMax) {
            result = best;
            if constexpr (std::is_floating_point_v<C>)
              if (anyNan) result = std::numeric_limits<C>::quiet_NaN();
          } else if (op_ == ReduceOp::kSum) {
            if constexpr (std::is_floating_point_v<C> || std::is_same_v<C, bool>)
              result = static_cast<C>(sum);
            else
              result = acc;
          } else {
            result = static_cast<C>(redCount ? sum / static_cast<double>(redCount)
                                             : std::numeric_limits<double>::quiet_NaN());
          }
          py[o] = store<T>(result);
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

KernelCreator reduce(ReduceOp op) {
  return [op](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<ReduceKernel>(node, op));
  };
}

}  // namespace

void registerReduceKernels(Provider& p) {
  p.add("ReduceMean", reduce(ReduceOp::kMean));
  p.add("ReduceSum", reduce(ReduceOp::kSum));
  p.add("ReduceMax", reduce(ReduceOp::kMax));
}

}  // namespace subgraph::runtime::reference
