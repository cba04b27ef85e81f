//===- plugins/onednn/kernels/transpose.cpp - Transpose as a reorder ------===//
//
// See transpose.h.
//
//===----------------------------------------------------------------------===//
#include "transpose.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <stdexcept>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct Transpose::Prepared {
  dnnl::reorder primitive;
  dnnl::memory::desc src, dst;
};

Transpose::Transpose(std::vector<int64_t> perm) : perm_(std::move(perm)) {
  std::vector<int64_t> sorted = perm_;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      throw std::invalid_argument("transpose: perm is not a permutation");
  if (perm_.empty() || perm_.size() > DNNL_MAX_NDIMS)
    throw std::invalid_argument("transpose: oneDNN takes ranks 1 to 12");
}

std::vector<int64_t> Transpose::outputDims(std::span<const int64_t> x) const {
  if (x.size() != perm_.size()) throw std::invalid_argument("transpose: perm does not fit x");
  std::vector<int64_t> out;
  for (int64_t p : perm_) out.push_back(x[static_cast<size_t>(p)]);
  return out;
}

void Transpose::prepare(std::span<const int64_t> x) {
  std::vector<int64_t> key(x.begin(), x.end());
  if (cache_.find(key)) return;
  std::vector<int64_t> out = outputDims(x);
  std::vector<int64_t> strides(x.size(), 1), permuted(x.size());
  for (size_t i = x.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(x[i], 1);
  for (size_t k = 0; k < perm_.size(); ++k) permuted[k] = strides[static_cast<size_t>(perm_[k])];
  std::vector<int64_t> dense(out.size(), 1);
  for (size_t i = out.size(); i-- > 1;) dense[i - 1] = dense[i] * std::max<int64_t>(out[i], 1);
  auto p = std::make_shared<Prepared>();
  p->src = dnnl::memory::desc(out, dnnl::memory::data_type::f32, permuted);
  p->dst = dnnl::memory::desc(out, dnnl::memory::data_type::f32, dense);
  p->primitive =
      dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->src, cpuEngine(), p->dst));
  cache_.insert(key, std::move(p));
}

void Transpose::execute(std::span<const int64_t> x, const float* src, float* dst) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(x.begin(), x.end()), "transpose");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory s(p->src, engine, const_cast<float*>(src));
  dnnl::memory d(p->dst, engine, dst);
  dnnl::stream& stream = threadStream();
  p->primitive.execute(stream, s, d);
  stream.wait();
}

}  // namespace subgraph::onednn
