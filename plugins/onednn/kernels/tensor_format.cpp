//===- plugins/onednn/kernels/tensor_format.cpp - Activation memory formats -===//
//
// Descs, sizes and reorders of the formats in tensor_format.h.
//
//===----------------------------------------------------------------------===//
#include "tensor_format.h"

#include <map>
#include <mutex>
#include <tuple>

#include "dnnl_context.h"

namespace subgraph::onednn {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

dnnl::memory::dims toDnnlDims(std::span<const int64_t> dims) {
  return dnnl::memory::dims(dims.begin(), dims.end());
}

namespace {

tag plainTag(size_t rank) {
  switch (rank) {
    case 0:
    case 1: return tag::a;
    case 2: return tag::ab;
    case 3: return tag::abc;
    case 4: return tag::abcd;
    case 5: return tag::abcde;
    default: return tag::abcdef;
  }
}

}  // namespace

dnnl::memory::desc formatDesc(std::span<const int64_t> dims, Format format) {
  dnnl::memory::dims d = toDnnlDims(dims);
  if (d.empty()) d = {1};
  switch (format) {
    case Format::kPlain: return {d, dt::f32, plainTag(d.size())};
    case Format::kBlocked16: return {d, dt::f32, tag::nChw16c};
    case Format::kNhwcBf16: return {d, dt::bf16, tag::nhwc};
  }
  return {};
}

size_t formatBytes(std::span<const int64_t> dims, Format format) {
  size_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (i == 1 && format == Format::kBlocked16) d = (d + 15) / 16 * 16;
    count *= static_cast<size_t>(d);
  }
  return count * (format == Format::kNhwcBf16 ? 2 : 4);
}

void reorderTensor(std::span<const int64_t> dims, Format from, const void* src, Format to,
                   void* dst) {
  // Reorder primitives are cached: creating one costs far more than small
  // reorders take to run.
  using Key = std::tuple<std::vector<int64_t>, Format, Format>;
  static std::mutex mutex;
  static std::map<Key, dnnl::reorder> cache;
  Key key{std::vector<int64_t>(dims.begin(), dims.end()), from, to};
  dnnl::memory::desc srcDesc = formatDesc(dims, from);
  dnnl::memory::desc dstDesc = formatDesc(dims, to);
  dnnl::reorder prim;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end())
      it = cache
               .emplace(key, dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), srcDesc,
                                                                         cpuEngine(), dstDesc)))
               .first;
    prim = it->second;
  }
  dnnl::memory srcMem(srcDesc, cpuEngine(), const_cast<void*>(src));
  dnnl::memory dstMem(dstDesc, cpuEngine(), dst);
  dnnl::stream& stream = threadStream();
  prim.execute(stream, srcMem, dstMem);
  stream.wait();
}

}  // namespace subgraph::onednn
