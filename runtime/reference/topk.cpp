//===- runtime/reference/topk.cpp - TopK ----------------------------------===//
//
// TopK along one axis: the K largest (or smallest) values and their int64
// indices. Ties keep the lower index first, as ONNX specifies, so the sort is
// a stable ordering on (value, index); NaN sorts as larger than any number.
// K is a shape input (it sizes the outputs).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <numeric>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const Node& node)
      : axis_(node.getInt("axis", -1)),
        largest_(node.getInt("largest", 1) != 0),
        k_(node.getInt("k", -1)) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kNumeric)) return unsupportedType(ctx.node(), x.dtype);
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    int64_t k = k_;
    if (ctx.hasInput(1)) {
      std::vector<int64_t> kv = readInts(*ctx.inputContent(1));
      if (kv.size() != 1) return ctx.fail("K must hold one value");
      k = kv[0];
    }
    if (k < 0 || k > x.dims[static_cast<size_t>(axis)])
      return ctx.fail("K = " + std::to_string(k) + " is out of range for axis size " +
                      std::to_string(x.dims[static_cast<size_t>(axis)]));
    std::vector<int64_t> out = x.dims;
    out[static_cast<size_t>(axis)] = k;
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    ctx.setOutput(1, TensorDesc{DataType::kInt64, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    const int64_t len = x.dim(axis), k = ctx.output(0).dim(axis);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= x.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= x.dims()[d];
    }
    int64_t* pi = ctx.output(1).mutableData<int64_t>();
    visitType<kNumeric>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(outer * inner, len, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> order(static_cast<size_t>(len));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / inner, i = r % inner, base = o * len * inner + i;
          std::iota(order.begin(), order.end(), 0);
          auto value = [&](int64_t j) { return load(px[base + j * inner]); };
          auto before = [&](int64_t a, int64_t b) {
            C va = value(a), vb = value(b);
            if constexpr (std::is_floating_point_v<C>) {
              if (std::isnan(va) || std::isnan(vb)) {
                if (std::isnan(va) && std::isnan(vb)) return a < b;
                return largest_ ? std::isnan(va) : std::isnan(vb);
              }
            }
            if (va != vb) return largest_ ? va > vb : va < vb;
            return a < b;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t src = order[static_cast<size_t>(j)];
            py[(o * k + j) * inner + i] = px[base + src * inner];
            pi[(o * k + j) * inner + i] = src;
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  int64_t axis_;
  bool largest_;
  int64_t k_;
};

}  // namespace

void registerTopKKernels(Provider& p) { p.add("TopK", creatorFor<TopKKernel>()); }

}  // namespace subgraph::runtime::reference
