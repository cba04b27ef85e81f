//===- runtime/reference/quantize.cpp - Linear (de)quantization -----------===//
//
// QuantizeLinear (y = saturate(round_half_even(x / scale) + zero_point)) and
// DequantizeLinear (y = (x - zero_point) * scale), per tensor or per axis
// (a 1-d scale along `axis`). The zero point's type, uint8 by default, is
// the quantized type.
//
// DynamicQuantizeLinear picks the uint8 scale and zero point from x's range
// (widened to include 0), in float32 as the ONNX reference computes them:
// scale = (max - min) / 255 (1 / 255 for an all-zero x), zero point =
// round(clamp(-min / scale, 0, 255)), y = saturate(round(x / scale) + zp),
// rounding half to even. Its range scan and its quantization loop both run
// in parallel chunks and give the serial loops' results bit for bit.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

// Per-element scale and zero point index: per tensor, or along `axis`.
struct QuantParams {
  std::vector<double> scale, zero;
  int64_t axisSize = 1, inner = 1;
  double scaleAt(int64_t i) const {
    return scale.size() == 1 ? scale[0] : scale[static_cast<size_t>((i / inner) % axisSize)];
  }
  double zeroAt(int64_t i) const {
    if (zero.empty()) return 0;
    return zero.size() == 1 ? zero[0] : zero[static_cast<size_t>((i / inner) % axisSize)];
  }
};

template <typename Ctx>
Status quantParams(const Ctx& ctx, const std::vector<int64_t>& dims, int64_t axisAttr,
                   int64_t scaleElements, QuantParams* p) {
  if (scaleElements == 1) return Status::ok();
  int64_t axis = axisAttr;
  if (!normalizeAxis(axis, static_cast<int64_t>(dims.size())))
    return ctx.fail("axis " + std::to_string(axisAttr) + " is out of range");
  if (dims[static_cast<size_t>(axis)] != scaleElements)
    return ctx.fail("scale has " + std::to_string(scaleElements) +
                    " elements for an axis of size " +
                    std::to_string(dims[static_cast<size_t>(axis)]));
  if (p) {
    p->axisSize = scaleElements;
    for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) p->inner *= dims[d];
  }
  return Status::ok();
}

class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(const Node& node, bool quantize)
      : quantize_(quantize), axis_(node.getInt("axis", 1)) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& scale = ctx.inputDesc(1);
    if (ctx.hasInput(2) && ctx.inputDesc(2).numElements() != scale.numElements())
      return ctx.fail("zero point and scale differ in size");
    SUBGRAPH_RETURN_IF_ERROR(quantParams(ctx, x.dims, axis_, scale.numElements(), nullptr));
    if (quantize_) {
      if (!typeInSet(x.dtype, kFloatTypes | kIndexTypes))
        return unsupportedType(ctx.node(), x.dtype);
      DataType out = ctx.hasInput(2) ? ctx.inputDesc(2).dtype : DataType::kUInt8;
      if (out != DataType::kUInt8 && out != DataType::kInt8)
        return unsupportedType(ctx.node(), out);
      ctx.setOutput(0, TensorDesc{out, x.dims, nullptr});
    } else {
      if (x.dtype != DataType::kUInt8 && x.dtype != DataType::kInt8 && x.dtype != DataType::kInt32)
        return unsupportedType(ctx.node(), x.dtype);
      if (!typeInSet(scale.dtype, kFloatTypes)) return unsupportedType(ctx.node(), scale.dtype);
      ctx.setOutput(0, TensorDesc{scale.dtype, x.dims, nullptr});
    }
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    QuantParams p;
    p.scale = readDoubles(ctx.input(1));
    if (ctx.hasInput(2)) p.zero = readDoubles(ctx.input(2));
    SUBGRAPH_RETURN_IF_ERROR(quantParams(ctx, x.dims(), axis_, ctx.input(1).numElements(), &p));
    std::vector<double> in = readDoubles(x);
    const bool scaleIsF32 = ctx.input(1).dtype() == DataType::kFloat32;
    const TensorView& y = ctx.output(0);
    visitType<kAllTypes>(y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.mutableData<T>();
      // The output type decides the direction: integers are quantized
      // values, floats dequantized ones.
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
          // Divide in the scale's precision: rounding x / scale at a .5
          // boundary differs between float and double.
          double ratio = scaleIsF32
                             ? static_cast<double>(static_cast<float>(in[static_cast<size_t>(i)]) /
                                                   static_cast<float>(p.scaleAt(i)))
                             : in[static_cast<size_t>(i)] / p.scaleAt(i);
          double q = std::nearbyint(ratio) + p.zeroAt(i);
          if (std::isnan(q)) q = 0;
          q = std::clamp(q, static_cast<double>(std::numeric_limits<T>::lowest()),
                         static_cast<double>(std::numeric_limits<T>::max()));
          py[i] = static_cast<T>(q);
        }
      } else if constexpr (!std::is_same_v<T, bool>) {
        for (int64_t i = 0, n = x.numElements(); i < n; ++i)
          py[i] = store<T>(
              static_cast<Compute<T>>((in[static_cast<size_t>(i)] - p.zeroAt(i)) * p.scaleAt(i)));
      }
    });
    return Status::ok();
  }

 private:
  bool quantize_;
  int64_t axis_;
};

// std::nearbyint for |v| <= 2^22 in the default rounding mode, without a
// libm call per element: adding 1.5 * 2^23 leaves no fraction bits, so the
// addition itself rounds half to even.
inline float roundHalfEven(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}

// DynamicQuantizeLinear's quantization of px[0, n) into py: a loop the
// clones vectorize (a division per element is most of its cost).
SUBGRAPH_ISA_CLONES
void quantizeU8(const float* px, uint8_t* py, int64_t n, float scale, float zero) {
  for (int64_t i = 0; i < n; ++i) {
    // |x / scale| <= 255 (plus rounding) for every finite x in range, so
    // the clamp changes nothing there and keeps the magic-number rounding
    // exact; NaN passes both clamps and becomes 0 below.
    float q = roundHalfEven(std::clamp(px[i] / scale, -512.0f, 512.0f)) + zero;
    if (!(q == q)) q = 0;
    py[i] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
  }
}

// The smallest and largest of px[0, n) and 0. NaN compares false both ways
// and so leaves them alone. (Clones made this loop slower, and the LSTM's
// dot product too: only the quantization loop, with its division, gains.)
std::pair<float, float> rangeWithZero(const float* px, int64_t n) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = px[i] < lo ? px[i] : lo;
    hi = px[i] > hi ? px[i] : hi;
  }
  return {lo, hi};
}

class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(const Node&) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (x.dtype != DataType::kFloat32) return unsupportedType(ctx.node(), x.dtype);
    ctx.setOutput(0, TensorDesc{DataType::kUInt8, x.dims, nullptr});
    if (ctx.numOutputs() > 1) ctx.setOutput(1, TensorDesc{DataType::kFloat32, {}, nullptr});
    if (ctx.numOutputs() > 2) ctx.setOutput(2, TensorDesc{DataType::kUInt8, {}, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const float* px = x.data<float>();
    const int64_t n = x.numElements();
    const auto [lo, hi] = range(px, n);
    const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    float zero = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
    if (std::isnan(zero)) zero = 0;  // An infinite range.
    uint8_t* py = ctx.output(0).mutableData<uint8_t>();
    parallelFor(n, 4, [&](int64_t begin, int64_t end) {
      quantizeU8(px + begin, py + begin, end - begin, scale, zero);
    });
    if (ctx.numOutputs() > 1) *ctx.output(1).mutableData<float>() = scale;
    if (ctx.numOutputs() > 2) *ctx.output(2).mutableData<uint8_t>() = static_cast<uint8_t>(zero);
    return Status::ok();
  }

 private:
  // x's range widened to include 0, over chunks in parallel. min and max
  // do not depend on the order, and NaN compares false both ways and so
  // leaves the range alone, so the result is the serial loop's.
  static std::pair<float, float> range(const float* px, int64_t n) {
    constexpr int64_t kChunk = 1 << 16;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<std::pair<float, float>> partial(static_cast<size_t>(chunks), {0.0f, 0.0f});
    parallelFor(chunks, kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        partial[static_cast<size_t>(c)] =
            rangeWithZero(px + c * kChunk, std::min(n, (c + 1) * kChunk) - c * kChunk);
    });
    float lo = 0, hi = 0;
    for (const auto& [l, h] : partial) {
      lo = std::min(lo, l);
      hi = std::max(hi, h);
    }
    return {lo, hi};
  }
};

KernelCreator quantize(bool q) {
  return [q](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<QuantizeKernel>(node, q));
  };
}

}  // namespace

void registerQuantizeKernels(Provider& p) {
  p.add("QuantizeLinear", quantize(true));
  p.add("DequantizeLinear", quantize(false));
  p.add("DynamicQuantizeLinear", creatorFor<DynamicQuantizeKernel>());
}

}  // namespace subgraph::runtime::reference
