//===- plugins/onednn/kernels/resampling.cpp - Resize (upsampling) -===//
//
// The cached oneDNN resampling primitive; see resampling.h.
//
//===----------------------------------------------------------------------===//
#include "resampling.h"

#include <stdexcept>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct Resampling::Prepared {
  dnnl::resampling_forward primitive;
  dnnl::memory::desc srcDesc, dstDesc, scratchDesc;
  size_t scratchBytes = 0;
};

Resampling::Resampling(ResampleSpec spec) : spec_(spec) {
  for (int64_t f : spec_.factors)
    if (f < 1) throw std::invalid_argument("resize: factors must be whole numbers >= 1");
}

std::vector<int64_t> Resampling::outputDims(std::span<const int64_t> in) const {
  if (in.size() != 4) throw std::invalid_argument("resize: input must be 4-D NCHW");
  return {in[0], in[1], in[2] * spec_.factors[0], in[3] * spec_.factors[1]};
}

size_t Resampling::prepare(std::span<const int64_t> in) {
  std::vector<int64_t> key(in.begin(), in.end());
  if (auto p = cache_.find(key)) return p->scratchBytes;
  auto p = std::make_shared<Prepared>();
  p->srcDesc = formatDesc(in, spec_.format);
  p->dstDesc = formatDesc(outputDims(in), spec_.format);
  dnnl::algorithm alg = spec_.mode == ResampleSpec::Mode::kLinear
                            ? dnnl::algorithm::resampling_linear
                            : dnnl::algorithm::resampling_nearest;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // The factors are implied by the two descs (output over input size),
  // which for whole-number factors is exactly the ONNX scale.
  dnnl::resampling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, p->srcDesc,
                                      p->dstDesc);
  dnnl::resampling_forward::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::resampling_forward(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(key, std::move(p))->scratchBytes;
}

void Resampling::execute(std::span<const int64_t> in, const void* src, void* dst,
                         void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(in.begin(), in.end()), "resize");
  executeUnary(p->primitive, p->srcDesc, src, p->dstDesc, dst, p->scratchDesc, scratch);
}

}  // namespace subgraph::onednn
