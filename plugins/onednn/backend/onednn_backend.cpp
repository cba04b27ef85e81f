//===- plugins/onednn/backend/onednn_backend.cpp - The runtime side of the backend -===//
//
// The runtime Backend of onednn: host memory, the family kernels, and
// layout-changing copies (oneDNN reorders) between plain f32 and the
// blocked formats. Registrations of the families live in registration.cpp.
//
//===----------------------------------------------------------------------===//
#include "onednn_backend_impl.h"

#include <cstring>

#include "dnnl_context.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

Format formatOfLayout(const runtime::Layout* layout) {
  if (!layout) return Format::kPlain;
  if (layout == layoutOf(Format::kBlocked16)) return Format::kBlocked16;
  if (layout == layoutOf(Format::kNhwcBf16)) return Format::kNhwcBf16;
  throw Unsupported("foreign layout");
}

bool isOurs(const runtime::Layout* layout) {
  return !layout || layout == layoutOf(Format::kBlocked16) || layout == layoutOf(Format::kNhwcBf16);
}

// A value entering or leaving oneDNN: one reorder, cached per shape.
class ReorderKernel final : public runtime::Kernel {
 public:
  ReorderKernel(Format from, Format to) : from_(from), to_(to) {}
  bool usesOwnThreads() const override { return true; }
  const runtime::Layout* inputLayout(size_t) const override { return layoutOf(from_); }
  const runtime::Layout* outputLayout(size_t) const override { return layoutOf(to_); }
  Status resize(runtime::ResizeContext& ctx) const override {
    runtime::TensorDesc out = ctx.inputDesc(0);
    if (out.dims.size() != 4 && (isBlocked(from_) || isBlocked(to_)))
      return ctx.fail("blocked layouts are 4-D only");
    out.layout = layoutOf(to_);
    ctx.setOutput(0, std::move(out));
    return Status::ok();
  }
  Status run(runtime::RunContext& ctx) const override {
    try {
      setCallerThreads(oneapi::tbb::this_task_arena::max_concurrency());
      reorderTensor(ctx.input(0).dims(), from_, ctx.input(0).raw(), to_, ctx.output(0).raw());
      return Status::ok();
    } catch (const std::exception& e) {
      return ctx.fail(std::string("reorder: ") + e.what());
    }
  }

 private:
  Format from_;
  Format to_;
};

}  // namespace

OnednnBackend::OnednnBackend()
    : runtime::Backend(kBackendName, runtime::Device{"cpu", 0}, nullptr, nullptr) {}

std::unique_ptr<runtime::Kernel> OnednnBackend::createCopy(
    const runtime::CopyRequest& request) const {
  if (!request.from.isHost() || !request.to.isHost() || request.dtype != DataType::kFloat32 ||
      !isOurs(request.fromLayout) || !isOurs(request.toLayout))
    return runtime::Backend::createCopy(request);
  Format from = formatOfLayout(request.fromLayout);
  Format to = formatOfLayout(request.toLayout);
  if (from == to) return runtime::Backend::createCopy(request);
  return std::make_unique<ReorderKernel>(from, to);
}

}  // namespace subgraph::onednn
