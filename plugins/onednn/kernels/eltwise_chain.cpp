//===- plugins/onednn/kernels/eltwise_chain.cpp - Chains of unary activations -===//
//
// Cached oneDNN eltwise primitives run in sequence; see eltwise_chain.h.
//
//===----------------------------------------------------------------------===//
#include "eltwise_chain.h"

#include <stdexcept>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct EltwiseChain::Prepared {
  dnnl::memory::desc desc;
  std::vector<dnnl::eltwise_forward> primitives;
};

EltwiseChain::EltwiseChain(std::vector<Activation> steps, Format format)
    : steps_(std::move(steps)), format_(format) {
  if (steps_.empty()) throw std::invalid_argument("eltwise: empty chain");
}

void EltwiseChain::prepare(std::span<const int64_t> dims) {
  std::vector<int64_t> key(dims.begin(), dims.end());
  if (cache_.find(key)) return;
  auto p = std::make_shared<Prepared>();
  p->desc = formatDesc(dims, format_);
  for (const Activation& a : steps_) p->primitives.emplace_back(eltwiseDesc(a, p->desc));
  cache_.insert(key, std::move(p));
}

void EltwiseChain::execute(std::span<const int64_t> dims, const void* src, void* dst) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(dims.begin(), dims.end()), "eltwise");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory srcMem(p->desc, engine, const_cast<void*>(src));
  dnnl::memory dstMem(p->desc, engine, dst);
  dnnl::stream& stream = threadStream();
  for (size_t i = 0; i < p->primitives.size(); ++i)
    p->primitives[i].execute(stream,
                             {{DNNL_ARG_SRC, i == 0 ? srcMem : dstMem}, {DNNL_ARG_DST, dstMem}});
  stream.wait();
}

}  // namespace subgraph::onednn
