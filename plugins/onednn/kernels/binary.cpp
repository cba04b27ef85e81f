//===- plugins/onednn/kernels/binary.cpp - Broadcasting binary ops --------===//
//
// See binary.h.
//
//===----------------------------------------------------------------------===//
#include "binary.h"

#include <algorithm>
#include <stdexcept>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct Binary::Prepared {
  dnnl::binary primitive;
  dnnl::memory::desc first, second, dst, scratchDesc;
  bool swapped = false;  // b is oneDNN's first source
  size_t scratchBytes = 0;
};

namespace {

std::vector<int64_t> padded(std::span<const int64_t> dims, size_t rank) {
  std::vector<int64_t> out(rank - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

bool commutes(dnnl::algorithm a) {
  return a == dnnl::algorithm::binary_add || a == dnnl::algorithm::binary_mul ||
         a == dnnl::algorithm::binary_max || a == dnnl::algorithm::binary_min;
}

}  // namespace

std::vector<int64_t> Binary::outputDims(std::span<const int64_t> a,
                                        std::span<const int64_t> b) const {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> pa = padded(a, rank), pb = padded(b, rank), out(rank);
  bool aBroadcast = false, bBroadcast = false;
  for (size_t i = 0; i < rank; ++i) {
    if (pa[i] != pb[i] && pa[i] != 1 && pb[i] != 1)
      throw std::invalid_argument("binary: the operands do not broadcast");
    out[i] = std::max(pa[i], pb[i]);
    aBroadcast = aBroadcast || pa[i] != out[i];
    bBroadcast = bBroadcast || pb[i] != out[i];
  }
  if (aBroadcast && (bBroadcast || !commutes(algorithm_)))
    throw std::invalid_argument("binary: oneDNN broadcasts only its second source");
  return out;
}

size_t Binary::prepare(std::span<const int64_t> a, std::span<const int64_t> b) {
  std::vector<int64_t> key = shapeKey(
      {std::vector<int64_t>(a.begin(), a.end()), std::vector<int64_t>(b.begin(), b.end())});
  if (auto p = cache_.find(key)) return p->scratchBytes;
  std::vector<int64_t> out = outputDims(a, b);
  auto p = std::make_shared<Prepared>();
  std::vector<int64_t> pa = padded(a, out.size()), pb = padded(b, out.size());
  p->swapped = pa != out;
  auto dense = [](const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;)
      strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
  };
  p->first = dense(p->swapped ? pb : pa);
  p->second = dense(p->swapped ? pa : pb);
  p->dst = dense(out);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm_, p->first, p->second, p->dst), attr,
                                  cpuEngine());
  p->primitive = dnnl::binary(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(key, std::move(p))->scratchBytes;
}

void Binary::execute(std::span<const int64_t> aDims, std::span<const int64_t> bDims, const float* a,
                     const float* b, float* y, void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(shapeKey({std::vector<int64_t>(aDims.begin(), aDims.end()),
                           std::vector<int64_t>(bDims.begin(), bDims.end())}),
                 "binary");
  dnnl::engine& engine = cpuEngine();
  const float* first = p->swapped ? b : a;
  const float* second = p->swapped ? a : b;
  dnnl::stream& stream = threadStream();
  p->primitive.execute(
      stream, {{DNNL_ARG_SRC_0, dnnl::memory(p->first, engine, const_cast<float*>(first))},
               {DNNL_ARG_SRC_1, dnnl::memory(p->second, engine, const_cast<float*>(second))},
               {DNNL_ARG_DST, dnnl::memory(p->dst, engine, y)},
               {DNNL_ARG_SCRATCHPAD, dnnl::memory(p->scratchDesc, engine, scratch)}});
  stream.wait();
}

}  // namespace subgraph::onednn
