//===- runtime/reference/cast.cpp - Cast and CastLike ---------------------===//
//
// Cast between every fixed-size element type. Values convert through the
// compute types (float for f16/bf16). Float-to-integer conversions that C++
// leaves undefined are made safe: NaN becomes 0 and out-of-range values
// saturate to the target's limits. String tensors are not run-time types.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Cast, and CastLike, which takes the target type from its second input.
class CastKernel final : public Kernel {
 public:
  CastKernel(const Node& node, bool like) : like_(like) {
    if (like) return;
    if (!node.attr("to")) throwNodeError(node, "the 'to' attribute is required");
    to_ = static_cast<DataType>(node.getInt("to"));
    if (to_ == DataType::kString)
      throw Error(StatusCode::kUnsupported,
                  nodeErrorPrefix(&node) + "casting to string is not supported at run time");
    if (!typeInSet(to_, kAllTypes))
      throw Error(StatusCode::kUnsupported, nodeErrorPrefix(&node) +
                                                "cannot cast to element type " +
                                                std::to_string(node.getInt("to")));
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kAllTypes)) return unsupportedType(ctx.node(), x.dtype);
    DataType to = to_;
    if (like_) {
      if (!ctx.hasInput(1)) return ctx.fail("target_type is required");
      to = ctx.inputDesc(1).dtype;
      if (!typeInSet(to, kAllTypes)) return unsupportedType(ctx.node(), to);
    }
    ctx.setOutput(0, TensorDesc{to, x.dims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const DataType to = ctx.output(0).dtype();
    const int64_t n = x.numElements();
    visitType<kAllTypes>(x.dtype(), [&](auto from) {
      using S = typename decltype(from)::type;
      visitType<kAllTypes>(to, [&](auto target) {
        using D = typename decltype(target)::type;
        const S* src = x.data<S>();
        D* dst = ctx.output(0).mutableData<D>();
        if constexpr (std::is_same_v<S, D>) {
          if (n > 0 && static_cast<const void*>(src) != static_cast<void*>(dst))
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(S));
        } else {
          parallelFor(n, 4, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) dst[i] = store<D>(convert<Compute<D>>(load(src[i])));
          });
        }
      });
    });
    return Status::ok();
  }

 private:
  bool like_;
  DataType to_ = DataType::kFloat32;
};

KernelCreator cast(bool like) {
  return [like](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(node, like));
  };
}

}  // namespace

void registerCastKernels(Provider& p) {
  p.add("Cast", cast(false));
  p.add("CastLike", cast(true));
}

}  // namespace subgraph::runtime::reference
