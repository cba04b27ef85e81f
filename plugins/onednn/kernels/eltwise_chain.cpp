//===- plugins/onednn/kernels/eltwise_chain.cpp - Chains of unary activations -===//
//
// Cached oneDNN eltwise primitives run in sequence; see eltwise_chain.h.
// A step oneDNN would get wrong for NaN (activation.h) runs on the host
// instead, in place on the output.
//
//===----------------------------------------------------------------------===//
#include "eltwise_chain.h"

#include <cstring>
#include <optional>
#include <stdexcept>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct EltwiseChain::Prepared {
  dnnl::memory::desc desc;
  /// Per step; none for a step applied on the host.
  std::vector<std::optional<dnnl::eltwise_forward>> primitives;
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
  for (const Activation& a : steps_) {
    if (exactPostOps(std::span(&a, 1)) == 1)
      p->primitives.emplace_back(eltwiseDesc(a, p->desc));
    else
      p->primitives.emplace_back();
  }
  cache_.insert(key, std::move(p));
}

void EltwiseChain::execute(std::span<const int64_t> dims, const void* src, void* dst) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(dims.begin(), dims.end()), "eltwise");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory srcMem(p->desc, engine, const_cast<void*>(src));
  dnnl::memory dstMem(p->desc, engine, dst);
  dnnl::stream& stream = threadStream();
  for (size_t i = 0; i < p->primitives.size(); ++i) {
    if (p->primitives[i]) {
      p->primitives[i]->execute(stream,
                                {{DNNL_ARG_SRC, i == 0 ? srcMem : dstMem}, {DNNL_ARG_DST, dstMem}});
      continue;
    }
    stream.wait();  // the host reads what the steps before wrote
    if (i == 0 && src != dst) std::memcpy(dst, src, p->desc.get_size());
    applyOnHost(std::span(&steps_[i], 1), dims, format_, dst);
  }
  stream.wait();
}

}  // namespace subgraph::onednn
