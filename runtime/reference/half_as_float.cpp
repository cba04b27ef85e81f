//===- runtime/reference/half_as_float.cpp - f16/bf16 through f32 kernels -===//
//
// The decorator of half_as_float.h. Scratch holds, in order and 64-byte
// aligned, the f32 copy of every half input, the f32 buffer of every output
// returned in half, and the wrapped kernel's own scratch. resize() and run()
// derive that layout from the same descs, since a kernel keeps no
// per-signature state.
//
//===----------------------------------------------------------------------===//
#include "reference/half_as_float.h"

#include <memory>
#include <span>
#include <vector>

#include "reference/kernel_util.h"

namespace subgraph::runtime::reference {
namespace {

constexpr size_t kAlign = 64;
size_t alignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

bool isHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

size_t f32Bytes(const TensorDesc& desc) {
  return alignUp(static_cast<size_t>(desc.numElements()) * sizeof(float));
}

void widen(DataType dtype, const uint16_t* in, float* out, int64_t n) {
  parallelFor(n, 4, [&](int64_t b, int64_t e) {
    if (dtype == DataType::kFloat16)
      for (int64_t i = b; i < e; ++i) out[i] = halfBitsToFloat(in[i]);
    else
      for (int64_t i = b; i < e; ++i) out[i] = bfloat16BitsToFloat(in[i]);
  });
}

void narrow(DataType dtype, const float* in, uint16_t* out, int64_t n) {
  parallelFor(n, 4, [&](int64_t b, int64_t e) {
    if (dtype == DataType::kFloat16)
      for (int64_t i = b; i < e; ++i) out[i] = floatToHalfBits(in[i]);
    else
      for (int64_t i = b; i < e; ++i) out[i] = floatToBFloat16Bits(in[i]);
  });
}

class HalfAsFloatKernel final : public Kernel {
 public:
  explicit HalfAsFloatKernel(std::unique_ptr<Kernel> inner) : inner_(std::move(inner)) {}

  std::vector<size_t> shapeInputs() const override { return inner_->shapeInputs(); }
  bool readsInputData() const override { return inner_->readsInputData(); }
  size_t staticBytes() const override { return inner_->staticBytes(); }
  Status onSessionPrologue(SessionPrologueContext& ctx) override {
    return inner_->onSessionPrologue(ctx);
  }
  void onSessionEpilogue() override { inner_->onSessionEpilogue(); }
  StatusOr<std::unique_ptr<KernelFrameState>> onFramePrologue() const override {
    return inner_->onFramePrologue();
  }
  void onFrameEpilogue(KernelFrameState* state) const override { inner_->onFrameEpilogue(state); }

  Status resize(ResizeContext& ctx) const override {
    const DataType half = halfType(
        ctx.numInputs(), [&](size_t i) { return ctx.hasInput(i) ? &ctx.inputDesc(i) : nullptr; });
    if (half == DataType::kUndefined) return inner_->resize(ctx);
    std::vector<TensorDesc> wide(ctx.numInputs());
    std::vector<const TensorDesc*> inputs(ctx.numInputs(), nullptr);
    std::vector<const TensorView*> contents(ctx.numInputs(), nullptr);
    size_t bytes = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) continue;
      wide[i] = ctx.inputDesc(i);
      if (!wide[i].isPlain()) return ctx.fail("f16/bf16 inputs must be plain");
      if (isHalf(wide[i].dtype)) {
        wide[i].dtype = DataType::kFloat32;
        bytes += f32Bytes(wide[i]);
      } else {
        contents[i] = ctx.inputContent(i);
      }
      inputs[i] = &wide[i];
    }
    std::vector<TensorDesc> outputs(ctx.numOutputs());
    ResizeContext inner(ctx.node(), inputs, contents, outputs);
    SUBGRAPH_RETURN_IF_ERROR(inner_->resize(inner));
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].dtype == DataType::kFloat32) {
        bytes += f32Bytes(outputs[i]);
        outputs[i].dtype = half;
      }
      ctx.setOutput(i, outputs[i]);
    }
    ctx.requestScratch(bytes + inner.scratchBytes());
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const DataType half = halfType(ctx.numInputs(), [&](size_t i) {
      return ctx.hasInput(i) ? &ctx.input(i).desc() : nullptr;
    });
    if (half == DataType::kUndefined) return inner_->run(ctx);
    std::byte* next = ctx.scratch().data();
    std::vector<TensorDesc> inDescs(ctx.numInputs()), outDescs(ctx.numOutputs());
    std::vector<TensorView> inputs(ctx.numInputs()), outputs(ctx.numOutputs());
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) continue;
      const TensorView& in = ctx.input(i);
      if (!isHalf(in.dtype())) {
        inputs[i] = in;
        continue;
      }
      inDescs[i] = TensorDesc{DataType::kFloat32, in.dims(), nullptr};
      auto* wide = reinterpret_cast<float*>(next);
      widen(in.dtype(), in.data<uint16_t>(), wide, in.numElements());
      inputs[i] = TensorView(&inDescs[i], wide);
      next += f32Bytes(inDescs[i]);
    }
    for (size_t i = 0; i < ctx.numOutputs(); ++i) {
      const TensorView& out = ctx.output(i);
      if (out.dtype() != half) {
        outputs[i] = out;
        continue;
      }
      outDescs[i] = TensorDesc{DataType::kFloat32, out.dims(), nullptr};
      outputs[i] = TensorView(&outDescs[i], next);
      next += f32Bytes(outDescs[i]);
    }
    const size_t used = static_cast<size_t>(next - ctx.scratch().data());
    RunContext inner(ctx.node(), inputs, outputs, ctx.scratch().subspan(used), ctx.frameState());
    SUBGRAPH_RETURN_IF_ERROR(inner_->run(inner));
    for (size_t i = 0; i < ctx.numOutputs(); ++i)
      if (outputs[i].raw() != ctx.output(i).raw())
        narrow(half, outputs[i].data<float>(), ctx.output(i).mutableData<uint16_t>(),
               ctx.output(i).numElements());
    return Status::ok();
  }

 private:
  // The element type of the first half input, or kUndefined when no input
  // is half (then the wrapped kernel runs as it is).
  template <typename DescOf>
  static DataType halfType(size_t n, DescOf descOf) {
    for (size_t i = 0; i < n; ++i)
      if (const TensorDesc* d = descOf(i); d && isHalf(d->dtype)) return d->dtype;
    return DataType::kUndefined;
  }

  std::unique_ptr<Kernel> inner_;
};

}  // namespace

KernelCreator halfAsFloat(KernelCreator f32Creator) {
  return [create = std::move(f32Creator)](
             const Node& node, const Backend& backend) -> StatusOr<std::unique_ptr<Kernel>> {
    StatusOr<std::unique_ptr<Kernel>> inner = create(node, backend);
    if (!inner) return inner.status();
    return std::unique_ptr<Kernel>(std::make_unique<HalfAsFloatKernel>(std::move(inner).value()));
  };
}

}  // namespace subgraph::runtime::reference
