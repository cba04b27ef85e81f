//===- runtime/reference/reverse_sequence.cpp - ReverseSequence -----------===//
//
// ReverseSequence(input, sequence_lens): for each batch entry b, the first
// sequence_lens[b] steps along time_axis are reversed and the rest are
// copied unchanged. batch_axis and time_axis are 0 and 1 in either order;
// the dims after them are moved as one contiguous block.
//
//===----------------------------------------------------------------------===//
#include <cstring>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const Node& node)
      : batchAxis_(node.getInt("batch_axis", 1)), timeAxis_(node.getInt("time_axis", 0)) {
    if (!((batchAxis_ == 0 && timeAxis_ == 1) || (batchAxis_ == 1 && timeAxis_ == 0)))
      throwNodeError(node, "batch_axis and time_axis must be 0 and 1, got " +
                               std::to_string(batchAxis_) + " and " + std::to_string(timeAxis_));
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& lens = ctx.inputDesc(1);
    if (x.dims.size() < 2) return ctx.fail("input must have rank >= 2, got " + x.toString());
    if (lens.dtype != DataType::kInt64) return unsupportedType(ctx.node(), lens.dtype);
    const int64_t batch = x.dims[static_cast<size_t>(batchAxis_)];
    if (lens.dims != std::vector<int64_t>{batch})
      return ctx.fail("sequence_lens must be [" + std::to_string(batch) + "], got " +
                      lens.toString());
    ctx.setOutput(0, TensorDesc{x.dtype, x.dims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const int64_t* lens = ctx.input(1).data<int64_t>();
    const int64_t batch = x.dim(batchAxis_), steps = x.dim(timeAxis_);
    int64_t inner = 1;
    for (size_t d = 2; d < x.rank(); ++d) inner *= x.dims()[d];
    const size_t blockBytes = static_cast<size_t>(inner) * dataTypeSize(x.dtype());
    // Offset (in blocks) of (batch b, time t).
    auto block = [&](int64_t b, int64_t t) {
      return batchAxis_ == 0 ? b * steps + t : t * batch + b;
    };
    for (int64_t b = 0; b < batch; ++b)
      if (lens[b] < 0 || lens[b] > steps)
        return ctx.fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                        " is out of range for " + std::to_string(steps) + " steps");
    const auto* src = static_cast<const std::byte*>(x.raw());
    auto* dst = static_cast<std::byte*>(ctx.output(0).raw());
    parallelFor(batch, steps * inner, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
          std::memcpy(dst + static_cast<size_t>(block(b, t)) * blockBytes,
                      src + static_cast<size_t>(block(b, from)) * blockBytes, blockBytes);
        }
    });
    return Status::ok();
  }

 private:
  int64_t batchAxis_, timeAxis_;
};

}  // namespace

void registerReverseSequenceKernels(Provider& p) {
  p.add("ReverseSequence", creatorFor<ReverseSequenceKernel>());
}

}  // namespace subgraph::runtime::reference
