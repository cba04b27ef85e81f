//===- examples/emulated_device/region_interpreter.cpp - Runs a region body -===//
//
// Each body node becomes one Step: its constructor checks the node against
// what the interpreter supports and prepares its constants, and run()
// computes it from the values of one run (a Frame). Convolutions, which are
// nearly all of a CNN's work, are lowered the classic way: im2col per image
// and group (skipped for 1x1 stride-1 kernels, whose input already is the
// column matrix), then a GEMM whose innermost loop runs over contiguous
// output positions, four filters at a time, so the compiler vectorizes it
// and each loaded column element feeds four multiply-adds. Columns are
// processed in tiles sized so a tile of the column matrix stays in L2
// while every filter passes over it.
//
//===----------------------------------------------------------------------===//
#include "region_interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

namespace subgraph::emudev {

int64_t numElements(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace detail {

/// Where the values of one run live: region inputs and outputs in the
/// caller's buffers, constants in the program, intermediates in buffers of
/// the frame's own.
class Frame {
 public:
  explicit Frame(const std::vector<BodyValue>& values)
      : values_(values), bound_(values.size()), target_(values.size()), owned_(values.size()) {
    for (size_t v = 0; v < values.size(); ++v)
      if (values[v].isConstant) bound_[v] = values[v].data.data();
  }
  /// Value `v` is read from `data`.
  void bindInput(int v, const float* data) { bound_[v] = data; }
  /// Value `v` is written to `data` (a region output).
  void bindOutput(int v, float* data) { target_[v] = data; }
  /// The elements of value `v`, which a step or the caller has provided.
  const float* read(int v) const { return bound_[v]; }
  /// Room for the elements of value `v`, from now on also what read(v) gives.
  float* write(int v) {
    if (!target_[v]) {
      owned_[v].resize(static_cast<size_t>(numElements(values_[v].dims)));
      target_[v] = owned_[v].data();
    }
    bound_[v] = target_[v];
    return target_[v];
  }

 private:
  const std::vector<BodyValue>& values_;
  std::vector<const float*> bound_;
  std::vector<float*> target_;
  std::vector<std::vector<float>> owned_;
};

/// One compiled body node.
class Step {
 public:
  virtual ~Step() = default;
  /// Computes the node's outputs in `frame` from its inputs there.
  virtual void run(Frame& frame) const = 0;
};

}  // namespace detail

namespace {

using detail::Frame;
using detail::Step;

/// A body node being compiled: its operands, its attributes with ONNX's
/// defaults, and refusals that name it.
class NodeReader {
 public:
  NodeReader(const BodyNode& node, const std::vector<BodyValue>& values)
      : node_(node), values_(values) {}

  /// Declines the node with `why`.
  [[noreturn]] void decline(const std::string& why) const {
    throw sdk::Unsupported("emudev: " + node_.opType + " '" + node_.name + "': " + why);
  }
  /// The value of input `i`, or -1 when it is omitted.
  int optionalInput(size_t i) const {
    int v = i < node_.inputs.size() ? node_.inputs[i] : -1;
    if (v >= static_cast<int>(values_.size()))
      decline("input " + std::to_string(i) + " is unknown");
    return v;
  }
  /// The value of input `i`, which must be present.
  int input(size_t i) const {
    int v = optionalInput(i);
    if (v < 0) decline("input " + std::to_string(i) + " is missing");
    return v;
  }
  /// The value of output 0; the node must have no other output.
  int onlyOutput() const {
    for (size_t o = 1; o < node_.outputs.size(); ++o)
      if (node_.outputs[o] >= 0) decline("output " + std::to_string(o) + " is not supported");
    int v = node_.outputs.empty() ? -1 : node_.outputs[0];
    if (v < 0 || v >= static_cast<int>(values_.size())) decline("output 0 is missing");
    return v;
  }
  /// The static dims of value `v`.
  const std::vector<int64_t>& dims(int v) const { return values_[v].dims; }
  /// The elements of constant `v`; declines if `v` is not a constant.
  const std::vector<float>& constant(int v, const char* what) const {
    if (!values_[v].isConstant) decline(std::string(what) + " is not a constant");
    return values_[v].data;
  }
  /// True if `v` is a constant.
  bool isConstant(int v) const { return values_[v].isConstant; }

  /// Attribute `name` as `T`, or `fallback` when it is not set.
  template <typename T>
  T attr(const std::string& name, T fallback) const {
    auto it = node_.attrs.find(name);
    if (it == node_.attrs.end()) return fallback;
    if (const T* v = std::get_if<T>(&it->second)) return *v;
    if constexpr (std::is_same_v<T, float>)  // an integer written for a float
      if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
    decline("attribute '" + name + "' has an unexpected kind");
  }

 private:
  const BodyNode& node_;
  const std::vector<BodyValue>& values_;
};

//===--- Convolution and pooling windows ----------------------------------===//

/// A 2-D sliding window: kernel, strides, dilations and pads.
struct Window {
  int64_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;

  /// Output rows for `height` input rows (ceil_mode 0).
  int64_t outHeight(int64_t height) const {
    return (height + padTop + padBottom - dilationH * (kernelH - 1) - 1) / strideH + 1;
  }
  /// Output columns for `width` input columns (ceil_mode 0).
  int64_t outWidth(int64_t width) const {
    return (width + padLeft + padRight - dilationW * (kernelW - 1) - 1) / strideW + 1;
  }
};

/// The window of a 2-D Conv or pool over a kernel of `kernelH` x `kernelW`.
Window readWindow(const NodeReader& r, int64_t kernelH, int64_t kernelW) {
  std::string autoPad = r.attr<std::string>("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    r.decline("auto_pad " + autoPad + " is not supported (only NOTSET and VALID)");
  std::vector<int64_t> kernel = r.attr<std::vector<int64_t>>("kernel_shape", {kernelH, kernelW});
  std::vector<int64_t> strides = r.attr<std::vector<int64_t>>("strides", {1, 1});
  std::vector<int64_t> dilations = r.attr<std::vector<int64_t>>("dilations", {1, 1});
  std::vector<int64_t> pads = r.attr<std::vector<int64_t>>("pads", {0, 0, 0, 0});
  if (autoPad == "VALID") pads = {0, 0, 0, 0};
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    r.decline("only 2-D windows are supported");
  if (kernel[0] != kernelH || kernel[1] != kernelW)
    r.decline("kernel_shape does not match the weights");
  Window w{kernel[0],    kernel[1], strides[0], strides[1], dilations[0],
           dilations[1], pads[0],   pads[1],    pads[2],    pads[3]};
  if (std::min({w.kernelH, w.kernelW, w.strideH, w.strideW, w.dilationH, w.dilationW}) < 1 ||
      std::min({w.padTop, w.padLeft, w.padBottom, w.padRight}) < 0)
    r.decline("a kernel, stride, dilation or pad is out of range");
  return w;
}

/// Checks that `y` has dims [n, c, outHeight, outWidth] of the window.
void checkWindowOutput(const NodeReader& r, const Window& w, int y, int64_t n, int64_t c,
                       int64_t height, int64_t width) {
  std::vector<int64_t> expected{n, c, w.outHeight(height), w.outWidth(width)};
  if (expected[2] < 1 || expected[3] < 1) r.decline("the window is larger than the input");
  if (r.dims(y) != expected) r.decline("the output's dims do not follow from the window");
}

/// The rank-4 dims of value `v`, or a refusal.
const std::vector<int64_t>& rank4(const NodeReader& r, int v, const char* what) {
  if (r.dims(v).size() != 4)
    r.decline(std::string(what) + " is not rank 4 (only 2-D is supported)");
  return r.dims(v);
}

//===--- GEMM -------------------------------------------------------------===//

/// y[0..4)[p] += sum over k of a[0..4)[k] * b[k][p], for p < cols: four
/// rows of y at a time, so each element of b is loaded once for four
/// multiply-adds; the p loop is contiguous and vectorizes.
void gemmFourRows(const float* a, int64_t depth, const float* b, int64_t ldb, float* y, int64_t ldy,
                  int64_t cols) {
  float* __restrict y0 = y;
  float* __restrict y1 = y + ldy;
  float* __restrict y2 = y + 2 * ldy;
  float* __restrict y3 = y + 3 * ldy;
  for (int64_t k = 0; k < depth; ++k) {
    const float w0 = a[k], w1 = a[depth + k], w2 = a[2 * depth + k], w3 = a[3 * depth + k];
    const float* __restrict bk = b + k * ldb;
    for (int64_t p = 0; p < cols; ++p) {
      const float v = bk[p];
      y0[p] += w0 * v;
      y1[p] += w1 * v;
      y2[p] += w2 * v;
      y3[p] += w3 * v;
    }
  }
}

/// One row of y: the remainder of gemmFourRows.
void gemmOneRow(const float* a, int64_t depth, const float* b, int64_t ldb, float* y,
                int64_t cols) {
  float* __restrict y0 = y;
  for (int64_t k = 0; k < depth; ++k) {
    const float w = a[k];
    const float* __restrict bk = b + k * ldb;
    for (int64_t p = 0; p < cols; ++p) y0[p] += w * bk[p];
  }
}

/// y += a * b for row-major a (rows x depth), b (depth x cols) and
/// y (rows x cols).
void gemmAccumulate(const float* a, const float* b, float* y, int64_t rows, int64_t depth,
                    int64_t cols) {
  // A tile of columns keeps depth x tile floats of b (about 256 KiB) in L2
  // while every row of a passes over it.
  const int64_t tile =
      std::clamp<int64_t>((int64_t{64} << 10) / std::max<int64_t>(depth, 1), 64, 4096);
  for (int64_t p0 = 0; p0 < cols; p0 += tile) {
    const int64_t n = std::min(tile, cols - p0);
    int64_t m = 0;
    for (; m + 4 <= rows; m += 4)
      gemmFourRows(a + m * depth, depth, b + p0, cols, y + m * cols + p0, cols, n);
    for (; m < rows; ++m) gemmOneRow(a + m * depth, depth, b + p0, cols, y + m * cols + p0, n);
  }
}

/// `src` (rows x cols, row-major) transposed, each element times `scale`.
std::vector<float> transposed(const float* src, int64_t rows, int64_t cols, float scale = 1.0f) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = src[r * cols + c] * scale;
  return out;
}

//===--- Conv -------------------------------------------------------------===//

/// Conv, 2-D, with group, strides, pads, dilations and bias; the weights
/// (and bias) are constants, copied at creation.
class ConvStep final : public Step {
 public:
  explicit ConvStep(const NodeReader& r)
      : x_(r.input(0)), y_(r.onlyOutput()), weights_(r.constant(r.input(1), "the weight")) {
    const std::vector<int64_t>& xd = rank4(r, x_, "the input");
    const std::vector<int64_t>& wd = rank4(r, r.input(1), "the weight");
    batch_ = xd[0], channels_ = xd[1], height_ = xd[2], width_ = xd[3];
    filters_ = wd[0];
    group_ = r.attr<int64_t>("group", 1);
    if (group_ < 1 || channels_ % group_ != 0 || filters_ % group_ != 0 ||
        wd[1] != channels_ / group_)
      r.decline("the weight's dims do not fit the input and group");
    window_ = readWindow(r, wd[2], wd[3]);
    checkWindowOutput(r, window_, y_, batch_, filters_, height_, width_);
    outH_ = window_.outHeight(height_);
    outW_ = window_.outWidth(width_);
    int b = r.optionalInput(2);
    bias_ = b < 0 ? std::vector<float>(filters_, 0.0f) : r.constant(b, "the bias");
    if (static_cast<int64_t>(bias_.size()) != filters_) r.decline("the bias has the wrong size");
  }

  void run(Frame& frame) const override {
    const float* x = frame.read(x_);
    float* y = frame.write(y_);
    const int64_t groupChannels = channels_ / group_, groupFilters = filters_ / group_;
    const int64_t depth = groupChannels * window_.kernelH * window_.kernelW;
    const int64_t positions = outH_ * outW_;
    std::vector<float> columns(direct() ? 0 : static_cast<size_t>(depth * positions));
    for (int64_t n = 0; n < batch_; ++n)
      for (int64_t g = 0; g < group_; ++g) {
        const float* xg = x + (n * channels_ + g * groupChannels) * height_ * width_;
        if (!direct()) im2col(xg, groupChannels, columns.data());
        float* yg = y + (n * filters_ + g * groupFilters) * positions;
        for (int64_t m = 0; m < groupFilters; ++m)
          std::fill(yg + m * positions, yg + (m + 1) * positions, bias_[g * groupFilters + m]);
        gemmAccumulate(weights_.data() + g * groupFilters * depth, direct() ? xg : columns.data(),
                       yg, groupFilters, depth, positions);
      }
  }

 private:
  /// A 1x1 kernel with stride 1 and no pads reads the input as it is.
  bool direct() const {
    const Window& w = window_;
    return w.kernelH == 1 && w.kernelW == 1 && w.strideH == 1 && w.strideW == 1 && w.padTop == 0 &&
           w.padLeft == 0 && w.padBottom == 0 && w.padRight == 0;
  }

  /// Column matrix [channels * kernelH * kernelW][outH * outW] of one
  /// image's group of `channels` channels at `x`; zeros where the window
  /// reads padding.
  void im2col(const float* x, int64_t channels, float* columns) const {
    const Window& w = window_;
    float* row = columns;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < w.kernelH; ++i)
        for (int64_t j = 0; j < w.kernelW; ++j, row += outH_ * outW_)
          for (int64_t oh = 0; oh < outH_; ++oh) {
            float* out = row + oh * outW_;
            const int64_t ih = oh * w.strideH - w.padTop + i * w.dilationH;
            if (ih < 0 || ih >= height_) {
              std::fill(out, out + outW_, 0.0f);
              continue;
            }
            const float* in = x + (c * height_ + ih) * width_;
            for (int64_t ow = 0; ow < outW_; ++ow) {
              const int64_t iw = ow * w.strideW - w.padLeft + j * w.dilationW;
              out[ow] = iw >= 0 && iw < width_ ? in[iw] : 0.0f;
            }
          }
  }

  int x_, y_;
  std::vector<float> weights_;  // [filters][channels / group * kernelH * kernelW]
  std::vector<float> bias_;
  int64_t batch_ = 0, channels_ = 0, height_ = 0, width_ = 0, filters_ = 0, group_ = 1;
  int64_t outH_ = 0, outW_ = 0;
  Window window_;
};

//===--- BatchNormalization -----------------------------------------------===//

/// BatchNormalization in inference form, as a per-channel scale and shift
/// computed once from its four constant inputs.
class BatchNormStep final : public Step {
 public:
  explicit BatchNormStep(const NodeReader& r) : x_(r.input(0)), y_(r.onlyOutput()) {
    if (r.attr<int64_t>("training_mode", 0) != 0 || r.attr<int64_t>("spatial", 1) != 1)
      r.decline("only the inference form is supported");
    const std::vector<int64_t>& xd = r.dims(x_);
    if (xd.size() < 2) r.decline("the input has rank below 2");
    const float epsilon = r.attr<float>("epsilon", 1e-5f);
    const std::vector<float>& s = r.constant(r.input(1), "the scale");
    const std::vector<float>& b = r.constant(r.input(2), "the bias");
    const std::vector<float>& mean = r.constant(r.input(3), "the mean");
    const std::vector<float>& var = r.constant(r.input(4), "the variance");
    const size_t channels = static_cast<size_t>(xd[1]);
    if (s.size() != channels || b.size() != channels || mean.size() != channels ||
        var.size() != channels)
      r.decline("a parameter's size is not the channel count");
    for (size_t c = 0; c < channels; ++c) {
      scale_.push_back(s[c] / std::sqrt(var[c] + epsilon));
      shift_.push_back(b[c] - mean[c] * scale_.back());
    }
    batch_ = xd[0];
    inner_ = numElements(xd) / std::max<int64_t>(batch_ * xd[1], 1);
  }

  void run(Frame& frame) const override {
    const float* x = frame.read(x_);
    float* y = frame.write(y_);
    const int64_t channels = static_cast<int64_t>(scale_.size());
    for (int64_t n = 0; n < batch_; ++n)
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (n * channels + c) * inner_;
        const float scale = scale_[c], shift = shift_[c];
        for (int64_t i = 0; i < inner_; ++i) y[base + i] = x[base + i] * scale + shift;
      }
  }

 private:
  int x_, y_;
  std::vector<float> scale_, shift_;
  int64_t batch_ = 0, inner_ = 0;
};

//===--- Elementwise ------------------------------------------------------===//

/// Relu or Sigmoid.
class UnaryStep final : public Step {
 public:
  UnaryStep(const NodeReader& r, bool sigmoid)
      : x_(r.input(0)), y_(r.onlyOutput()), sigmoid_(sigmoid), count_(numElements(r.dims(y_))) {
    if (r.dims(x_) != r.dims(y_)) r.decline("the output's dims differ from the input's");
  }

  void run(Frame& frame) const override {
    const float* x = frame.read(x_);
    float* y = frame.write(y_);
    if (sigmoid_) {
      for (int64_t i = 0; i < count_; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
    } else {
      for (int64_t i = 0; i < count_; ++i) y[i] = std::max(x[i], 0.0f);
    }
  }

 private:
  int x_, y_;
  bool sigmoid_;
  int64_t count_;
};

/// Row-major strides of `dims` aligned right to `rank` dims, 0 where a dim
/// is broadcast (size 1), or nullopt if `dims` does not broadcast to `out`.
std::optional<std::vector<int64_t>> broadcastStrides(const std::vector<int64_t>& dims,
                                                     const std::vector<int64_t>& out) {
  if (dims.size() > out.size()) return std::nullopt;
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t d = dims.size() - 1 - k, o = out.size() - 1 - k;
    if (dims[d] != out[o] && dims[d] != 1) return std::nullopt;
    strides[o] = dims[d] == 1 ? 0 : stride;
    stride *= dims[d];
  }
  return strides;
}

/// Add or Mul, with numpy broadcasting.
class BinaryStep final : public Step {
 public:
  BinaryStep(const NodeReader& r, bool multiply)
      : a_(r.input(0)), b_(r.input(1)), y_(r.onlyOutput()), multiply_(multiply) {
    dims_ = r.dims(y_);
    if (dims_.empty()) dims_ = {1};  // a scalar as one element
    std::optional<std::vector<int64_t>> sa = broadcastStrides(r.dims(a_), dims_);
    std::optional<std::vector<int64_t>> sb = broadcastStrides(r.dims(b_), dims_);
    if (!sa || !sb) r.decline("the operands do not broadcast to the output");
    aStrides_ = std::move(*sa);
    bStrides_ = std::move(*sb);
    const int64_t count = numElements(dims_);
    same_ = numElements(r.dims(a_)) == count && numElements(r.dims(b_)) == count;
  }

  void run(Frame& frame) const override {
    if (multiply_)
      apply(frame, [](float a, float b) { return a * b; });
    else
      apply(frame, [](float a, float b) { return a + b; });
  }

 private:
  template <typename Op>
  void apply(Frame& frame, Op op) const {
    const float* a = frame.read(a_);
    const float* b = frame.read(b_);
    float* y = frame.write(y_);
    const int64_t count = numElements(dims_);
    if (same_) {
      for (int64_t i = 0; i < count; ++i) y[i] = op(a[i], b[i]);
      return;
    }
    // The last dim runs contiguously (or broadcast); the others count like
    // an odometer.
    const size_t rank = dims_.size();
    const int64_t inner = dims_[rank - 1], sa = aStrides_[rank - 1], sb = bStrides_[rank - 1];
    std::vector<int64_t> index(rank, 0);
    for (int64_t base = 0; base < count; base += inner) {
      int64_t offA = 0, offB = 0;
      for (size_t d = 0; d + 1 < rank; ++d) {
        offA += index[d] * aStrides_[d];
        offB += index[d] * bStrides_[d];
      }
      for (int64_t i = 0; i < inner; ++i) y[base + i] = op(a[offA + i * sa], b[offB + i * sb]);
      for (size_t d = rank - 1; d-- > 0;) {
        if (++index[d] < dims_[d]) break;
        index[d] = 0;
      }
    }
  }

  int a_, b_, y_;
  bool multiply_;
  bool same_ = false;
  std::vector<int64_t> dims_, aStrides_, bStrides_;
};

//===--- Pooling ----------------------------------------------------------===//

/// MaxPool, AveragePool (2-D, ceil_mode 0) or GlobalAveragePool.
class PoolStep final : public Step {
 public:
  enum class Kind { kMax, kAverage, kGlobalAverage };

  PoolStep(const NodeReader& r, Kind kind) : x_(r.input(0)), y_(r.onlyOutput()), kind_(kind) {
    const std::vector<int64_t>& xd = rank4(r, x_, "the input");
    planes_ = xd[0] * xd[1], height_ = xd[2], width_ = xd[3];
    if (kind == Kind::kGlobalAverage) {
      if (r.dims(y_) != std::vector<int64_t>{xd[0], xd[1], 1, 1})
        r.decline("unexpected output dims");
      return;
    }
    if (r.attr<int64_t>("ceil_mode", 0) != 0) r.decline("ceil_mode 1 is not supported");
    if (r.attr<int64_t>("storage_order", 0) != 0) r.decline("storage_order 1 is not supported");
    std::vector<int64_t> kernel = r.attr<std::vector<int64_t>>("kernel_shape", {});
    if (kernel.size() != 2) r.decline("kernel_shape is missing or not 2-D");
    window_ = readWindow(r, kernel[0], kernel[1]);
    checkWindowOutput(r, window_, y_, xd[0], xd[1], height_, width_);
    countIncludePad_ = r.attr<int64_t>("count_include_pad", 0) != 0;
  }

  void run(Frame& frame) const override {
    const float* x = frame.read(x_);
    float* y = frame.write(y_);
    const int64_t plane = height_ * width_;
    if (kind_ == Kind::kGlobalAverage) {
      for (int64_t p = 0; p < planes_; ++p) {
        double sum = 0;
        for (int64_t i = 0; i < plane; ++i) sum += x[p * plane + i];
        y[p] = static_cast<float>(sum / static_cast<double>(plane));
      }
      return;
    }
    const int64_t outH = window_.outHeight(height_), outW = window_.outWidth(width_);
    for (int64_t p = 0; p < planes_; ++p)
      for (int64_t oh = 0; oh < outH; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow)
          y[(p * outH + oh) * outW + ow] = pool(x + p * plane, oh, ow);
  }

 private:
  /// The pooled value of output position (oh, ow) of one plane.
  float pool(const float* x, int64_t oh, int64_t ow) const {
    const Window& w = window_;
    float max = -std::numeric_limits<float>::infinity(), sum = 0;
    int64_t count = 0;
    for (int64_t i = 0; i < w.kernelH; ++i) {
      const int64_t ih = oh * w.strideH - w.padTop + i * w.dilationH;
      if (ih < 0 || ih >= height_) continue;
      for (int64_t j = 0; j < w.kernelW; ++j) {
        const int64_t iw = ow * w.strideW - w.padLeft + j * w.dilationW;
        if (iw < 0 || iw >= width_) continue;
        const float v = x[ih * width_ + iw];
        // A NaN makes the max NaN, as ONNX's and the reference's.
        if (v > max || (std::isnan(v) && !std::isnan(max))) max = v;
        sum += v;
        ++count;
      }
    }
    if (kind_ == Kind::kMax) return max;
    // With ceil_mode 0 every window lies inside the padded input, so
    // counting the pads means counting the whole window.
    const int64_t divisor = countIncludePad_ ? w.kernelH * w.kernelW : std::max<int64_t>(count, 1);
    return sum / static_cast<float>(divisor);
  }

  int x_, y_;
  Kind kind_;
  int64_t planes_ = 0, height_ = 0, width_ = 0;
  Window window_;
  bool countIncludePad_ = false;
};

//===--- Flatten and Gemm -------------------------------------------------===//

/// Flatten: the same elements under new dims.
class FlattenStep final : public Step {
 public:
  explicit FlattenStep(const NodeReader& r)
      : x_(r.input(0)), y_(r.onlyOutput()), count_(numElements(r.dims(x_))) {
    const std::vector<int64_t>& xd = r.dims(x_);
    int64_t axis = r.attr<int64_t>("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(xd.size());
    if (axis < 0 || axis > static_cast<int64_t>(xd.size())) r.decline("axis is out of range");
    const int64_t outer = numElements(std::span(xd).first(static_cast<size_t>(axis)));
    if (r.dims(y_) != std::vector<int64_t>{outer, count_ / std::max<int64_t>(outer, 1)})
      r.decline("unexpected output dims");
  }

  void run(Frame& frame) const override { std::copy_n(frame.read(x_), count_, frame.write(y_)); }

 private:
  int x_, y_;
  int64_t count_;
};

/// Gemm: Y = alpha * A' * B' + beta * C, with A' and B' optionally
/// transposed and C broadcast to [M, N]. A constant B is transposed (and
/// scaled by alpha) once, at creation.
class GemmStep final : public Step {
 public:
  explicit GemmStep(const NodeReader& r)
      : a_(r.input(0)), b_(r.input(1)), c_(r.optionalInput(2)), y_(r.onlyOutput()) {
    const std::vector<int64_t>& ad = r.dims(a_);
    const std::vector<int64_t>& bd = r.dims(b_);
    if (ad.size() != 2 || bd.size() != 2) r.decline("A and B must be matrices");
    transA_ = r.attr<int64_t>("transA", 0) != 0;
    transB_ = r.attr<int64_t>("transB", 0) != 0;
    alpha_ = r.attr<float>("alpha", 1.0f);
    beta_ = r.attr<float>("beta", 1.0f);
    m_ = transA_ ? ad[1] : ad[0];
    k_ = transA_ ? ad[0] : ad[1];
    n_ = transB_ ? bd[0] : bd[1];
    if ((transB_ ? bd[1] : bd[0]) != k_ || r.dims(y_) != std::vector<int64_t>{m_, n_})
      r.decline("the dims of A, B and Y do not agree");
    if (c_ >= 0) readC(r);
    if (r.isConstant(b_)) {
      const std::vector<float>& b = r.constant(b_, "B");
      if (transB_) {
        packedB_ = transposed(b.data(), n_, k_, alpha_);
      } else {
        packedB_.assign(b.begin(), b.end());
        for (float& v : packedB_) v *= alpha_;
      }
    }
  }

  void run(Frame& frame) const override {
    float* y = frame.write(y_);
    const float* c = c_ >= 0 ? frame.read(c_) : nullptr;
    for (int64_t i = 0; i < m_; ++i)
      for (int64_t j = 0; j < n_; ++j)
        y[i * n_ + j] = c ? beta_ * c[i * cRowStride_ + j * cColStride_] : 0.0f;
    const float* a = frame.read(a_);
    std::vector<float> aCopy;
    if (transA_) a = (aCopy = transposed(a, k_, m_)).data();
    std::vector<float> bCopy;
    const float* b = packedB_.data();
    if (packedB_.empty()) {
      const float* raw = frame.read(b_);
      bCopy = transB_ ? transposed(raw, n_, k_, alpha_) : std::vector<float>(raw, raw + k_ * n_);
      if (!transB_)
        for (float& v : bCopy) v *= alpha_;
      b = bCopy.data();
    }
    gemmAccumulate(a, b, y, m_, k_, n_);
  }

 private:
  /// C's strides into [M, N]: rank 0, 1 ([N] or [1]) or 2.
  void readC(const NodeReader& r) {
    std::vector<int64_t> cd = r.dims(c_);
    while (cd.size() < 2) cd.insert(cd.begin(), 1);
    if (cd.size() != 2 || (cd[0] != 1 && cd[0] != m_) || (cd[1] != 1 && cd[1] != n_))
      r.decline("C does not broadcast to [M, N]");
    cRowStride_ = cd[0] == 1 ? 0 : cd[1];
    cColStride_ = cd[1] == 1 ? 0 : 1;
  }

  int a_, b_, c_, y_;
  bool transA_ = false, transB_ = false;
  float alpha_ = 1, beta_ = 1;
  int64_t m_ = 0, k_ = 0, n_ = 0, cRowStride_ = 0, cColStride_ = 0;
  std::vector<float> packedB_;  // alpha * B', [K][N]; empty when B is computed
};

/// The step for `node`; declines an op the interpreter does not know.
std::unique_ptr<const Step> makeStep(const BodyNode& node, const std::vector<BodyValue>& values) {
  NodeReader r(node, values);
  const std::string& op = node.opType;
  if (op == "Conv") return std::make_unique<ConvStep>(r);
  if (op == "BatchNormalization") return std::make_unique<BatchNormStep>(r);
  if (op == "Relu" || op == "Sigmoid") return std::make_unique<UnaryStep>(r, op == "Sigmoid");
  if (op == "Add" || op == "Mul") return std::make_unique<BinaryStep>(r, op == "Mul");
  if (op == "MaxPool") return std::make_unique<PoolStep>(r, PoolStep::Kind::kMax);
  if (op == "AveragePool") return std::make_unique<PoolStep>(r, PoolStep::Kind::kAverage);
  if (op == "GlobalAveragePool")
    return std::make_unique<PoolStep>(r, PoolStep::Kind::kGlobalAverage);
  if (op == "Flatten") return std::make_unique<FlattenStep>(r);
  if (op == "Gemm") return std::make_unique<GemmStep>(r);
  r.decline("the interpreter has no " + op);
}

}  // namespace

//===--- RegionProgram ----------------------------------------------------===//

RegionProgram::RegionProgram(BodyGraph body)
    : values_(std::move(body.values)),
      inputs_(std::move(body.inputs)),
      outputs_(std::move(body.outputs)) {
  const int count = static_cast<int>(values_.size());
  auto known = [&](int v) { return v >= 0 && v < count; };
  std::vector<bool> ready(values_.size(), false);
  for (int v = 0; v < count; ++v) ready[v] = values_[v].isConstant;
  for (int v : inputs_) {
    if (!known(v)) throw sdk::Unsupported("emudev: a region input is an unknown value");
    ready[v] = true;
  }
  for (const BodyNode& node : body.nodes) {
    for (int v : node.inputs)
      if (v >= 0 && (!known(v) || !ready[v]))
        NodeReader(node, values_).decline("reads a value no earlier node computes");
    steps_.push_back(makeStep(node, values_));
    for (int v : node.outputs)
      if (known(v)) ready[v] = true;
  }
  for (int v : outputs_)
    if (!known(v) || !ready[v])
      throw sdk::Unsupported("emudev: a region output is computed by no node of the body");
}

RegionProgram::~RegionProgram() = default;

void RegionProgram::run(std::span<const float* const> inputs,
                        std::span<float* const> outputs) const {
  if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size())
    throw sdk::Error("emudev: the region has " + std::to_string(inputs_.size()) + " inputs and " +
                     std::to_string(outputs_.size()) + " outputs, the run passed " +
                     std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  Frame frame(values_);
  for (size_t i = 0; i < inputs.size(); ++i) frame.bindInput(inputs_[i], inputs[i]);
  for (size_t o = 0; o < outputs.size(); ++o) frame.bindOutput(outputs_[o], outputs[o]);
  for (const auto& step : steps_) step->run(frame);
  // An output that is also an input (or a constant) was never written.
  for (size_t o = 0; o < outputs.size(); ++o)
    if (frame.read(outputs_[o]) != outputs[o])
      std::copy_n(frame.read(outputs_[o]), numElements(values_[outputs_[o]].dims), outputs[o]);
}

//===--- Reading a body from the host -------------------------------------===//

namespace {

/// Assigns body values their indices as readBody meets them.
class BodyReader {
 public:
  /// The index of `v`, added on first sight; -1 for an omitted value.
  int valueOf(const sdk::ValueView& v) {
    if (!v) return -1;
    auto [it, added] = ids_.emplace(v.handle(), static_cast<int>(graph.values.size()));
    if (added) graph.values.push_back(describe(v));
    return it->second;
  }

  BodyGraph graph;

 private:
  static BodyValue describe(const sdk::ValueView& v) {
    BodyValue out;
    out.name = v.name();
    if (v.dtype() != sdk::DataType::kFloat32)
      throw sdk::Unsupported("emudev: value '" + out.name + "' is of ONNX type " +
                             std::to_string(static_cast<int>(v.dtype())) +
                             "; the device computes float32 only");
    if (!v.hasStaticShape())
      throw sdk::Unsupported("emudev: value '" + out.name + "' has no static shape");
    out.dims = v.dims();
    if (v.isConstant()) {
      std::span<const float> data = v.constantData<float>();
      if (static_cast<int64_t>(data.size()) != numElements(out.dims))
        throw sdk::Unsupported("emudev: constant '" + out.name + "' has the wrong size");
      out.isConstant = true;
      out.data.assign(data.begin(), data.end());
    }
    return out;
  }

  std::map<const SgValue*, int> ids_;
};

/// Attribute `name` of `node` by its kind; nullopt for kinds the
/// interpreter never reads (tensors, graphs, string lists).
std::optional<AttrValue> readAttr(const sdk::NodeView& node, const std::string& name) {
  switch (node.api()->node_attr_kind(node.handle(), name.c_str())) {
    case SG_ATTR_INT: return node.attrInt(name);
    case SG_ATTR_FLOAT: return node.attrFloat(name);
    case SG_ATTR_STRING: return node.attrString(name);
    case SG_ATTR_INTS: return node.attrInts(name);
    case SG_ATTR_FLOATS: return node.attrFloats(name);
    default: return std::nullopt;
  }
}

}  // namespace

BodyGraph readBody(const sdk::NodeView& fused) {
  std::optional<sdk::GraphView> body = fused.body();
  if (!body) throw sdk::Unsupported("emudev: fused node '" + fused.name() + "' has no body");
  BodyReader reader;
  for (const sdk::ValueView& v : body->inputs()) reader.graph.inputs.push_back(reader.valueOf(v));
  for (const sdk::NodeView& n : body->nodes()) {
    BodyNode node;
    node.opType = n.qualifiedOpType();
    node.name = n.name();
    for (size_t i = 0; i < n.numInputs(); ++i) node.inputs.push_back(reader.valueOf(n.input(i)));
    for (size_t o = 0; o < n.numOutputs(); ++o) node.outputs.push_back(reader.valueOf(n.output(o)));
    for (const std::string& name : n.attrNames())
      if (std::optional<AttrValue> a = readAttr(n, name)) node.attrs.emplace(name, std::move(*a));
    reader.graph.nodes.push_back(std::move(node));
  }
  for (const sdk::ValueView& v : body->outputs()) reader.graph.outputs.push_back(reader.valueOf(v));
  return std::move(reader.graph);
}

}  // namespace subgraph::emudev
