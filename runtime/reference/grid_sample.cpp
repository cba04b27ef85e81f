//===- runtime/reference/grid_sample.cpp - GridSample ---------------------===//
//
// GridSample(X [N, C, H, W], grid [N, H_out, W_out, 2]) samples each image
// at the grid's normalized (x, y) in [-1, 1], following the ONNX reference
// implementation (which matches PyTorch's grid_sample):
//
//  * denormalize: align_corners maps -1 and 1 to the corner pixels' centres
//    ((v + 1) / 2 * (size - 1)), otherwise to the image's outer edges
//    (((v + 1) * size - 1) / 2);
//  * mode nearest (rounding half to even), bilinear (2x2 taps) or bicubic
//    (4x4 taps, Keys' kernel with a = -0.75); the opset-20 names linear and
//    cubic are accepted too;
//  * padding_mode for coordinates and taps outside the image: zeros, border
//    (clamp) or reflection (about the corner centres or the edges, as
//    align_corners says).
//
// Every tap index is clamped into the image after padding is applied, so no
// read leaves X whatever the grid holds (NaN included). Output pixels run
// in parallel.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Reflects `x` into [lo, hi] (repeatedly, like a mirror pair).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2) == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubicCoefficients(double t, double c[4]) {
  constexpr double A = -0.75;
  t = std::fabs(t);
  const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  c[0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * t2 - (A + 3)) * t2 * t2 + 1;
  c[3] = ((A * t3 - 5 * A) * t3 + 8 * A) * t3 - 4 * A;
}

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(const Node& node)
      : alignCorners_(node.getInt("align_corners", 0) != 0) {
    std::string mode = node.getString("mode", "bilinear");
    if (mode == "nearest")
      mode_ = Mode::kNearest;
    else if (mode == "bilinear" || mode == "linear")
      mode_ = Mode::kLinear;
    else if (mode == "bicubic" || mode == "cubic")
      mode_ = Mode::kCubic;
    else
      throwNodeError(node, "unknown mode '" + mode + "'");
    std::string padding = node.getString("padding_mode", "zeros");
    if (padding == "zeros")
      padding_ = Padding::kZeros;
    else if (padding == "border")
      padding_ = Padding::kBorder;
    else if (padding == "reflection")
      padding_ = Padding::kReflection;
    else
      throwNodeError(node, "unknown padding_mode '" + padding + "'");
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& grid = ctx.inputDesc(1);
    if (!typeInSet(x.dtype, kNumeric)) return unsupportedType(ctx.node(), x.dtype);
    if (!typeInSet(grid.dtype, kFloatTypes)) return unsupportedType(ctx.node(), grid.dtype);
    if (x.dims.size() != 4) return ctx.fail("X must be [N, C, H, W], got " + x.toString());
    if (grid.dims.size() != 4 || grid.dims[0] != x.dims[0] || grid.dims[3] != 2)
      return ctx.fail("grid must be [" + std::to_string(x.dims[0]) + ", H_out, W_out, 2], got " +
                      grid.toString());
    ctx.setOutput(0,
                  TensorDesc{x.dtype, {x.dims[0], x.dims[1], grid.dims[1], grid.dims[2]}, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const std::vector<double> grid = readDoubles(ctx.input(1));
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const int64_t HO = ctx.output(0).dim(2), WO = ctx.output(0).dim(3);
    bool ok = visitType<kNumeric>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(N * HO * WO, C * 16, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / (HO * WO), pix = p % (HO * WO);
          const double gx = grid[static_cast<size_t>(p * 2)];
          const double gy = grid[static_cast<size_t>(p * 2 + 1)];
          for (int64_t c = 0; c < C; ++c) {
            const T* image = px + (n * C + c) * H * W;
            const double v = sample(image, H, W, gx, gy);
            T* out = py + (n * C + c) * HO * WO + pix;
            if constexpr (std::is_integral_v<Compute<T>>)
              *out = store<T>(static_cast<Compute<T>>(std::nearbyint(v)));
            else
              *out = store<T>(static_cast<Compute<T>>(v));
          }
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  double denormalize(double v, int64_t size) const {
    const double s = static_cast<double>(size);
    return alignCorners_ ? (v + 1) / 2 * (s - 1) : ((v + 1) * s - 1) / 2;
  }

  // The pixel at integer (r, c) under the padding mode.
  template <typename T>
  double pixel(const T* image, int64_t H, int64_t W, double r, double c) const {
    const double lo = alignCorners_ ? 0 : -0.5;
    if (padding_ == Padding::kZeros) {
      if (!(r >= 0 && r < static_cast<double>(H) && c >= 0 && c < static_cast<double>(W))) return 0;
    } else if (padding_ == Padding::kReflection) {
      r = reflect(r, lo, alignCorners_ ? static_cast<double>(H - 1) : static_cast<double>(H) - 0.5);
      c = reflect(c, lo, alignCorners_ ? static_cast<double>(W - 1) : static_cast<double>(W) - 0.5);
    }
    // Border, and a guard for the other modes (NaN, rounding at an edge).
    const int64_t ri =
        std::isnan(r) ? 0 : static_cast<int64_t>(std::clamp(r, 0.0, static_cast<double>(H - 1)));
    const int64_t ci =
        std::isnan(c) ? 0 : static_cast<int64_t>(std::clamp(c, 0.0, static_cast<double>(W - 1)));
    return static_cast<double>(load(image[ri * W + ci]));
  }

  template <typename T>
  double sample(const T* image, int64_t H, int64_t W, double gx, double gy) const {
    if (H <= 0 || W <= 0) return 0;
    double x = denormalize(gx, W), y = denormalize(gy, H);
    if (mode_ == Mode::kNearest) {
      x = std::nearbyint(x);
      y = std::nearbyint(y);
    }
    // Whole-coordinate padding first, as the reference does.
    const double xMin = alignCorners_ ? 0 : -0.5, yMin = xMin;
    const double xMax = alignCorners_ ? static_cast<double>(W - 1) : static_cast<double>(W) - 0.5;
    const double yMax = alignCorners_ ? static_cast<double>(H - 1) : static_cast<double>(H) - 0.5;
    if (x < xMin || x > xMax || y < yMin || y > yMax) {
      if (padding_ == Padding::kBorder) {
        x = std::clamp(x, 0.0, static_cast<double>(W - 1));
        y = std::clamp(y, 0.0, static_cast<double>(H - 1));
      } else if (padding_ == Padding::kReflection) {
        x = reflect(x, xMin, xMax);
        y = reflect(y, yMin, yMax);
      }
    }
    if (std::isnan(x) || std::isnan(y))
      return padding_ == Padding::kZeros ? 0 : pixel(image, H, W, 0, 0);
    if (mode_ == Mode::kNearest) return pixel(image, H, W, std::nearbyint(y), std::nearbyint(x));
    const double x0 = std::floor(x), y0 = std::floor(y);
    if (mode_ == Mode::kLinear) {
      const double dx = x - x0, dy = y - y0;
      return (1 - dy) *
                 ((1 - dx) * pixel(image, H, W, y0, x0) + dx * pixel(image, H, W, y0, x0 + 1)) +
             dy * ((1 - dx) * pixel(image, H, W, y0 + 1, x0) +
                   dx * pixel(image, H, W, y0 + 1, x0 + 1));
    }
    double cx[4], cy[4];
    cubicCoefficients(x - x0, cx);
    cubicCoefficients(y - y0, cy);
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) row += cx[j] * pixel(image, H, W, y0 - 1 + i, x0 - 1 + j);
      sum += cy[i] * row;
    }
    return sum;
  }

  bool alignCorners_;
  Mode mode_ = Mode::kLinear;
  Padding padding_ = Padding::kZeros;
};

}  // namespace

void registerGridSampleKernels(Provider& p) { p.add("GridSample", creatorFor<GridSampleKernel>()); }

}  // namespace subgraph::runtime::reference
