//===- runtime/reference/compress.cpp - Compress --------------------------===//
//
// Compress(input, condition): the slices of `input` along `axis` (the
// elements of the flattened input when `axis` is absent) whose entry in the
// 1-d bool `condition` is true. A condition shorter than the axis drops the
// slices past its end, as ONNX allows. The output size depends on the
// condition's values, so condition is a shape input.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const Node& node)
      : hasAxis_(node.hasAttr("axis")), axis_(node.getInt("axis", 0)) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorView& cond = *ctx.inputContent(1);
    Geometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims, cond, g));
    std::vector<int64_t> selected = selectedSlices(cond, g.axisSize);
    std::vector<int64_t> out;
    if (hasAxis_) {
      out = x.dims;
      out[static_cast<size_t>(g.axis)] = static_cast<int64_t>(selected.size());
    } else {
      out = {static_cast<int64_t>(selected.size())};
    }
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    Geometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims(), ctx.input(1), g));
    std::vector<int64_t> selected = selectedSlices(ctx.input(1), g.axisSize);
    const size_t esize = dataTypeSize(x.dtype());
    const size_t sliceBytes = static_cast<size_t>(g.inner) * esize;
    const auto* src = static_cast<const std::byte*>(x.raw());
    auto* dst = static_cast<std::byte*>(ctx.output(0).raw());
    const int64_t kept = static_cast<int64_t>(selected.size());
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t j = 0; j < kept; ++j)
        std::memcpy(dst + static_cast<size_t>(o * kept + j) * sliceBytes,
                    src + static_cast<size_t>(o * g.axisSize + selected[static_cast<size_t>(j)]) *
                              sliceBytes,
                    sliceBytes);
    return Status::ok();
  }

 private:
  // The input seen as [outer, axisSize, inner].
  struct Geometry {
    int64_t axis = 0, outer = 1, axisSize = 1, inner = 1;
  };

  template <typename Ctx>
  Status geometry(const Ctx& ctx, const std::vector<int64_t>& dims, const TensorView& cond,
                  Geometry& g) const {
    if (cond.dtype() != DataType::kBool)
      return ctx.fail("condition must be bool, got " + std::string(dataTypeName(cond.dtype())));
    if (cond.rank() != 1) return ctx.fail("condition must be 1-d, got " + cond.desc().toString());
    if (hasAxis_) {
      g.axis = axis_;
      if (!normalizeAxis(g.axis, static_cast<int64_t>(dims.size())))
        return ctx.fail("axis " + std::to_string(axis_) + " is out of range for rank " +
                        std::to_string(dims.size()));
      for (size_t d = 0; d < dims.size(); ++d) {
        if (static_cast<int64_t>(d) < g.axis) g.outer *= dims[d];
        if (static_cast<int64_t>(d) > g.axis) g.inner *= dims[d];
      }
      g.axisSize = dims[static_cast<size_t>(g.axis)];
    } else {
      g.axisSize = 1;
      for (int64_t d : dims) g.axisSize *= d;
    }
    if (cond.numElements() > g.axisSize)
      return ctx.fail("condition has " + std::to_string(cond.numElements()) +
                      " entries for an axis of size " + std::to_string(g.axisSize));
    return Status::ok();
  }

  // Indices along the axis whose condition is true.
  static std::vector<int64_t> selectedSlices(const TensorView& cond, int64_t axisSize) {
    std::vector<int64_t> out;
    const bool* c = cond.data<bool>();
    for (int64_t i = 0; i < std::min(cond.numElements(), axisSize); ++i)
      if (c[i]) out.push_back(i);
    return out;
  }

  bool hasAxis_;
  int64_t axis_;
};

}  // namespace

void registerCompressKernels(Provider& p) { p.add("Compress", creatorFor<CompressKernel>()); }

}  // namespace subgraph::runtime::reference
