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
// Both run on the exact integer GEMM of integer_gemm.h: the zero points are
// subtracted while the operands are widened to int16, and products sum in
// int32 accumulators that wrap as the spec's int32 accumulator does. Conv
// is im2col + GEMM per tile of output positions: each tile unrolls only its
// own columns (kTileColumns of them, a few hundred KB of int16 at most) so
// the unrolled patches stay in cache while the GEMM reads them, and tiles
// run in parallel. Padding contributes zero (it stands for the zero point).
// Requantization multiplies by the float32 product of the scales, rounds
// half to even and saturates to the output type, as the ONNX reference does.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>

#include "reference/integer_gemm.h"
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

//===--- Operands ---------------------------------------------------------===//

// Calls f(TypeTag<T>{}) for the 8-bit element type `dtype` (checked by
// resize() to be u8 or i8).
template <typename F>
void visitInt8(DataType dtype, F&& f) {
  if (dtype == DataType::kUInt8)
    f(TypeTag<uint8_t>{});
  else
    f(TypeTag<int8_t>{});
}

// v - zero as int16; exact, since both are 8-bit.
template <typename T>
int16_t centered(T v, int32_t zero) {
  return static_cast<int16_t>(static_cast<int32_t>(v) - zero);
}

// Copies rows x cols of an 8-bit matrix into int16 with a zero point per
// row (`rowZero`) or per column (`colZero`), as a GEMM operand.
template <typename T, typename RowZero, typename ColZero>
void centerMatrix(const T* src, int64_t rows, int64_t cols, RowZero rowZero, ColZero colZero,
                  int16_t* out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[i * cols + j] = centered(src[i * cols + j], rowZero(i) + colZero(j));
}

// Output positions per Conv tile: enough columns for whole 16-wide GEMM
// strips, few enough that a tile's unrolled patches (k x columns int16)
// stay in L2 for k up to a few thousand.
constexpr int64_t kTileColumns = 128;

// Unrolls output positions [j0, j0 + nt) of one 2-d image-group x[C][H][W]
// into col[C * kernelSize][nt] as x - zero; taps in the padding give 0.
template <typename T>
void im2colTile2d(const T* x, int64_t channels, const WindowGeometry& g, int32_t zero, int64_t j0,
                  int64_t nt, int16_t* col) {
  const int64_t H = g.inDims[0], W = g.inDims[1], OW = g.outDims[1];
  const int64_t KH = g.kernel[0], KW = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
  for (int64_t row = 0; row < channels * KH * KW; ++row) {
    const int64_t c = row / (KH * KW), kh = row / KW % KH, kw = row % KW;
    const int64_t offH = kh * g.dilations[0] - g.padBegin[0];
    const int64_t offW = kw * g.dilations[1] - g.padBegin[1];
    // Output columns ow with 0 <= ow * sw + offW < W.
    const int64_t lo = std::min(offW >= 0 ? 0 : (-offW + sw - 1) / sw, OW);
    const int64_t hi = std::clamp(W - offW <= 0 ? 0 : (W - 1 - offW) / sw + 1, lo, OW);
    const T* xc = x + c * H * W;
    int16_t* out = col + row * nt;
    for (int64_t j = 0, o = j0; j < nt;) {
      const int64_t oh = o / OW, ow0 = o % OW, len = std::min(OW - ow0, nt - j);
      const int64_t ih = oh * sh + offH;
      int16_t* seg = out + j;  // seg[ow - ow0] is column ow of this output row
      if (ih < 0 || ih >= H) {
        std::fill(seg, seg + len, int16_t{0});
      } else {
        const T* xr = xc + ih * W + offW;
        const int64_t a = std::clamp(lo, ow0, ow0 + len), b = std::clamp(hi, a, ow0 + len);
        std::fill(seg, seg + (a - ow0), int16_t{0});
        for (int64_t ow = a; ow < b; ++ow) seg[ow - ow0] = centered(xr[ow * sw], zero);
        std::fill(seg + (b - ow0), seg + len, int16_t{0});
      }
      j += len;
      o += len;
    }
  }
}

// im2colTile2d for any rank, one tap at a time.
template <typename T>
void im2colTile(const T* x, int64_t channels, const WindowGeometry& g, int32_t zero, int64_t j0,
                int64_t nt, int16_t* col) {
  if (g.inDims.size() == 2) return im2colTile2d(x, channels, g, zero, j0, nt, col);
  const size_t rank = g.inDims.size();
  const int64_t kernelSize = g.kernelSize();
  int64_t inSize = 1;
  for (int64_t d : g.inDims) inSize *= d;
  std::vector<int64_t> kidx(rank), oidx(rank);
  for (int64_t row = 0; row < channels * kernelSize; ++row) {
    int64_t rest = row % kernelSize;
    for (size_t d = rank; d-- > 0; rest /= g.kernel[d]) kidx[d] = rest % g.kernel[d];
    const T* xc = x + row / kernelSize * inSize;
    for (int64_t j = 0; j < nt; ++j) {
      rest = j0 + j;
      for (size_t d = rank; d-- > 0; rest /= g.outDims[d]) oidx[d] = rest % g.outDims[d];
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < rank && inside; ++d) {
        const int64_t pos = oidx[d] * g.strides[d] + kidx[d] * g.dilations[d] - g.padBegin[d];
        inside = pos >= 0 && pos < g.inDims[d];
        offset = offset * g.inDims[d] + pos;
      }
      col[row * nt + j] = inside ? centered(xc[offset], zero) : int16_t{0};
    }
  }
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
    const TensorView& y = ctx.output(0);
    const std::vector<int64_t>* dims[] = {&s.batchA, &s.batchB};
    BroadcastLoop loop(s.batch, dims);
    const int64_t m = s.m, n = s.n, k = s.k;
    loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t count) {
      std::vector<int16_t> a16(static_cast<size_t>(m * k)), b16(static_cast<size_t>(k * n));
      std::vector<int32_t> acc(static_cast<size_t>(requantize_ ? m * n : 0));
      for (int64_t z = 0; z < count; ++z) {
        const int64_t ia = off[0] + z * step[0], ib = off[1] + z * step[1], iy = oo + z;
        auto none = [](int64_t) { return int32_t{0}; };
        visitInt8(a.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          auto zero = [&](int64_t i) { return static_cast<int32_t>(azp.at(ia, i)); };
          centerMatrix(a.data<T>() + ia * m * k, m, k, zero, none, a16.data());
        });
        visitInt8(b.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          auto zero = [&](int64_t j) { return static_cast<int32_t>(bzp.at(ib, j)); };
          centerMatrix(b.data<T>() + ib * k * n, k, n, none, zero, b16.data());
        });
        const PackedIntegerA packed(a16.data(), k, m, k);
        int32_t* c = requantize_ ? acc.data() : y.mutableData<int32_t>() + iy * m * n;
        parallelFor((n + kTileColumns - 1) / kTileColumns, m * k * kTileColumns,
                    [&](int64_t t0, int64_t t1) {
                      const int64_t j0 = t0 * kTileColumns, j1 = std::min(n, t1 * kTileColumns);
                      integerGemm(packed, j1 - j0, b16.data() + j0, n, c + j0, n);
                    });
        if (!requantize_) continue;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const float scale = static_cast<float>(as.at(ia, i)) *
                                static_cast<float>(bs.at(ib, j)) / static_cast<float>(ys);
            storeQuantized(y.dtype(), y.raw(), (iy * m + i) * n + j,
                           static_cast<double>(acc[static_cast<size_t>(i * n + j)]) *
                                   static_cast<double>(scale) +
                               yzp);
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
    auto constant = [&](size_t i) {
      return i >= node.numInputs() || !node.input(i) || node.input(i)->isInitializer();
    };
    constantWeights_ = constant(wIndex()) && constant(requantize_ ? 5 : 3);
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
    const int64_t batch = x.dim(0), channels = x.dim(1), m = w.dim(0);
    const int64_t cg = channels / group_, mg = m / group_, k = cg * g.kernelSize();
    const int64_t outSize = g.outSize(), tiles = (outSize + kTileColumns - 1) / kTileColumns;
    int64_t inSize = 1;
    for (int64_t d : g.inDims) inSize *= d;
    // x_zero_point is input 2 in both ops.
    const auto zx = static_cast<int32_t>(ctx.hasInput(2) ? readInts(ctx.input(2))[0] : 0);
    const std::shared_ptr<const std::vector<PackedIntegerA>> packed = weightsFor(ctx, w, k);
    const std::vector<PackedIntegerA>& weights = *packed;
    const Requantization rq = requantize_ ? readRequantization(ctx) : Requantization{};
    const TensorView& y = ctx.output(0);
    // One task per (image, group, tile of output positions).
    parallelFor(batch * group_ * tiles, mg * k * kTileColumns, [&](int64_t begin, int64_t end) {
      // Per thread and reused: a tile's buffers are small and short-lived.
      thread_local std::vector<int16_t> col;
      thread_local std::vector<int32_t> acc;
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / (group_ * tiles), gi = task / tiles % group_, t = task % tiles;
        const int64_t j0 = t * kTileColumns, nt = std::min(kTileColumns, outSize - j0);
        col.resize(static_cast<size_t>(k * nt));
        visitInt8(x.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          im2colTile(x.data<T>() + (n * channels + gi * cg) * inSize, cg, g, zx, j0, nt,
                     col.data());
        });
        const int64_t firstChannel = n * m + gi * mg;
        if (!requantize_) {
          integerGemm(weights[static_cast<size_t>(gi)], nt, col.data(), nt,
                      y.mutableData<int32_t>() + firstChannel * outSize + j0, outSize);
          continue;
        }
        acc.resize(static_cast<size_t>(mg * nt));
        integerGemm(weights[static_cast<size_t>(gi)], nt, col.data(), nt, acc.data(), nt);
        for (int64_t r = 0; r < mg; ++r)
          rq.store(y, gi * mg + r, acc.data() + r * nt, nt, (firstChannel + r) * outSize + j0);
      }
    });
    return Status::ok();
  }

 private:
  // ConvInteger(x, w, ...) or QLinearConv(x, x_scale, x_zp, w, ...).
  size_t wIndex() const { return requantize_ ? 3 : 1; }

  // QLinearConv's scales, output zero point and bias, read once per run.
  struct Requantization {
    std::vector<double> xs, ws, ys, yzp, bias;

    static double at(const std::vector<double>& v, int64_t i, double fallback) {
      if (v.empty()) return fallback;
      return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
    }
    // Requantizes `count` accumulators of output channel `oc` into y from
    // element `offset` on.
    void store(const TensorView& y, int64_t oc, const int32_t* acc, int64_t count,
               int64_t offset) const {
      const double b = at(bias, oc, 0), zero = at(yzp, 0, 0);
      const float scale = static_cast<float>(at(xs, 0, 1)) * static_cast<float>(at(ws, oc, 1)) /
                          static_cast<float>(at(ys, 0, 1));
      for (int64_t j = 0; j < count; ++j)
        storeQuantized(y.dtype(), y.raw(), offset + j,
                       (static_cast<double>(acc[j]) + b) * static_cast<double>(scale) + zero);
    }
  };

  static Requantization readRequantization(const RunContext& ctx) {
    auto values = [&](size_t i) {
      return ctx.hasInput(i) ? readDoubles(ctx.input(i)) : std::vector<double>{};
    };
    return Requantization{values(1), values(4), values(6), values(7), values(8)};
  }

  // The packed weights: packed once, on the first run, when the weights and
  // their zero points are initializers (a model's weights are: packing a
  // 512 x 4608 layer each run cost more than some of its GEMMs, most of it
  // in fresh pages); packed per run otherwise.
  std::shared_ptr<const std::vector<PackedIntegerA>> weightsFor(const RunContext& ctx,
                                                                const TensorView& w,
                                                                int64_t k) const {
    if (!constantWeights_)
      return std::make_shared<const std::vector<PackedIntegerA>>(packWeights(ctx, w, k));
    std::lock_guard<std::mutex> lock(packMutex_);
    if (!packed_)
      packed_ = std::make_shared<const std::vector<PackedIntegerA>>(packWeights(ctx, w, k));
    return packed_;
  }

  // The weights minus their zero points (per tensor or per output channel),
  // packed once per group for the GEMM.
  std::vector<PackedIntegerA> packWeights(const RunContext& ctx, const TensorView& w,
                                          int64_t k) const {
    const size_t zpIndex = requantize_ ? 5 : 3;
    const std::vector<int64_t> zw =
        ctx.hasInput(zpIndex) ? readInts(ctx.input(zpIndex)) : std::vector<int64_t>{};
    const int64_t m = w.dim(0), mg = m / group_;
    auto zero = [&](int64_t oc) {
      if (zw.empty()) return int32_t{0};
      return static_cast<int32_t>(zw.size() == 1 ? zw[0] : zw[static_cast<size_t>(oc)]);
    };
    std::vector<int16_t> centeredW(static_cast<size_t>(m * k));
    visitInt8(w.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      centerMatrix(
          w.data<T>(), m, k, zero, [](int64_t) { return int32_t{0}; }, centeredW.data());
    });
    std::vector<PackedIntegerA> packed;
    packed.reserve(static_cast<size_t>(group_));
    for (int64_t gi = 0; gi < group_; ++gi)
      packed.emplace_back(centeredW.data() + gi * mg * k, k, mg, k);
    return packed;
  }

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

  bool constantWeights_ = false;
  mutable std::mutex packMutex_;
  mutable std::shared_ptr<const std::vector<PackedIntegerA>> packed_;
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
