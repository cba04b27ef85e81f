//===- runtime/reference/conv_transpose.cpp - Transposed convolution ------===//
//
// N-d grouped ConvTranspose as GEMM followed by col2im: per image and group,
// col [M/group * prod(kernel), prod(in)] = W_g^T x X_g, then every column
// entry is added into the output position its input position and kernel tap
// map to (o = i * stride - pad_begin + k * dilation). The output is first
// filled with the bias.
//
// Output size per axis: output_shape when given (padding derived from it),
// else stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads.
// With auto_pad SAME_* the output is in * stride and the odd padding unit
// goes to the end for SAME_UPPER and to the beginning otherwise (also when
// output_shape decides the padding), as the ONNX conformance data expects.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "reference/gemm.h"
#include "reference/half_as_float.h"
#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "reference/window.h"
#include "subgraph/support/checked_int.h"

namespace subgraph::runtime::reference {
namespace {

struct TransposeGeometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, padBegin;
  int64_t inSize() const {
    int64_t n = 1;
    for (int64_t d : in) n *= d;
    return n;
  }
  int64_t outSize() const {
    int64_t n = 1;
    for (int64_t d : out) n *= d;
    return n;
  }
  int64_t kernelSize() const {
    int64_t n = 1;
    for (int64_t d : kernel) n *= d;
    return n;
  }
};

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const Node& node)
      : attrs_(WindowAttrs::read(node)),
        group_(node.getInt("group", 1)),
        outputPadding_(node.getInts("output_padding")),
        outputShape_(node.getInts("output_shape")) {
    if (group_ <= 0) throwNodeError(node, "group must be positive, got " + std::to_string(group_));
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& w = ctx.inputDesc(1);
    if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
      return unsupportedType(ctx.node(), x.dtype);
    if (w.dtype != x.dtype) return ctx.fail("W element type differs from X");
    if (x.dims.size() < 3 || w.dims.size() != x.dims.size())
      return ctx.fail("X " + x.toString() + " and W " + w.toString() +
                      " must be [N, C, D...] and [C, M/group, k...]");
    if (w.dims[0] != x.dims[1] || x.dims[1] % group_ != 0)
      return ctx.fail("W " + w.toString() + " does not match " + std::to_string(x.dims[1]) +
                      " input channels in " + std::to_string(group_) + " groups");
    const int64_t m = w.dims[1] * group_;
    if (ctx.hasInput(2) && ctx.inputDesc(2).numElements() != m)
      return ctx.fail("B must have " + std::to_string(m) + " elements");
    TransposeGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims, w.dims, g));
    std::vector<int64_t> out = {x.dims[0], m};
    out.insert(out.end(), g.out.begin(), g.out.end());
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    StatusOr<size_t> bytes =
        scratchBytes({w.dims[1], static_cast<int64_t>(dataTypeSize(x.dtype))}, {&g.kernel, &g.in},
                     "the transposed convolution's column buffer");
    if (!bytes.isOk()) return ctx.fail(bytes.status().message());
    ctx.requestScratch(*bytes);
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    if (ctx.input(0).dtype() == DataType::kFloat64) return runTyped<double>(ctx);
    return runTyped<float>(ctx);
  }

 private:
  template <typename Ctx>
  Status geometry(const Ctx& ctx, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                  TransposeGeometry& g) const {
    const size_t rank = xd.size() - 2;
    g.in.assign(xd.begin() + 2, xd.end());
    g.kernel.assign(wd.begin() + 2, wd.end());
    if (!attrs_.kernelShape.empty() && attrs_.kernelShape != g.kernel)
      return ctx.fail("kernel_shape " + dimsToString(attrs_.kernelShape) +
                      " differs from the weights'");
    auto perAxis = [&](const std::vector<int64_t>& v, int64_t fallback, const char* what,
                       std::vector<int64_t>& outv) -> Status {
      if (v.empty())
        outv.assign(rank, fallback);
      else if (v.size() == rank)
        outv = v;
      else
        return ctx.fail(std::string(what) + " needs " + std::to_string(rank) + " entries");
      return Status::ok();
    };
    std::vector<int64_t> outPad;
    SUBGRAPH_RETURN_IF_ERROR(perAxis(attrs_.strides, 1, "strides", g.strides));
    SUBGRAPH_RETURN_IF_ERROR(perAxis(attrs_.dilations, 1, "dilations", g.dilations));
    SUBGRAPH_RETURN_IF_ERROR(perAxis(outputPadding_, 0, "output_padding", outPad));
    if (!attrs_.pads.empty() && attrs_.pads.size() != 2 * rank)
      return ctx.fail("pads needs " + std::to_string(2 * rank) + " entries");
    std::vector<int64_t> shape = outputShape_;
    if (shape.size() == rank + 2) shape.erase(shape.begin(), shape.begin() + 2);
    if (!shape.empty() && shape.size() != rank)
      return ctx.fail("output_shape needs " + std::to_string(rank) + " entries");
    const bool same = attrs_.autoPad == "SAME_UPPER" || attrs_.autoPad == "SAME_LOWER";
    g.padBegin.assign(rank, 0);
    g.out.assign(rank, 0);
    // Strides, dilations, pads and output_shape come from the model: the
    // sizes are computed with overflow checks, and one past int64 fails.
    for (size_t i = 0; i < rank; ++i) {
      const CheckedInt full = CheckedInt(g.strides[i]) * (CheckedInt(g.in[i]) - 1) + outPad[i] +
                              (CheckedInt(g.kernel[i]) - 1) * g.dilations[i] + 1;
      CheckedInt out = 0, begin = 0;
      if (!shape.empty() || same) {
        const CheckedInt target = shape.empty() ? CheckedInt(g.in[i]) * g.strides[i] : shape[i];
        const CheckedInt total = full - target;
        const bool positive = total.ok() && total.value() > 0;
        begin = !positive                        ? CheckedInt(0)
                : attrs_.autoPad == "SAME_UPPER" ? total / 2
                                                 : total - total / 2;
        out = target;
      } else {
        begin = attrs_.pads.empty() ? 0 : attrs_.pads[i];
        out = full - begin - (attrs_.pads.empty() ? 0 : attrs_.pads[i + rank]);
      }
      if (!full.ok() || !out.ok() || !begin.ok())
        return ctx.fail("output dim " + std::to_string(i) + " overflows int64");
      g.padBegin[i] = begin.value();
      g.out[i] = out.value();
      if (g.out[i] < 0) return ctx.fail("output dim " + std::to_string(i) + " would be negative");
    }
    return Status::ok();
  }

  template <typename T>
  Status runTyped(RunContext& ctx) const {
    const TensorView& x = ctx.input(0);
    const TensorView& w = ctx.input(1);
    const TensorView& y = ctx.output(0);
    TransposeGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims(), w.dims(), g));
    const size_t rank = g.in.size();
    const int64_t batch = x.dim(0), c = x.dim(1), cg = c / group_, mg = w.dim(1), m = mg * group_;
    const int64_t ks = g.kernelSize(), is = g.inSize(), os = g.outSize();
    T* col = reinterpret_cast<T*>(ctx.scratch().data());
    const T* bias = ctx.hasInput(2) ? ctx.input(2).data<T>() : nullptr;
    std::vector<int64_t> outStrides = contiguousStrides(g.out);
    for (int64_t n = 0; n < batch; ++n) {
      T* yn = y.mutableData<T>() + n * m * os;
      for (int64_t ch = 0; ch < m; ++ch)
        std::fill(yn + ch * os, yn + (ch + 1) * os, bias ? bias[ch] : T(0));
      for (int64_t gi = 0; gi < group_; ++gi) {
        const T* xg = x.data<T>() + (n * c + gi * cg) * is;
        const T* wg = w.data<T>() + gi * cg * mg * ks;
        gemm(true, false, mg * ks, is, cg, T(1), wg, mg * ks, xg, is, T(0), col, is);
        T* yg = yn + gi * mg * os;
        // col2im: each output channel is written by its own rows only, so
        // channels run in parallel without races.
        parallelFor(mg, ks * is, [&](int64_t begin, int64_t end) {
          std::vector<int64_t> kidx(rank), iidx(rank);
          for (int64_t oc = begin; oc < end; ++oc) {
            for (int64_t k = 0; k < ks; ++k) {
              int64_t rest = k;
              for (size_t a = rank; a-- > 0;) {
                kidx[a] = rest % g.kernel[a];
                rest /= g.kernel[a];
              }
              const T* row = col + (oc * ks + k) * is;
              std::fill(iidx.begin(), iidx.end(), 0);
              for (int64_t i = 0; i < is; ++i) {
                int64_t off = 0;
                bool inside = true;
                for (size_t a = 0; a < rank && inside; ++a) {
                  int64_t o = iidx[a] * g.strides[a] - g.padBegin[a] + kidx[a] * g.dilations[a];
                  inside = o >= 0 && o < g.out[a];
                  off += o * outStrides[a];
                }
                if (inside) yg[oc * os + off] += row[i];
                for (size_t a = rank; a-- > 0;) {
                  if (++iidx[a] < g.in[a]) break;
                  iidx[a] = 0;
                }
              }
            }
          }
        });
      }
    }
    return Status::ok();
  }

  WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> outputPadding_, outputShape_;
};

}  // namespace

void registerConvTransposeKernels(Provider& p) {
  // f16/bf16 convolutions compute in f32 (half_as_float.h).
  p.add("ConvTranspose", halfAsFloat(creatorFor<ConvTransposeKernel>()));
}

}  // namespace subgraph::runtime::reference
