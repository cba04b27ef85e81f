//===- runtime/reference/quantized_linear.cpp - Integer MatMul and Conv ---===//
//
// The quantized linear ops on 8-bit integers:
//
//   MatMulInteger(A, B, a_zp, b_zp)   -> i32  (A - a_zp) x (B - b_zp)
//   ConvInteger(x, w, x_zp, w_zp)     -> i32  conv(x - x_zp, w - w_zp)
//   QLinearMatMul / QLinearConv       -> saturate(round(acc * sa * sb / sy) + y_zp)
//
// MatMul follows numpy (1-d operands promoted, batch dims broadcast); zero
// points and scales of A are per tensor, per row ([M]) or per batch row
// ([..., M, 1]), those of B per tensor, per column ([N]) or per batch
// column ([..., 1, N]). Conv takes every Conv attribute (window.h); the
// weight's zero point and scale are per tensor or per output channel.
//
// Products accumulate in int64 (no overflow for any 8-bit input), and the
// i32 outputs take the low 32 bits as the spec's int32 accumulator would.
// Requantization multiplies by the float32 product of the scales, rounds
// half to even and saturates to the output type, as the ONNX reference does.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "reference/window.h"

namespace subgraph::runtime::reference {
namespace {

bool isInt8Like(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

// A zero point or scale along one matrix axis: per tensor, per index along
// the axis, or per (batch, index).
struct AxisParam {
  std::vector<double> values;
  int64_t axisSize = 1;
  bool perIndex = false, perBatch = false;
  double at(int64_t batch, int64_t i) const {
    if (values.empty()) return 0;
    if (!perIndex) return values[0];
    return values[static_cast<size_t>((perBatch ? batch * axisSize : 0) + i)];
  }
};

// Reads `param` for an operand of `dims` (already promoted to rank >= 2)
// whose per-index axis is `axis` (rank-2 for rows, rank-1 for columns).
template <typename Ctx>
Status readAxisParam(const Ctx& ctx, const TensorView* param, const std::vector<int64_t>& dims,
                     size_t axis, const char* what, AxisParam& out) {
  if (!param) return Status::ok();
  out.values = readDoubles(*param);
  out.axisSize = dims[axis];
  if (param->numElements() == 1) return Status::ok();
  out.perIndex = true;
  if (param->dims() == std::vector<int64_t>{dims[axis]}) return Status::ok();
  std::vector<int64_t> batched = dims;
  batched[axis == dims.size() - 2 ? dims.size() - 1 : dims.size() - 2] = 1;
  if (param->dims() == batched) {
    out.perBatch = true;
    return Status::ok();
  }
  return ctx.fail(std::string(what) + " " + param->desc().toString() +
                  " is neither a scalar, per-row/column nor per-batch " + dimsToString(batched));
}

Status checkParamShape(const ResizeContext& ctx, size_t input, const std::vector<int64_t>& dims,
                       size_t axis, const char* what) {
  if (!ctx.hasInput(input)) return Status::ok();
  const TensorDesc& p = ctx.inputDesc(input);
  if (p.numElements() == 1 || p.dims == std::vector<int64_t>{dims[axis]}) return Status::ok();
  std::vector<int64_t> batched = dims;
  batched[axis == dims.size() - 2 ? dims.size() - 1 : dims.size() - 2] = 1;
  if (p.dims == batched) return Status::ok();
  return ctx.fail(std::string(what) + " " + p.toString() +
                  " is neither a scalar, per-row/column nor per-batch " + dimsToString(batched));
}

// numpy MatMul shapes.
struct MatMulShapes {
  int64_t m = 1, n = 1, k = 1;
  std::vector<int64_t> a, b;  // promoted to rank >= 2
  std::vector<int64_t> batchA, batchB, batch, out;
};

bool matmulShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, MatMulShapes& s) {
  if (a.empty() || b.empty()) return false;
  s.a = a;
  s.b = b;
  const bool aVec = a.size() == 1, bVec = b.size() == 1;
  if (aVec) s.a.insert(s.a.begin(), 1);
  if (bVec) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k) return false;
  s.batchA.assign(s.a.begin(), s.a.end() - 2);
  s.batchB.assign(s.b.begin(), s.b.end() - 2);
  const std::vector<int64_t>* both[] = {&s.batchA, &s.batchB};
  if (!broadcastDims(both, s.batch)) return false;
  s.out = s.batch;
  if (!aVec) s.out.push_back(s.m);
  if (!bVec) s.out.push_back(s.n);
  return true;
}

// Saturating round-half-even of `v` to the 8-bit output type `dt`.
void storeQuantized(DataType dt, void* out, int64_t i, double v) {
  v = std::nearbyint(v);
  if (dt == DataType::kUInt8)
    static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
  else
    static_cast<int8_t*>(out)[i] = static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
}

//===--- MatMul -----------------------------------------------------------===//

class IntegerMatMulKernel final : public Kernel {
 public:
  IntegerMatMulKernel(const Node&, bool requantize) : requantize_(requantize) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& a = ctx.inputDesc(0);
    const TensorDesc& b = ctx.inputDesc(in(kB));
    if (!isInt8Like(a.dtype)) return unsupportedType(ctx.node(), a.dtype);
    if (!isInt8Like(b.dtype)) return unsupportedType(ctx.node(), b.dtype);
    MatMulShapes s;
    if (!matmulShapes(a.dims, b.dims, s))
      return ctx.fail("shapes " + dimsToString(a.dims) + " and " + dimsToString(b.dims) +
                      " are not compatible for MatMul");
    SUBGRAPH_RETURN_IF_ERROR(checkParamShape(ctx, in(kAZero), s.a, s.a.size() - 2, "a_zero_point"));
    SUBGRAPH_RETURN_IF_ERROR(checkParamShape(ctx, in(kBZero), s.b, s.b.size() - 1, "b_zero_point"));
    DataType out = DataType::kInt32;
    if (requantize_) {
      SUBGRAPH_RETURN_IF_ERROR(checkParamShape(ctx, 1, s.a, s.a.size() - 2, "a_scale"));
      SUBGRAPH_RETURN_IF_ERROR(checkParamShape(ctx, 4, s.b, s.b.size() - 1, "b_scale"));
      if (!ctx.hasInput(6) || !ctx.hasInput(7) || ctx.inputDesc(6).numElements() != 1 ||
          ctx.inputDesc(7).numElements() != 1)
        return ctx.fail("y_scale and y_zero_point must be scalars");
      out = ctx.inputDesc(7).dtype;
      if (!isInt8Like(out)) return unsupportedType(ctx.node(), out);
    }
    ctx.setOutput(0, TensorDesc{out, s.out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& a = ctx.input(0);
    const TensorView& b = ctx.input(in(kB));
    MatMulShapes s;
    matmulShapes(a.dims(), b.dims(), s);
    auto opt = [&](size_t i) { return ctx.hasInput(i) ? &ctx.input(i) : nullptr; };
    AxisParam azp, bzp, as, bs;
    SUBGRAPH_RETURN_IF_ERROR(
        readAxisParam(ctx, opt(in(kAZero)), s.a, s.a.size() - 2, "a_zero_point", azp));
    SUBGRAPH_RETURN_IF_ERROR(
        readAxisParam(ctx, opt(in(kBZero)), s.b, s.b.size() - 1, "b_zero_point", bzp));
    double ys = 1, yzp = 0;
    if (requantize_) {
      SUBGRAPH_RETURN_IF_ERROR(readAxisParam(ctx, opt(1), s.a, s.a.size() - 2, "a_scale", as));
      SUBGRAPH_RETURN_IF_ERROR(readAxisParam(ctx, opt(4), s.b, s.b.size() - 1, "b_scale", bs));
      ys = readDoubles(ctx.input(6))[0];
      yzp = readDoubles(ctx.input(7))[0];
    }
    const std::vector<double> av = readDoubles(a), bv = readDoubles(b);
    const TensorView& y = ctx.output(0);
    const std::vector<int64_t>* dims[] = {&s.batchA, &s.batchB};
    BroadcastLoop loop(s.batch, dims);
    const int64_t m = s.m, n = s.n, k = s.k;
    loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t count) {
      for (int64_t z = 0; z < count; ++z) {
        const int64_t ia = off[0] + z * step[0], ib = off[1] + z * step[1], iy = oo + z;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            int64_t acc = 0;
            const int64_t za = static_cast<int64_t>(azp.at(ia, i));
            const int64_t zb = static_cast<int64_t>(bzp.at(ib, j));
            for (int64_t p = 0; p < k; ++p)
              acc += (static_cast<int64_t>(av[static_cast<size_t>((ia * m + i) * k + p)]) - za) *
                     (static_cast<int64_t>(bv[static_cast<size_t>((ib * k + p) * n + j)]) - zb);
            const int64_t o = (iy * m + i) * n + j;
            if (!requantize_) {
              y.mutableData<int32_t>()[o] = static_cast<int32_t>(acc);
              continue;
            }
            const float scale = static_cast<float>(as.at(ia, i)) *
                                static_cast<float>(bs.at(ib, j)) / static_cast<float>(ys);
            storeQuantized(y.dtype(), y.raw(), o,
                           static_cast<double>(acc) * static_cast<double>(scale) + yzp);
          }
      }
    });
    return Status::ok();
  }

 private:
  enum Operand { kB, kAZero, kBZero };
  // Input index of an operand: MatMulInteger(A, B, a_zp, b_zp) or
  // QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
  size_t in(Operand o) const {
    switch (o) {
      case kB: return requantize_ ? 3 : 1;
      case kAZero: return 2;  // The same in both.
      case kBZero: return requantize_ ? 5 : 3;
    }
    return 0;
  }

  bool requantize_;
};

//===--- Conv -------------------------------------------------------------===//

class IntegerConvKernel final : public Kernel {
 public:
  IntegerConvKernel(const Node& node, bool requantize)
      : requantize_(requantize), attrs_(WindowAttrs::read(node)), group_(node.getInt("group", 1)) {
    if (group_ <= 0) throwNodeError(node, "group must be positive, got " + std::to_string(group_));
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& w = ctx.inputDesc(wIndex());
    if (!isInt8Like(x.dtype)) return unsupportedType(ctx.node(), x.dtype);
    if (!isInt8Like(w.dtype)) return unsupportedType(ctx.node(), w.dtype);
    if (x.dims.size() < 3) return ctx.fail("x must be [N, C, D1, ...], got " + x.toString());
    if (w.dims.size() != x.dims.size())
      return ctx.fail("w " + w.toString() + " and x " + x.toString() + " differ in rank");
    const int64_t channels = x.dims[1], m = w.dims[0];
    if (channels % group_ != 0 || m % group_ != 0 || w.dims[1] * group_ != channels)
      return ctx.fail("w " + w.toString() + " does not fit x " + x.toString() + " with group " +
                      std::to_string(group_));
    auto perChannel = [&](size_t i, const char* what) -> Status {
      if (!ctx.hasInput(i)) return Status::ok();
      const TensorDesc& p = ctx.inputDesc(i);
      if (p.numElements() == 1 || p.dims == std::vector<int64_t>{m}) return Status::ok();
      return ctx.fail(std::string(what) + " must be a scalar or [" + std::to_string(m) + "], got " +
                      p.toString());
    };
    auto scalar = [&](size_t i, const char* what) -> Status {
      if (!ctx.hasInput(i) || ctx.inputDesc(i).numElements() == 1) return Status::ok();
      return ctx.fail(std::string(what) + " must be a scalar, got " + ctx.inputDesc(i).toString());
    };
    DataType out = DataType::kInt32;
    if (requantize_) {
      if (!ctx.hasInput(7)) return ctx.fail("y_zero_point is required");
      SUBGRAPH_RETURN_IF_ERROR(scalar(1, "x_scale"));
      SUBGRAPH_RETURN_IF_ERROR(scalar(2, "x_zero_point"));
      SUBGRAPH_RETURN_IF_ERROR(perChannel(4, "w_scale"));
      SUBGRAPH_RETURN_IF_ERROR(perChannel(5, "w_zero_point"));
      SUBGRAPH_RETURN_IF_ERROR(scalar(6, "y_scale"));
      SUBGRAPH_RETURN_IF_ERROR(scalar(7, "y_zero_point"));
      if (ctx.hasInput(8) && ctx.inputDesc(8).dims != std::vector<int64_t>{m})
        return ctx.fail("B must be [" + std::to_string(m) + "], got " +
                        ctx.inputDesc(8).toString());
      out = ctx.inputDesc(7).dtype;
      if (!isInt8Like(out)) return unsupportedType(ctx.node(), out);
    } else {
      SUBGRAPH_RETURN_IF_ERROR(scalar(2, "x_zero_point"));
      SUBGRAPH_RETURN_IF_ERROR(perChannel(3, "w_zero_point"));
    }
    WindowGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims, w.dims, g));
    std::vector<int64_t> dims = {x.dims[0], m};
    dims.insert(dims.end(), g.outDims.begin(), g.outDims.end());
    ctx.setOutput(0, TensorDesc{out, dims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const TensorView& w = ctx.input(wIndex());
    WindowGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims(), w.dims(), g));
    auto values = [&](size_t i) {
      return ctx.hasInput(i) ? readDoubles(ctx.input(i)) : std::vector<double>{};
    };
    auto at = [](const std::vector<double>& v, int64_t i, double fallback) {
      if (v.empty()) return fallback;
      return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
    };
    const std::vector<double> xzp = values(2);  // x_zero_point is input 2 in both ops.
    const std::vector<double> wzp = values(requantize_ ? 5 : 3);
    const std::vector<double> xs = values(1), ws = values(4), ys = values(6), yzp = values(7),
                              bias = requantize_ ? values(8) : std::vector<double>{};
    const std::vector<double> xv = readDoubles(x), wv = readDoubles(w);
    const size_t rank = g.inDims.size();
    const int64_t batch = x.dim(0), channels = x.dim(1), m = w.dim(0);
    const int64_t cg = channels / group_, mg = m / group_;
    const int64_t outSize = g.outSize(), kernelSize = g.kernelSize();
    int64_t inSize = 1;
    for (int64_t d : g.inDims) inSize *= d;
    const TensorView& y = ctx.output(0);
    // One (image, output channel) plane per task.
    parallelFor(batch * m, outSize * cg * kernelSize, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> oidx(rank), kidx(rank);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / m, oc = task % m, gi = oc / mg;
        const int64_t zx = static_cast<int64_t>(at(xzp, 0, 0));
        const int64_t zw = static_cast<int64_t>(at(wzp, oc, 0));
        for (int64_t o = 0; o < outSize; ++o) {
          int64_t rest = o;
          for (size_t d = rank; d-- > 0;) {
            oidx[d] = rest % g.outDims[d];
            rest /= g.outDims[d];
          }
          int64_t acc = 0;
          for (int64_t c = 0; c < cg; ++c) {
            const int64_t xBase = (n * channels + gi * cg + c) * inSize;
            const int64_t wBase = (oc * cg + c) * kernelSize;
            for (int64_t kk = 0; kk < kernelSize; ++kk) {
              int64_t krest = kk, offset = 0;
              bool inside = true;
              for (size_t d = rank; d-- > 0;) {
                kidx[d] = krest % g.kernel[d];
                krest /= g.kernel[d];
              }
              for (size_t d = 0; d < rank && inside; ++d) {
                const int64_t pos =
                    oidx[d] * g.strides[d] + kidx[d] * g.dilations[d] - g.padBegin[d];
                inside = pos >= 0 && pos < g.inDims[d];
                offset = offset * g.inDims[d] + pos;
              }
              // Padding is the zero point, which contributes zero.
              if (!inside) continue;
              acc += (static_cast<int64_t>(xv[static_cast<size_t>(xBase + offset)]) - zx) *
                     (static_cast<int64_t>(wv[static_cast<size_t>(wBase + kk)]) - zw);
            }
          }
          const int64_t out = task * outSize + o;
          if (!requantize_) {
            y.mutableData<int32_t>()[out] = static_cast<int32_t>(acc);
            continue;
          }
          acc += static_cast<int64_t>(at(bias, oc, 0));
          const float scale = static_cast<float>(at(xs, 0, 1)) * static_cast<float>(at(ws, oc, 1)) /
                              static_cast<float>(at(ys, 0, 1));
          storeQuantized(y.dtype(), y.raw(), out,
                         static_cast<double>(acc) * static_cast<double>(scale) + at(yzp, 0, 0));
        }
      }
    });
    return Status::ok();
  }

 private:
  // ConvInteger(x, w, ...) or QLinearConv(x, x_scale, x_zp, w, ...).
  size_t wIndex() const { return requantize_ ? 3 : 1; }

  template <typename Ctx>
  Status geometry(const Ctx& ctx, const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                  WindowGeometry& g) const {
    std::vector<int64_t> spatial(xd.begin() + 2, xd.end());
    std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
    if (!attrs_.kernelShape.empty() && attrs_.kernelShape != kernel)
      return ctx.fail("kernel_shape " + dimsToString(attrs_.kernelShape) +
                      " differs from the weights' " + dimsToString(kernel));
    Status st = resolveWindow(attrs_, spatial, kernel, g);
    return st.isOk() ? st : ctx.fail(st.message());
  }

  bool requantize_;
  WindowAttrs attrs_;
  int64_t group_;
};

template <typename K>
KernelCreator quantized(bool requantize) {
  return [requantize](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<K>(node, requantize));
  };
}

}  // namespace

void registerQuantizedLinearKernels(Provider& p) {
  p.add("MatMulInteger", quantized<IntegerMatMulKernel>(false));
  p.add("QLinearMatMul", quantized<IntegerMatMulKernel>(true));
  p.add("ConvInteger", quantized<IntegerConvKernel>(false));
  p.add("QLinearConv", quantized<IntegerConvKernel>(true));
}

}  // namespace subgraph::runtime::reference
