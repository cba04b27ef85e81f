//===- runtime/reference/resize.cpp - Resize ------------------------------===//
//
// ONNX Resize (opsets 10-18): nearest (four rounding modes), linear (n-d
// multilinear) and cubic interpolation, under every coordinate
// transformation mode exporters use (half_pixel, pytorch_half_pixel,
// align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize), with
// exclude_outside and extrapolation_value. Sizes come from `sizes`, or from
// floor(in * scale).
//
// Interpolation is separable: for each resized axis and output coordinate a
// table of (input index, weight) taps is built once, following the ONNX
// reference implementation (neighbours clamped as if edge-padded, weights
// from the fractional position, in double); each output element is the sum
// over the product of its axes' taps. Zero-weight taps are dropped, so
// un-resized axes cost one tap.
//
// Bilinear resizing of f32 over the last two axes (the common case: NCHW
// images and feature maps) is computed as ONNX Runtime's CPU kernel does
// it, in float: source coordinates, neighbour distances and the four
// weights per output in float, the four products summed left to right. The
// double-precision taps are more accurate, but they round differently in
// the last bit, and a quantized model re-quantizes (DynamicQuantizeLinear)
// after each upsample: a one-ulp difference moves a value across a
// quantization step, and the moves compound layer by layer (a 1024x1024
// segmentation network ended 12% of its output's scale away from ONNX
// Runtime on that alone; docs/runtime.md).
//
// Upsample (opset 9, deprecated) is Resize-10 with input 1 as the scales
// and nearest rounding down (output i reads input floor(i / scale), as
// numpy.repeat does for the integer scales it was made for).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

struct Tap {
  int64_t index;
  double weight;
};

// Taps of every output coordinate along one axis; `outside` marks
// coordinates that map outside the input under tf_crop_and_resize.
struct AxisTaps {
  std::vector<std::vector<Tap>> taps;
  std::vector<bool> outside;
};

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(const Node& node, bool upsample = false)
      : mode_(node.getString("mode", "nearest")),
        coordMode_(node.getString("coordinate_transformation_mode", "half_pixel")),
        nearestMode_(node.getString("nearest_mode", "round_prefer_floor")),
        cubicA_(node.getFloat("cubic_coeff_a", -0.75f)),
        excludeOutside_(node.getInt("exclude_outside", 0) != 0),
        extrapolation_(node.getFloat("extrapolation_value", 0.0f)),
        axes_(node.getInts("axes")),
        opset10_(opsetOf(node) < 11) {
    if (upsample) {
      opset10_ = true;  // Inputs (X, scales), as Resize-10.
      nearestMode_ = "floor";
    }
    if (opset10_) coordMode_ = "asymmetric";  // Resize-10 had no attribute for it.
    if (mode_ != "nearest" && mode_ != "linear" && mode_ != "cubic")
      throwNodeError(node, "unknown mode '" + mode_ + "'");
    static const char* const kCoordModes[] = {
        "half_pixel",           "pytorch_half_pixel", "align_corners",       "asymmetric",
        "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
    if (std::find(std::begin(kCoordModes), std::end(kCoordModes), coordMode_) ==
        std::end(kCoordModes))
      throwNodeError(node, "unknown coordinate_transformation_mode '" + coordMode_ + "'");
    if (nearestMode_ != "round_prefer_floor" && nearestMode_ != "round_prefer_ceil" &&
        nearestMode_ != "floor" && nearestMode_ != "ceil")
      throwNodeError(node, "unknown nearest_mode '" + nearestMode_ + "'");
    if (node.getInt("antialias", 0) != 0)
      throw Error(StatusCode::kUnsupported, nodeErrorPrefix(&node) + "antialias is not supported");
    std::string policy = node.getString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch")
      throw Error(StatusCode::kUnsupported, nodeErrorPrefix(&node) + "keep_aspect_ratio_policy '" +
                                                policy + "' is not supported");
  }

  std::vector<size_t> shapeInputs() const override {
    return opset10_ ? std::vector<size_t>{1} : std::vector<size_t>{1, 2, 3};
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kNumeric)) return unsupportedType(ctx.node(), x.dtype);
    std::vector<double> scales, roi;
    std::vector<int64_t> out;
    SUBGRAPH_RETURN_IF_ERROR(params(
        ctx, x.dims, [&](size_t i) { return ctx.hasInput(i) ? ctx.inputContent(i) : nullptr; },
        scales, roi, out));
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<double> scales, roi;
    std::vector<int64_t> out;
    SUBGRAPH_RETURN_IF_ERROR(params(
        ctx, x.dims(), [&](size_t i) { return ctx.hasInput(i) ? &ctx.input(i) : nullptr; }, scales,
        roi, out));
    if (isPlanarBilinear(x, scales, out)) {
      runPlanarBilinear(ctx, x, scales, out);
      return Status::ok();
    }
    const size_t rank = x.rank();
    std::vector<AxisTaps> axes(rank);
    for (size_t d = 0; d < rank; ++d)
      axes[d] = axisTaps(x.dims()[d], out[d], scales[d], roi[d], roi[d + rank]);
    std::vector<int64_t> strides = contiguousStrides(x.dims());
    bool ok = visitType<kNumeric>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      const int64_t total = ctx.output(0).numElements();
      parallelFor(total, 16, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> coord(rank), t(rank);
        for (int64_t i = begin; i < end; ++i) {
          int64_t rest = i;
          bool outside = false;
          for (size_t d = rank; d-- > 0;) {
            coord[d] = rest % out[d];
            rest /= out[d];
            outside = outside || axes[d].outside[static_cast<size_t>(coord[d])];
          }
          if (outside) {
            py[i] = store<T>(static_cast<Compute<T>>(extrapolation_));
            continue;
          }
          // Sum over the product of per-axis taps (an odometer over t).
          std::fill(t.begin(), t.end(), 0);
          double sum = 0;
          for (;;) {
            double w = 1;
            int64_t off = 0;
            for (size_t d = 0; d < rank; ++d) {
              const Tap& tap =
                  axes[d].taps[static_cast<size_t>(coord[d])][static_cast<size_t>(t[d])];
              w *= tap.weight;
              off += tap.index * strides[d];
            }
            sum += w * static_cast<double>(load(px[off]));
            size_t d = rank;
            while (d-- > 0) {
              if (++t[d] < static_cast<int64_t>(axes[d].taps[static_cast<size_t>(coord[d])].size()))
                break;
              t[d] = 0;
            }
            if (d == static_cast<size_t>(-1)) break;
          }
          if constexpr (std::is_integral_v<Compute<T>>)
            py[i] = store<T>(static_cast<Compute<T>>(std::nearbyint(sum)));
          else
            py[i] = store<T>(static_cast<Compute<T>>(sum));
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  // Reads roi, scales and sizes (through `input(i)`) and derives the output
  // dims; scales and roi come back per input axis.
  template <typename Ctx, typename Input>
  Status params(const Ctx& ctx, const std::vector<int64_t>& dims, Input input,
                std::vector<double>& scales, std::vector<double>& roi,
                std::vector<int64_t>& out) const {
    const size_t rank = dims.size();
    const TensorView* roiIn = opset10_ ? nullptr : input(1);
    const TensorView* scalesIn = input(opset10_ ? 1 : 2);
    const TensorView* sizesIn = opset10_ ? nullptr : input(3);
    if (scalesIn && scalesIn->numElements() == 0) scalesIn = nullptr;
    if (sizesIn && sizesIn->numElements() == 0) sizesIn = nullptr;
    if (!scalesIn == !sizesIn) return ctx.fail("exactly one of scales and sizes must be given");
    // Axes the scales/sizes/roi entries refer to (opset 18), else all.
    std::vector<int64_t> axes;
    for (int64_t a : axes_) {
      int64_t axis = a;
      if (!normalizeAxis(axis, static_cast<int64_t>(rank)))
        return ctx.fail("axis " + std::to_string(a) + " is out of range");
      axes.push_back(axis);
    }
    if (axes.empty())
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    roi.assign(2 * rank, 0.0);
    for (size_t d = 0; d < rank; ++d) roi[d + rank] = 1.0;
    if (roiIn && roiIn->numElements() > 0) {
      std::vector<double> r = readDoubles(*roiIn);
      if (r.size() != 2 * axes.size())
        return ctx.fail("roi needs " + std::to_string(2 * axes.size()) + " values");
      for (size_t i = 0; i < axes.size(); ++i) {
        roi[static_cast<size_t>(axes[i])] = r[i];
        roi[static_cast<size_t>(axes[i]) + rank] = r[i + axes.size()];
      }
    }
    scales.assign(rank, 1.0);
    out = dims;
    if (sizesIn) {
      std::vector<int64_t> sizes = readInts(*sizesIn);
      if (sizes.size() != axes.size())
        return ctx.fail("sizes " + dimsToString(sizes) + " need " + std::to_string(axes.size()) +
                        " entries");
      for (size_t i = 0; i < axes.size(); ++i) {
        size_t d = static_cast<size_t>(axes[i]);
        if (sizes[i] < 0) return ctx.fail("sizes " + dimsToString(sizes) + " has a negative entry");
        out[d] = sizes[i];
        scales[d] =
            dims[d] > 0 ? static_cast<double>(sizes[i]) / static_cast<double>(dims[d]) : 1.0;
      }
    } else {
      std::vector<double> s = readDoubles(*scalesIn);
      if (s.size() != axes.size())
        return ctx.fail("scales need " + std::to_string(axes.size()) + " entries");
      for (size_t i = 0; i < axes.size(); ++i) {
        size_t d = static_cast<size_t>(axes[i]);
        if (!(s[i] > 0)) return ctx.fail("scales must be positive, got " + std::to_string(s[i]));
        scales[d] = s[i];
        double extent = coordMode_ == "tf_crop_and_resize" ? roi[d + rank] - roi[d] : 1.0;
        const double size = std::floor(static_cast<double>(dims[d]) * extent * s[i]);
        // A scale or roi from the model can ask for any size; the cast below
        // is defined only for sizes int64 holds (NaN and infinity fail too).
        if (!(size >= 0 && size <= 1e15))
          return ctx.fail("scales make axis " + std::to_string(d) + " " + std::to_string(size) +
                          " long, past what a tensor can hold");
        out[d] = static_cast<int64_t>(size);
      }
    }
    for (size_t d = 0; d < rank; ++d)
      if (out[d] > 0 && dims[d] == 0)
        return ctx.fail("cannot resize an empty axis " + std::to_string(d));
    return Status::ok();
  }

  // One axis of a planar bilinear resize, as ONNX Runtime computes it: the
  // two neighbours of each output coordinate and their distances, in float.
  struct LinearAxis {
    std::vector<int64_t> lo, hi;
    std::vector<float> toLo, toHi;
  };

  // True for linear f32 resizing of the last two axes alone, with the
  // coordinate modes ONNX Runtime's bilinear kernel computes in float.
  bool isPlanarBilinear(const TensorView& x, const std::vector<double>& scales,
                        const std::vector<int64_t>& out) const {
    const size_t rank = x.rank();
    if (mode_ != "linear" || x.dtype() != DataType::kFloat32 || rank < 2) return false;
    if (coordMode_ == "tf_crop_and_resize" || coordMode_ == "half_pixel_symmetric") return false;
    for (size_t d = 0; d + 2 < rank; ++d)
      if (scales[d] != 1.0 || out[d] != x.dims()[d]) return false;
    return true;
  }

  // The source coordinate of output coordinate `x`, in float.
  float originalF(float x, float scale, float outLen, float inLen) const {
    if (coordMode_ == "align_corners") return outLen == 1 ? 0 : x * (inLen - 1) / (outLen - 1);
    if (coordMode_ == "asymmetric") return x / scale;
    if (coordMode_ == "tf_half_pixel_for_nn") return (x + 0.5f) / scale;
    if (coordMode_ == "pytorch_half_pixel") return outLen > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    return ((x + 0.5f) / scale) - 0.5f;  // half_pixel
  }

  // `resizedLength` is the output length the coordinate formulas divide by:
  // the output size for `sizes`, and for `scales` in * scale unrounded, as
  // the ONNX reference has it (align_corners downsampling by 0.6 differs).
  LinearAxis linearAxis(int64_t in, int64_t outLen, float scale, float resizedLength) const {
    LinearAxis a;
    const auto n = static_cast<size_t>(outLen);
    a.lo.resize(n), a.hi.resize(n), a.toLo.resize(n), a.toHi.resize(n);
    const float inF = static_cast<float>(in), outF = resizedLength;
    for (size_t o = 0; o < n; ++o) {
      float xo = static_cast<float>(o);
      if (scale != 1) xo = originalF(xo, scale, outF, inF);
      xo = std::max(0.0f, std::min(xo, inF - 1));
      a.lo[o] = std::min(static_cast<int64_t>(xo), in - 1);
      a.hi[o] = std::min(a.lo[o] + 1, in - 1);
      a.toLo[o] = std::fabs(xo - static_cast<float>(a.lo[o]));
      a.toHi[o] = std::fabs(xo - static_cast<float>(a.hi[o]));
      if (a.lo[o] == a.hi[o]) a.toLo[o] = a.toHi[o] = 0.5f;
    }
    return a;
  }

  void runPlanarBilinear(RunContext& ctx, const TensorView& x, const std::vector<double>& scales,
                         const std::vector<int64_t>& out) const {
    const bool bySizes = !opset10_ && ctx.hasInput(3) && ctx.input(3).numElements() > 0;
    const size_t rank = x.rank();
    const int64_t inH = x.dims()[rank - 2], inW = x.dims()[rank - 1];
    const int64_t outH = out[rank - 2], outW = out[rank - 1];
    auto axis = [&](int64_t in, int64_t outLen, double scale) {
      const float resized = bySizes ? static_cast<float>(outLen)
                                    : static_cast<float>(scale * static_cast<double>(in));
      // The scale as ONNX Runtime holds it: the f32 given, or out / in.
      const float f =
          bySizes ? static_cast<float>(outLen) / static_cast<float>(in) : static_cast<float>(scale);
      return linearAxis(in, outLen, f, resized);
    };
    const LinearAxis ys = axis(inH, outH, scales[rank - 2]);
    const LinearAxis xs = axis(inW, outW, scales[rank - 1]);
    const float* px = x.data<float>();
    float* py = ctx.output(0).mutableData<float>();
    const int64_t rows = ctx.output(0).numElements() / std::max<int64_t>(outW, 1);
    parallelFor(rows, 4, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t plane = r / outH;
        const auto y = static_cast<size_t>(r % outH);
        const float* top = px + (plane * inH + ys.lo[y]) * inW;
        const float* bottom = px + (plane * inH + ys.hi[y]) * inW;
        float* row = py + r * outW;
        for (size_t c = 0; c < static_cast<size_t>(outW); ++c) {
          // The weight of a neighbour is the distance to the other one.
          const float w11 = xs.toHi[c] * ys.toHi[y], w21 = xs.toLo[c] * ys.toHi[y];
          const float w12 = xs.toHi[c] * ys.toLo[y], w22 = xs.toLo[c] * ys.toLo[y];
          row[c] = w11 * top[xs.lo[c]] + w21 * top[xs.hi[c]] + w12 * bottom[xs.lo[c]] +
                   w22 * bottom[xs.hi[c]];
        }
      }
    });
  }

  // The input coordinate of output coordinate `x`; sets `outside` for
  // tf_crop_and_resize points beyond the input.
  double original(double x, int64_t in, double scale, double roiStart, double roiEnd,
                  bool& outside) const {
    const double inLen = static_cast<double>(in);
    const double outLen = scale * inLen;  // As the ONNX reference: not rounded.
    outside = false;
    if (coordMode_ == "align_corners") return outLen == 1 ? 0 : x * (inLen - 1) / (outLen - 1);
    if (coordMode_ == "asymmetric") return x / scale;
    if (coordMode_ == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
    if (coordMode_ == "pytorch_half_pixel") return outLen == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    if (coordMode_ == "half_pixel_symmetric") {
      double adjustment = static_cast<double>(static_cast<int64_t>(outLen)) / outLen;
      double center = inLen / 2, offset = center * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    if (coordMode_ == "tf_crop_and_resize") {
      double v = outLen == 1 ? (roiEnd - roiStart) * (inLen - 1) / 2
                             : x * (roiEnd - roiStart) * (inLen - 1) / (outLen - 1);
      v += roiStart * (inLen - 1);
      outside = v < 0 || v > inLen - 1;
      return v;
    }
    return (x + 0.5) / scale - 0.5;  // half_pixel
  }

  AxisTaps axisTaps(int64_t in, int64_t outCount, double scale, double roiStart,
                    double roiEnd) const {
    AxisTaps a;
    a.taps.resize(static_cast<size_t>(outCount));
    a.outside.assign(static_cast<size_t>(outCount), false);
    auto clampIndex = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    for (int64_t o = 0; o < outCount; ++o) {
      bool outside = false;
      double xo = original(static_cast<double>(o), in, scale, roiStart, roiEnd, outside);
      a.outside[static_cast<size_t>(o)] = outside;
      std::vector<Tap>& taps = a.taps[static_cast<size_t>(o)];
      const double fl = std::floor(xo);
      const int64_t x0 = static_cast<int64_t>(fl);
      const double r = xo - fl;
      if (mode_ == "nearest") {
        bool up;
        if (r == 0)
          up = false;
        else if (nearestMode_ == "round_prefer_floor")
          up = r > 0.5;
        else if (nearestMode_ == "round_prefer_ceil")
          up = r >= 0.5;
        else
          up = nearestMode_ == "ceil";
        taps.push_back({clampIndex(up ? x0 + 1 : x0), 1.0});
        continue;
      }
      std::vector<int64_t> idx;
      std::vector<double> w;
      if (mode_ == "linear") {
        idx = {x0, x0 + 1};
        w = {1 - r, r};
      } else {
        const double A = cubicA_;
        auto c = [A](double s) {  // Keys' cubic convolution kernel at distance s
          s = std::fabs(s);
          if (s <= 1) return ((A + 2) * s - (A + 3)) * s * s + 1;
          if (s < 2) return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
          return 0.0;
        };
        idx = {x0 - 1, x0, x0 + 1, x0 + 2};
        w = {c(r + 1), c(r), c(1 - r), c(2 - r)};
      }
      if (excludeOutside_) {
        double sum = 0;
        for (size_t k = 0; k < idx.size(); ++k) {
          if (idx[k] < 0 || idx[k] >= in) w[k] = 0;
          sum += w[k];
        }
        if (sum != 0)
          for (double& v : w) v /= sum;
      }
      for (size_t k = 0; k < idx.size(); ++k)
        if (w[k] != 0) taps.push_back({clampIndex(idx[k]), w[k]});
      if (taps.empty()) taps.push_back({clampIndex(x0), 0.0});
    }
    return a;
  }

  std::string mode_, coordMode_, nearestMode_;
  float cubicA_;
  bool excludeOutside_;
  float extrapolation_;
  std::vector<int64_t> axes_;
  bool opset10_;
};

}  // namespace

void registerResizeKernels(Provider& p) {
  p.add("Resize", creatorFor<ResizeKernel>());
  p.add("Upsample", [](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(node, /*upsample=*/true));
  });
}

}  // namespace subgraph::runtime::reference
