//===- plugins/onednn/kernels/pooling.cpp - Max and average pooling -===//
//
// The cached oneDNN pooling_v2 primitive; see pooling.h. oneDNN's max
// pooling is a chain of max instructions, which drop a NaN unless it comes
// last in its window; ONNX's max (numpy's, the reference's, every other
// backend's) keeps it. So where the input holds a NaN (one read of it
// says), each window that holds one gets NaN afterwards, on the host.
//
//===----------------------------------------------------------------------===//
#include "pooling.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct Pooling::Prepared {
  dnnl::pooling_v2_forward primitive;
  dnnl::memory::desc srcDesc, dstDesc, scratchDesc;
  size_t scratchBytes = 0;
};

Pooling::Pooling(PoolSpec spec) : spec_(spec) {
  for (int i = 0; i < 2; ++i)
    if (!spec_.global && (spec_.kernel[i] < 1 || spec_.strides[i] < 1 || spec_.dilations[i] < 1))
      throw std::invalid_argument("pool: kernel, strides and dilations must be positive");
}

std::vector<int64_t> Pooling::outputDims(std::span<const int64_t> in) const {
  if (in.size() != 4) throw std::invalid_argument("pool: input must be 4-D NCHW");
  if (spec_.global) return {in[0], in[1], 1, 1};
  std::vector<int64_t> out{in[0], in[1], 0, 0};
  for (size_t i = 0; i < 2; ++i) {
    int64_t extent = spec_.dilations[i] * (spec_.kernel[i] - 1) + 1;
    int64_t span = in[2 + i] + spec_.pads[i] + spec_.pads[2 + i] - extent;
    if (span < 0) throw std::invalid_argument("pool: the window is larger than the padded input");
    int64_t steps =
        spec_.ceilMode ? (span + spec_.strides[i] - 1) / spec_.strides[i] : span / spec_.strides[i];
    // ONNX drops a last window that would start inside the end padding.
    if (spec_.ceilMode && steps * spec_.strides[i] >= in[2 + i] + spec_.pads[i]) --steps;
    out[2 + i] = steps + 1;
  }
  return out;
}

size_t Pooling::prepare(std::span<const int64_t> in) {
  std::vector<int64_t> key(in.begin(), in.end());
  if (auto p = cache_.find(key)) return p->scratchBytes;
  auto p = std::make_shared<Prepared>();
  std::vector<int64_t> out = outputDims(in);
  p->srcDesc = formatDesc(in, spec_.format);
  p->dstDesc = formatDesc(out, spec_.format);
  dnnl::memory::dims kernel, strides, dilation, padL, padR;
  for (size_t i = 0; i < 2; ++i) {
    int64_t k = spec_.global ? in[2 + i] : spec_.kernel[i];
    int64_t s = spec_.global ? 1 : spec_.strides[i];
    int64_t d = spec_.global ? 1 : spec_.dilations[i];
    int64_t pl = spec_.global ? 0 : spec_.pads[i];
    kernel.push_back(k);
    strides.push_back(s);
    dilation.push_back(d - 1);
    padL.push_back(pl);
    // The right padding that makes oneDNN's output size the ONNX one.
    padR.push_back((out[2 + i] - 1) * s + d * (k - 1) + 1 - in[2 + i] - pl);
  }
  dnnl::algorithm alg = spec_.kind == PoolSpec::Kind::kMax ? dnnl::algorithm::pooling_max
                        : spec_.kind == PoolSpec::Kind::kAverageIncludePad
                            ? dnnl::algorithm::pooling_avg_include_padding
                            : dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, p->srcDesc,
                                      p->dstDesc, strides, kernel, dilation, padL, padR);
  dnnl::pooling_v2_forward::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::pooling_v2_forward(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(key, std::move(p))->scratchBytes;
}

namespace {

// Element (n, c, h, w) of a tensor of `dims` in `format`, as an index.
int64_t elementAt(std::span<const int64_t> dims, Format format, int64_t n, int64_t c, int64_t h,
                  int64_t w) {
  const int64_t C = dims[1], H = dims[2], W = dims[3];
  switch (format) {
    case Format::kBlocked16:
      return (((n * ((C + 15) / 16) + c / 16) * H + h) * W + w) * 16 + c % 16;
    case Format::kNhwcBf16: return ((n * H + h) * W + w) * C + c;
    case Format::kPlain: break;
  }
  return ((n * C + c) * H + h) * W + w;
}

bool isNanAt(const void* data, Format format, int64_t i) {
  if (format == Format::kNhwcBf16)
    return (static_cast<const uint16_t*>(data)[i] & 0x7fffu) > 0x7f80u;
  return std::isnan(static_cast<const float*>(data)[i]);
}

// True if any element of the `bytes` at `data` (padding is zero) is NaN.
bool holdsNan(const void* data, Format format, size_t bytes) {
  const auto count = static_cast<int64_t>(bytes / (format == Format::kNhwcBf16 ? 2 : 4));
  bool found = false;
#pragma omp parallel for reduction(|| : found) schedule(static) if (count >= (int64_t{1} << 16))
  for (int64_t i = 0; i < count; ++i) found = found || isNanAt(data, format, i);
  return found;
}

}  // namespace

void Pooling::execute(std::span<const int64_t> in, const void* src, void* dst,
                      void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(in.begin(), in.end()), "pool");
  executeUnary(p->primitive, p->srcDesc, src, p->dstDesc, dst, p->scratchDesc, scratch);
  if (spec_.kind == PoolSpec::Kind::kMax && holdsNan(src, spec_.format, p->srcDesc.get_size()))
    markNanWindows(in, src, dst);
}

void Pooling::markNanWindows(std::span<const int64_t> in, const void* src, void* dst) const {
  const std::vector<int64_t> out = outputDims(in);
  const bool global = spec_.global;
  const int64_t kh = global ? in[2] : spec_.kernel[0], kw = global ? in[3] : spec_.kernel[1];
  const int64_t sh = global ? 1 : spec_.strides[0], sw = global ? 1 : spec_.strides[1];
  const int64_t dh = global ? 1 : spec_.dilations[0], dw = global ? 1 : spec_.dilations[1];
  const int64_t ph = global ? 0 : spec_.pads[0], pw = global ? 0 : spec_.pads[1];
  const int64_t planes = in[0] * in[1];
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const int64_t n = plane / in[1], c = plane % in[1];
    for (int64_t oh = 0; oh < out[2]; ++oh)
      for (int64_t ow = 0; ow < out[3]; ++ow) {
        bool nan = false;
        for (int64_t i = 0; i < kh && !nan; ++i)
          for (int64_t j = 0; j < kw && !nan; ++j) {
            const int64_t h = oh * sh - ph + i * dh, w = ow * sw - pw + j * dw;
            nan = h >= 0 && h < in[2] && w >= 0 && w < in[3] &&
                  isNanAt(src, spec_.format, elementAt(in, spec_.format, n, c, h, w));
          }
        if (!nan) continue;
        const int64_t at = elementAt(out, spec_.format, n, c, oh, ow);
        if (spec_.format == Format::kNhwcBf16)
          static_cast<uint16_t*>(dst)[at] = 0x7fc0;
        else
          static_cast<float*>(dst)[at] = std::numeric_limits<float>::quiet_NaN();
      }
  }
}

}  // namespace subgraph::onednn
