//===- plugins/onednn/kernels/normalization.cpp - Softmax and LayerNormalization -===//
//
// Cached oneDNN softmax and layer normalization primitives; see
// normalization.h.
//
//===----------------------------------------------------------------------===//
#include "normalization.h"

#include <cstring>
#include <stdexcept>

#include "dnnl_context.h"
#include "tensor_format.h"

namespace subgraph::onednn {

using dt = dnnl::memory::data_type;

struct Softmax::Prepared {
  dnnl::softmax_forward primitive;
  dnnl::memory::desc desc, scratchDesc;
  size_t scratchBytes = 0;
};

size_t Softmax::prepare(std::span<const int64_t> dims) {
  std::vector<int64_t> key(dims.begin(), dims.end());
  if (auto p = cache_.find(key)) return p->scratchBytes;
  auto rank = static_cast<int64_t>(dims.size());
  int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
  if (axis < 0 || axis >= rank) throw std::invalid_argument("softmax: axis out of range");
  auto p = std::make_shared<Prepared>();
  p->desc = formatDesc(dims, Format::kPlain);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, p->desc,
                                   static_cast<int>(axis));
  dnnl::softmax_forward::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::softmax_forward(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(key, std::move(p))->scratchBytes;
}

void Softmax::execute(std::span<const int64_t> dims, const float* src, float* dst,
                      void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(dims.begin(), dims.end()), "softmax");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory srcMem(p->desc, engine, const_cast<float*>(src));
  dnnl::memory dstMem(p->desc, engine, dst);
  dnnl::memory scratchMem(p->scratchDesc, engine, scratch);
  dnnl::stream& stream = threadStream();
  p->primitive.execute(
      stream, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_DST, dstMem}, {DNNL_ARG_SCRATCHPAD, scratchMem}});
  stream.wait();
}

struct LayerNorm::Prepared {
  dnnl::layer_normalization_forward primitive;
  dnnl::memory::desc desc, scratchDesc;
  size_t scratchBytes = 0;
};

LayerNorm::LayerNorm(std::vector<float> scale, std::vector<float> shift, float epsilon)
    : scale_(std::move(scale)), shift_(std::move(shift)), epsilon_(epsilon) {
  if (scale_.size() != shift_.size() || scale_.empty())
    throw std::invalid_argument("layernorm: scale and shift must have the same, nonzero size");
}

size_t LayerNorm::prepare(std::span<const int64_t> dims) {
  std::vector<int64_t> key(dims.begin(), dims.end());
  if (auto p = cache_.find(key)) return p->scratchBytes;
  if (dims.empty() || dims.back() != static_cast<int64_t>(scale_.size()))
    throw std::invalid_argument("layernorm: the last dim must match the scale's size");
  auto p = std::make_shared<Prepared>();
  p->desc = formatDesc(dims, Format::kPlain);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::layer_normalization_forward::desc desc(
      dnnl::prop_kind::forward_inference, p->desc, epsilon_,
      dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::layer_normalization_forward(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(key, std::move(p))->scratchBytes;
}

void LayerNorm::execute(std::span<const int64_t> dims, const float* src, float* dst,
                        void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(dims.begin(), dims.end()), "layernorm");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory::desc vec({static_cast<int64_t>(scale_.size())}, dt::f32,
                         dnnl::memory::format_tag::a);
  dnnl::memory srcMem(p->desc, engine, const_cast<float*>(src));
  dnnl::memory dstMem(p->desc, engine, dst);
  dnnl::memory scaleMem(vec, engine, const_cast<float*>(scale_.data()));
  dnnl::memory shiftMem(vec, engine, const_cast<float*>(shift_.data()));
  dnnl::memory scratchMem(p->scratchDesc, engine, scratch);
  dnnl::stream& stream = threadStream();
  p->primitive.execute(stream, {{DNNL_ARG_SRC, srcMem},
                                {DNNL_ARG_DST, dstMem},
                                {DNNL_ARG_SCALE, scaleMem},
                                {DNNL_ARG_SHIFT, shiftMem},
                                {DNNL_ARG_SCRATCHPAD, scratchMem}});
  stream.wait();
}

void LayerNorm::executeSum(std::span<const int64_t> dims, const float* a, const float* b,
                           float* dst, void* scratch) const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) dst[i] = a[i] + b[i];
  execute(dims, dst, dst, scratch);
}

}  // namespace subgraph::onednn
