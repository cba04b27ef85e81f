//===- runtime/reference/conv.cpp - Convolution ---------------------------===//
//
// N-d grouped, strided, dilated, padded convolution (ONNX Conv) as im2col
// followed by GEMM: per image and group, the input patches are unrolled into
// a [C/group * prod(kernel), prod(out)] matrix in scratch memory and
// multiplied by the group's weights [M/group, C/group * prod(kernel)] into
// the output rows, which are pre-filled with the bias. Pointwise convolutions
// (1x1, stride 1, no padding) skip im2col: the input already is that matrix.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "reference/gemm.h"
#include "reference/half_as_float.h"
#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "reference/window.h"

namespace subgraph::runtime::reference {
namespace {

// Unrolls the patches of one image-group x[C][in...] into col[C*K][O].
template <typename T>
void im2col(const T* x, int64_t channels, const WindowGeometry& g, T* col) {
  const size_t rank = g.inDims.size();
  const int64_t kernelSize = g.kernelSize(), outSize = g.outSize();
  int64_t inSize = 1;
  for (int64_t d : g.inDims) inSize *= d;
  parallelFor(channels * kernelSize, outSize, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> kidx(rank), oidx(rank);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t c = row / kernelSize;
      int64_t k = row % kernelSize;
      for (size_t i = rank; i-- > 0;) {
        kidx[i] = k % g.kernel[i];
        k /= g.kernel[i];
      }
      const T* xc = x + c * inSize;
      T* out = col + row * outSize;
      if (rank == 2) {
        // 2-d fast path: per output row, copy the valid span in one go.
        const int64_t H = g.inDims[0], W = g.inDims[1], OH = g.outDims[0], OW = g.outDims[1];
        const int64_t sh = g.strides[0], sw = g.strides[1];
        const int64_t offH = kidx[0] * g.dilations[0] - g.padBegin[0];
        const int64_t offW = kidx[1] * g.dilations[1] - g.padBegin[1];
        // ow range with 0 <= ow*sw + offW < W.
        int64_t lo = offW >= 0 ? 0 : (-offW + sw - 1) / sw;
        int64_t hi = W - offW <= 0 ? 0 : (W - 1 - offW) / sw + 1;
        lo = std::min(lo, OW);
        hi = std::clamp(hi, lo, OW);
        for (int64_t oh = 0; oh < OH; ++oh) {
          T* o = out + oh * OW;
          const int64_t ih = oh * sh + offH;
          if (ih < 0 || ih >= H) {
            std::fill(o, o + OW, T{});
            continue;
          }
          const T* xr = xc + ih * W;
          std::fill(o, o + lo, T{});
          if (sw == 1) {
            if (hi > lo)
              std::memcpy(o + lo, xr + lo + offW, static_cast<size_t>(hi - lo) * sizeof(T));
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) o[ow] = xr[ow * sw + offW];
          }
          std::fill(o + hi, o + OW, T{});
        }
        continue;
      }
      std::fill(oidx.begin(), oidx.end(), 0);
      for (int64_t o = 0; o < outSize; ++o) {
        int64_t offset = 0;
        bool inside = true;
        for (size_t i = 0; i < rank && inside; ++i) {
          int64_t pos = oidx[i] * g.strides[i] + kidx[i] * g.dilations[i] - g.padBegin[i];
          inside = pos >= 0 && pos < g.inDims[i];
          offset = offset * g.inDims[i] + pos;
        }
        out[o] = inside ? xc[offset] : T{};
        for (size_t i = rank; i-- > 0;) {
          if (++oidx[i] < g.outDims[i]) break;
          oidx[i] = 0;
        }
      }
    }
  });
}

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const Node& node)
      : attrs_(WindowAttrs::read(node)), group_(node.getInt("group", 1)) {
    if (group_ <= 0) throwNodeError(node, "group must be positive, got " + std::to_string(group_));
  }

  Status resize(ResizeContext& ctx) const override {
    if (!ctx.hasInput(0) || !ctx.hasInput(1)) return ctx.fail("X and W are required");
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& w = ctx.inputDesc(1);
    if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
      return unsupportedType(ctx.node(), x.dtype);
    if (w.dtype != x.dtype) return ctx.fail("W element type differs from X");
    if (x.dims.size() < 3) return ctx.fail("X must be [N, C, D1, ...], got " + x.toString());
    if (w.dims.size() != x.dims.size())
      return ctx.fail("W " + w.toString() + " and X " + x.toString() + " differ in rank");
    const int64_t channels = x.dims[1], m = w.dims[0];
    if (channels % group_ != 0 || m % group_ != 0)
      return ctx.fail("channels " + std::to_string(channels) + " and filters " + std::to_string(m) +
                      " must be multiples of group " + std::to_string(group_));
    if (w.dims[1] * group_ != channels)
      return ctx.fail("W " + w.toString() + " expects " + std::to_string(w.dims[1] * group_) +
                      " input channels, X has " + std::to_string(channels));
    if (ctx.hasInput(2) && ctx.inputDesc(2).dims != std::vector<int64_t>{m})
      return ctx.fail("B must be [" + std::to_string(m) + "], got " + ctx.inputDesc(2).toString());
    WindowGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, g));
    std::vector<int64_t> out = {x.dims[0], m};
    out.insert(out.end(), g.outDims.begin(), g.outDims.end());
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    if (!isPointwise(g)) {
      StatusOr<size_t> bytes =
          scratchBytes({channels / group_, static_cast<int64_t>(dataTypeSize(x.dtype)),
                        concurrentGroups(m / group_)},
                       {&g.kernel, &g.outDims}, "the convolution's im2col");
      if (!bytes.isOk()) return ctx.fail(bytes.status().message());
      ctx.requestScratch(*bytes);
    }
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    if (ctx.input(0).dtype() == DataType::kFloat64) return runTyped<double>(ctx);
    return runTyped<float>(ctx);
  }

 private:
  template <typename Ctx>
  Status geometry(const Ctx& ctx, WindowGeometry& g) const {
    const auto& xd = ctx.inputDesc(0).dims;
    const auto& wd = ctx.inputDesc(1).dims;
    std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
    std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
    if (!attrs_.kernelShape.empty() && attrs_.kernelShape != kernel)
      return ctx.fail("kernel_shape " + dimsToString(attrs_.kernelShape) +
                      " differs from the weights' " + dimsToString(kernel));
    Status st = resolveWindow(attrs_, spatial, kernel, g);
    return st.isOk() ? st : ctx.fail(st.message());
  }

  // Groups whose im2col buffers exist at once: all of them when the groups
  // are thin enough that running them side by side beats splitting each
  // GEMM, else one.
  int64_t concurrentGroups(int64_t filtersPerGroup) const {
    return group_ > 1 && filtersPerGroup <= 16 ? group_ : 1;
  }

  static bool isPointwise(const WindowGeometry& g) {
    for (size_t i = 0; i < g.kernel.size(); ++i)
      if (g.kernel[i] != 1 || g.strides[i] != 1 || g.padBegin[i] || g.padEnd[i]) return false;
    return true;
  }

  template <typename T>
  Status runTyped(RunContext& ctx) const {
    const TensorView& x = ctx.input(0);
    const TensorView& w = ctx.input(1);
    const TensorView& y = ctx.output(0);
    std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
    std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
    WindowGeometry g;
    Status st = resolveWindow(attrs_, spatial, kernel, g);
    if (!st.isOk()) return ctx.fail(st.message());
    const int64_t batch = x.dim(0), channels = x.dim(1), m = w.dim(0);
    const int64_t cg = channels / group_, mg = m / group_;
    const int64_t k = cg * g.kernelSize(), outSize = g.outSize();
    int64_t inSize = 1;
    for (int64_t d : spatial) inSize *= d;
    const bool pointwise = isPointwise(g);
    const T* bias = ctx.hasInput(2) ? ctx.input(2).data<T>() : nullptr;
    // One image-group: unroll its patches (unless pointwise) into `col`,
    // fill its output rows with the bias, multiply.
    auto convolveGroup = [&](int64_t n, int64_t gi, T* col) {
      const T* xg = x.data<T>() + (n * channels + gi * cg) * inSize;
      T* yg = y.mutableData<T>() + (n * m + gi * mg) * outSize;
      if (!pointwise) im2col(xg, cg, g, col);
      if (bias)
        for (int64_t r = 0; r < mg; ++r)
          std::fill(yg + r * outSize, yg + (r + 1) * outSize, bias[gi * mg + r]);
      gemm(false, false, mg, outSize, k, T(1), w.data<T>() + gi * mg * k, k, pointwise ? xg : col,
           outSize, bias ? T(1) : T(0), yg, outSize);
    };
    T* scratch = reinterpret_cast<T*>(ctx.scratch().data());
    const int64_t lanes = concurrentGroups(mg);
    for (int64_t n = 0; n < batch; ++n) {
      if (lanes == 1) {
        for (int64_t gi = 0; gi < group_; ++gi) convolveGroup(n, gi, scratch);
        continue;
      }
      // Many thin groups (depthwise): each GEMM is too small to split, so
      // the groups themselves run in parallel, each with its own scratch.
      parallelFor(group_, mg * k * outSize, [&](int64_t b, int64_t e) {
        for (int64_t gi = b; gi < e; ++gi)
          convolveGroup(n, gi, pointwise ? nullptr : scratch + gi * k * outSize);
      });
    }
    return Status::ok();
  }

  WindowAttrs attrs_;
  int64_t group_;
};

}  // namespace

void registerConvKernels(Provider& p) {  // f16/bf16 convolutions compute in f32 (half_as_float.h).
  p.add("Conv", halfAsFloat(creatorFor<ConvKernel>()));
}

}  // namespace subgraph::runtime::reference
