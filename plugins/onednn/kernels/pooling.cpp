//===- plugins/onednn/kernels/pooling.cpp - Max and average pooling -===//
//
// The cached oneDNN pooling_v2 primitive; see pooling.h.
//
//===----------------------------------------------------------------------===//
#include "pooling.h"

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

void Pooling::execute(std::span<const int64_t> in, const void* src, void* dst,
                      void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(in.begin(), in.end()), "pool");
  executeUnary(p->primitive, p->srcDesc, src, p->dstDesc, dst, p->scratchDesc, scratch);
}

}  // namespace subgraph::onednn
