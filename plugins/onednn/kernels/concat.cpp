//===- plugins/onednn/kernels/concat.cpp - Concatenation -===//
//
// The cached oneDNN concat primitive; see concat.h.
//
//===----------------------------------------------------------------------===//
#include "concat.h"

#include <stdexcept>

#include "dnnl_context.h"
#include "tensor_format.h"

namespace subgraph::onednn {

struct Concat::Prepared {
  dnnl::concat primitive;
  std::vector<dnnl::memory::desc> srcDescs;
  dnnl::memory::desc dstDesc, scratchDesc;
  size_t scratchBytes = 0;
};

int64_t Concat::normalizedAxis(size_t rank) const {
  auto r = static_cast<int64_t>(rank);
  int64_t axis = axis_ < 0 ? axis_ + r : axis_;
  if (axis < 0 || axis >= r) throw std::invalid_argument("concat: axis out of range");
  return axis;
}

std::vector<int64_t> Concat::outputDims(std::span<const std::vector<int64_t>> inputs) const {
  if (inputs.empty()) throw std::invalid_argument("concat: no inputs");
  auto axis = static_cast<size_t>(normalizedAxis(inputs[0].size()));
  std::vector<int64_t> out = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].size() != out.size())
      throw std::invalid_argument("concat: inputs differ in rank");
    for (size_t d = 0; d < out.size(); ++d)
      if (d != axis && inputs[i][d] != out[d])
        throw std::invalid_argument("concat: inputs differ outside the axis");
    out[axis] += inputs[i][axis];
  }
  return out;
}

std::vector<int64_t> Concat::key(std::span<const std::vector<int64_t>> inputs) {
  std::vector<int64_t> k;
  for (const std::vector<int64_t>& d : inputs) {
    k.insert(k.end(), d.begin(), d.end());
    k.push_back(-1);
  }
  return k;
}

size_t Concat::prepare(std::span<const std::vector<int64_t>> inputs) {
  std::vector<int64_t> k = key(inputs);
  if (auto p = cache_.find(k)) return p->scratchBytes;
  auto p = std::make_shared<Prepared>();
  std::vector<int64_t> out = outputDims(inputs);
  for (const std::vector<int64_t>& d : inputs) p->srcDescs.push_back(formatDesc(d, Format::kPlain));
  p->dstDesc = formatDesc(out, Format::kPlain);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::concat::primitive_desc pd(p->dstDesc, static_cast<int>(normalizedAxis(out.size())),
                                  p->srcDescs, cpuEngine(), attr);
  p->primitive = dnnl::concat(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();
  return cache_.insert(k, std::move(p))->scratchBytes;
}

void Concat::execute(std::span<const std::vector<int64_t>> inputs,
                     std::span<const float* const> srcs, float* dst, void* scratch) const {
  std::shared_ptr<const Prepared> p = cache_.get(key(inputs), "concat");
  dnnl::engine& engine = cpuEngine();
  std::unordered_map<int, dnnl::memory> args;
  for (size_t i = 0; i < srcs.size(); ++i)
    args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i),
                 dnnl::memory(p->srcDescs[i], engine, const_cast<float*>(srcs[i])));
  args.emplace(DNNL_ARG_DST, dnnl::memory(p->dstDesc, engine, dst));
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(p->scratchDesc, engine, scratch));
  dnnl::stream& stream = threadStream();
  p->primitive.execute(stream, args);
  stream.wait();
}

}  // namespace subgraph::onednn
