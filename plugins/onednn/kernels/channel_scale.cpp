//===- plugins/onednn/kernels/channel_scale.cpp - x * per-channel s ------===//
//
// oneDNN binary_mul with a broadcast second source; see channel_scale.h.
//
//===----------------------------------------------------------------------===//
#include "channel_scale.h"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dnnl_context.h"

namespace subgraph::onednn {

struct ChannelScale::Prepared {
  dnnl::binary primitive;
  dnnl::memory::desc xDesc, sDesc, scratchDesc;  // y is laid out as x
  size_t scratchBytes = 0;
};

namespace {
std::vector<int64_t> toVector(std::span<const int64_t> dims) {
  return std::vector<int64_t>(dims.begin(), dims.end());
}
}  // namespace

std::vector<int64_t> ChannelScale::outputDims(std::span<const int64_t> x,
                                              std::span<const int64_t> s) const {
  if (x.size() != 4) throw std::invalid_argument("channel scale: x must be 4-D NCHW");
  if (s.size() != 4 || (s[0] != x[0] && s[0] != 1) || s[1] != x[1] || s[2] != 1 || s[3] != 1)
    throw std::invalid_argument(
        fmt::format("channel scale: the factors are [{}], expected [{} or 1, {}, 1, 1]",
                    fmt::join(s, ", "), x[0], x[1]));
  return toVector(x);
}

size_t ChannelScale::prepare(std::span<const int64_t> x, std::span<const int64_t> s) {
  std::vector<int64_t> key = shapeKey({toVector(x), toVector(s)});
  if (auto p = cache_.find(key)) return p->scratchBytes;
  outputDims(x, s);
  auto p = std::make_shared<Prepared>();
  p->xDesc = formatDesc(x, spec_.format);
  p->sDesc = formatDesc(s, spec_.format);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::binary::desc desc(dnnl::algorithm::binary_mul, p->xDesc, p->sDesc, p->xDesc);
  dnnl::binary::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::binary(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(key, std::move(p))->scratchBytes;
}

void ChannelScale::execute(std::span<const int64_t> xDims, std::span<const int64_t> sDims,
                           const void* x, const void* s, void* y, void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(shapeKey({toVector(xDims), toVector(sDims)}), "channel scale");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory xMem(p->xDesc, engine, const_cast<void*>(x));
  dnnl::memory sMem(p->sDesc, engine, const_cast<void*>(s));
  dnnl::memory yMem(p->xDesc, engine, y);
  dnnl::memory scratchMem(p->scratchDesc, engine, scratch);
  dnnl::stream& stream = threadStream();
  p->primitive.execute(stream, {{DNNL_ARG_SRC_0, xMem},
                                {DNNL_ARG_SRC_1, sMem},
                                {DNNL_ARG_DST, yMem},
                                {DNNL_ARG_SCRATCHPAD, scratchMem}});
  stream.wait();
}

}  // namespace subgraph::onednn
