//===- plugins/onednn/backend/layout_copies.cpp - oneDNN's formats as plugin layouts -===//
//
// See layout_copies.h. A layout holds 4-D f32 tensors only (the blocked
// formats pad the channel dim); its size is 0 bytes, "cannot hold", for
// anything else, which the host reports instead of planning a buffer.
//
//===----------------------------------------------------------------------===//
#include "layout_copies.h"

#include "dnnl_context.h"
#include "region_support.h"
#include "tensor_format.h"

namespace subgraph::onednn {
namespace {

sdk::LayoutSize sizeOf(Format format) {
  return [format](sdk::DataType dtype, std::span<const int64_t> dims) -> size_t {
    if (dtype != sdk::DataType::kFloat32 || dims.size() != 4) return 0;
    return formatBytes(dims, format);
  };
}

// One reorder, cached per shape by the compute core; on oneDNN's OpenMP
// threads, as many as the process's default (a copy learns nothing of the
// session, and the session never runs it beside another kernel).
sdk::CopyFn reorder(Format from, Format to) {
  return [from, to](const sdk::Tensor& src, const sdk::Tensor& dst) {
    if (src.rank() != 4) throw sdk::Error("oneDNN's blocked layouts hold 4-D tensors only");
    try {
      reorderTensor(src.dims(), from, src.raw(), to, dst.raw());
    } catch (const dnnl::error& e) {
      throw sdk::Error(std::string("reorder: ") + e.what());
    }
  };
}

}  // namespace

void registerLayouts(sdk::Plugin& plugin) {
  const sdk::Layout* blocked16 = plugin.addLayout("nChw16c", sizeOf(Format::kBlocked16));
  const sdk::Layout* nhwcBf16 = plugin.addLayout("nhwc.bf16", sizeOf(Format::kNhwcBf16));
  setLayouts(blocked16, nhwcBf16);
  // Reorders run on the calling thread's stream and OpenMP team, so two
  // requests may run them at once.
  const sdk::CopyOptions options{
      .dtype = sdk::DataType::kFloat32, .usesOwnThreads = true, .concurrentRequests = true};
  const Format formats[] = {Format::kPlain, Format::kBlocked16, Format::kNhwcBf16};
  for (Format from : formats)
    for (Format to : formats)
      if (from != to) plugin.addCopy(layoutOf(from), layoutOf(to), reorder(from, to), options);
}

}  // namespace subgraph::onednn
