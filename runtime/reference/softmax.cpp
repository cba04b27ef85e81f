//===- runtime/reference/softmax.cpp - Softmax, LogSoftmax, Hardmax -------===//
//
// Softmax, LogSoftmax and Hardmax along one axis (opset 13+), or over the flattened trailing dims
// from `axis` on (opsets before 13, where the input is coerced to 2-d).
// Each row subtracts its maximum before exponentiating, so large inputs do
// not overflow; rows run in parallel.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(const Node& node, SoftmaxKind kind) : kind_(kind), coerce2d_(opsetOf(node) < 13) {
    axis_ = node.attr("axis") ? node.getInt("axis") : (coerce2d_ ? 1 : -1);
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    int64_t axis = axis_;
    int64_t rank = static_cast<int64_t>(x.dims.size());
    if (!normalizeAxis(axis, std::max<int64_t>(rank, 1)))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    ctx.setOutput(0, x);
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = axis_;
    const int64_t rank = static_cast<int64_t>(x.rank());
    normalizeAxis(axis, std::max<int64_t>(rank, 1));
    // View as [outer, len, inner]; softmax over len.
    int64_t outer = 1, len = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = x.dims()[static_cast<size_t>(d)];
      if (d < axis)
        outer *= size;
      else if (d == axis || coerce2d_)
        len *= size;
      else
        inner *= size;
    }
    bool ok = visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(outer * inner, len * 4, [&](int64_t begin, int64_t end) {
        std::vector<C> e(static_cast<size_t>(len));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t base = (r / inner) * len * inner + r % inner;
          C m = -std::numeric_limits<C>::infinity();
          int64_t argmax = 0;
          for (int64_t i = 0; i < len; ++i) {
            C v = load(px[base + i * inner]);
            if (v > m) {
              m = v;
              argmax = i;
            }
          }
          if (kind_ == SoftmaxKind::kHardmax) {
            // 1 at the first maximum, 0 elsewhere.
            for (int64_t i = 0; i < len; ++i)
              py[base + i * inner] = store<T>(i == argmax ? C(1) : C(0));
            continue;
          }
          C sum = 0;
          for (int64_t i = 0; i < len; ++i) {
            e[static_cast<size_t>(i)] = std::exp(load(px[base + i * inner]) - m);
            sum += e[static_cast<size_t>(i)];
          }
          if (kind_ == SoftmaxKind::kLogSoftmax) {
            const C logSum = std::log(sum);
            for (int64_t i = 0; i < len; ++i)
              py[base + i * inner] = store<T>(load(px[base + i * inner]) - m - logSum);
            continue;
          }
          for (int64_t i = 0; i < len; ++i)
            py[base + i * inner] = store<T>(e[static_cast<size_t>(i)] / sum);
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  SoftmaxKind kind_;
  bool coerce2d_;
  int64_t axis_;
};

KernelCreator softmax(SoftmaxKind kind) {
  return [kind](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel>(node, kind));
  };
}

}  // namespace

void registerSoftmaxKernels(Provider& p) {
  p.add("Softmax", softmax(SoftmaxKind::kSoftmax));
  p.add("LogSoftmax", softmax(SoftmaxKind::kLogSoftmax));
  p.add("Hardmax", softmax(SoftmaxKind::kHardmax));
}

}  // namespace subgraph::runtime::reference
