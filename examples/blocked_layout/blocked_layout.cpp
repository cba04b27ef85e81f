//===- examples/blocked_layout/blocked_layout.cpp - A layout of a plugin's own -===//
//
// Backend `blocked_layout`: how a plugin keeps values in its own memory
// layout between its regions (plugin ABI 2), as oneDNN keeps activations
// in nChw16c. The layout here is "nc4hw": a float32 [N, C, H, W] tensor
// stored as [N, ceil(C/4), H, W, 4], channels in blocks of four, the last
// block padded with zeros.
//  * addLayout defines it (with its size: C rounded up to 4);
//  * addCopy gives the two copies every layout needs, plain -> nc4hw and
//    nc4hw -> plain; the host inserts them only where a value enters or
//    leaves the layout;
//  * three single-op properties (relu, add, global_avg_pool) and their
//    kernels, which read and write nc4hw. Relu and Add run over the padded
//    buffer as it is (relu(0) = 0 + 0 = 0 keeps the padding zero), so a
//    chain Relu -> Add -> Relu moves no data between the regions;
//    GlobalAveragePool reads nc4hw, writes plain [N, C, 1, 1], and sums in
//    double precision in scratch memory the host plans (scratchBytes).
// In a graph x -> Relu -> Add(., y) -> Relu -> GlobalAveragePool the host
// adds exactly two copies, x and y into nc4hw, and none between regions.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace {

namespace sdk = subgraph::sdk;

constexpr int64_t kBlock = 4;

/// [N, C, H, W] of a rank-4 tensor, with C's block count.
struct Nchw {
  int64_t n, c, h, w;
  int64_t blocks() const { return (c + kBlock - 1) / kBlock; }
  explicit Nchw(std::span<const int64_t> d) : n(d[0]), c(d[1]), h(d[2]), w(d[3]) {}
};

/// nc4hw holds rank-4 float32 only; anything else is 0 bytes ("cannot").
size_t nc4hwBytes(sdk::DataType dtype, std::span<const int64_t> dims) {
  if (dtype != sdk::DataType::kFloat32 || dims.size() != 4) return 0;
  Nchw s(dims);
  return static_cast<size_t>(s.n * s.blocks() * s.h * s.w * kBlock) * sizeof(float);
}

/// Offset of element (n, c, h, w) in nc4hw.
int64_t blockedIndex(const Nchw& s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return (((n * s.blocks() + c / kBlock) * s.h + h) * s.w + w) * kBlock + c % kBlock;
}

/// Converts between plain NCHW and nc4hw; `toBlocked` picks the direction.
void reorder(const sdk::Tensor& src, const sdk::Tensor& dst, bool toBlocked) {
  Nchw s(src.dims());
  const float* in = src.data<float>();
  float* out = dst.data<float>();
  if (toBlocked) std::fill(out, out + dst.bytes() / sizeof(float), 0.0f);
  int64_t plain = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w, ++plain) {
          int64_t blocked = blockedIndex(s, n, c, h, w);
          if (toBlocked)
            out[blocked] = in[plain];
          else
            out[plain] = in[blocked];
        }
}

/// A rank-4 float32 value with static dims.
sdk::Decision isStaticNchw(const sdk::ValueView& v) {
  if (!v || v.dtype() != sdk::DataType::kFloat32 || v.dims().size() != 4 || !v.hasStaticShape())
    return sdk::Decision::no("not a static rank-4 float32 tensor");
  return sdk::Decision::yes();
}

/// Base of the kernels: every input and output in nc4hw unless a kernel
/// says otherwise.
class BlockedKernel : public sdk::Kernel {
 public:
  explicit BlockedKernel(const sdk::Layout* layout) : layout_(layout) {}
  const sdk::Layout* inputLayout(size_t) const override { return layout_; }
  const sdk::Layout* outputLayout(size_t) const override { return layout_; }

 protected:
  const sdk::Layout* layout_;
};

/// Relu over the whole padded buffer.
class ReluKernel final : public BlockedKernel {
 public:
  using BlockedKernel::BlockedKernel;
  void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
    const float* x = in[0].data<float>();
    float* y = out[0].data<float>();
    for (size_t i = 0; i < out[0].bytes() / sizeof(float); ++i) y[i] = std::max(x[i], 0.0f);
  }
};

/// Add of two same-shape tensors over the padded buffers. The region's
/// inputs are its distinct values, so `x + x` has one: which region input
/// each operand is comes from the body.
class AddKernel final : public BlockedKernel {
 public:
  AddKernel(const sdk::NodeView& fused, const sdk::Layout* layout) : BlockedKernel(layout) {
    std::optional<sdk::GraphView> body = fused.body();
    if (!body || body->nodes().size() != 1) throw sdk::Unsupported("not a one-Add region");
    sdk::NodeView add = body->nodes()[0];
    std::vector<sdk::ValueView> inputs = body->inputs();
    for (size_t k = 0; k < 2; ++k) {
      auto at = std::find(inputs.begin(), inputs.end(), add.input(k));
      if (at == inputs.end()) throw sdk::Unsupported("an Add operand is not a region input");
      operand_[k] = static_cast<size_t>(at - inputs.begin());
    }
  }
  void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
    const float* a = in[operand_[0]].data<float>();
    const float* b = in[operand_[1]].data<float>();
    float* y = out[0].data<float>();
    for (size_t i = 0; i < out[0].bytes() / sizeof(float); ++i) y[i] = a[i] + b[i];
  }

 private:
  size_t operand_[2] = {0, 1};
};

/// GlobalAveragePool: nc4hw in, plain [N, C, 1, 1] out. The sums are kept
/// in double in the scratch memory the host plans, one per (n, block,
/// lane), so a large H*W does not lose float precision.
class GlobalAvgPoolKernel final : public BlockedKernel {
 public:
  using BlockedKernel::BlockedKernel;
  const sdk::Layout* outputLayout(size_t) const override { return nullptr; }
  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return sumBytes(Nchw(inputs[0].dims));
  }
  void runWithScratch(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out,
                      std::span<std::byte> scratch) override {
    Nchw s(in[0].dims());
    if (scratch.size() < sumBytes(s))
      throw sdk::Error("global_avg_pool: the host gave less scratch memory than asked for");
    auto* sums = reinterpret_cast<double*>(scratch.data());
    const float* x = in[0].data<float>();
    const int64_t plane = s.h * s.w;
    for (int64_t nb = 0; nb < s.n * s.blocks(); ++nb) {
      double* lane = sums + nb * kBlock;
      std::fill(lane, lane + kBlock, 0.0);
      for (int64_t p = 0; p < plane; ++p)
        for (int64_t l = 0; l < kBlock; ++l) lane[l] += x[(nb * plane + p) * kBlock + l];
    }
    float* y = out[0].data<float>();
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c)
        y[n * s.c + c] = static_cast<float>(
            sums[(n * s.blocks() + c / kBlock) * kBlock + c % kBlock] / static_cast<double>(plane));
  }

 private:
  static size_t sumBytes(const Nchw& s) {
    return static_cast<size_t>(s.n * s.blocks() * kBlock) * sizeof(double);
  }
};

/// A Relu the kernel takes: static rank-4 f32.
sdk::Decision reluFits(const sdk::NodeView& n) { return isStaticNchw(n.output(0)); }

/// An Add the kernel takes: both operands of the output's shape (no
/// broadcasting in the blocked loop) and computed, not constants (a
/// constant operand would stay inside the region's body, where the kernel
/// does not look).
sdk::Decision addFits(const sdk::NodeView& n) {
  if (sdk::Decision d = isStaticNchw(n.output(0)); !d) return d;
  for (size_t i = 0; i < 2; ++i) {
    if (n.input(i).isConstant()) return sdk::Decision::no("an operand is a constant");
    if (n.input(i).dims() != n.output(0).dims()) return sdk::Decision::no("the Add broadcasts");
  }
  return sdk::Decision::yes();
}

/// A GlobalAveragePool the kernel takes: a static rank-4 f32 input.
sdk::Decision poolFits(const sdk::NodeView& n) { return isStaticNchw(n.input(0)); }

/// The creator of kernel `K` for every region of its op; `K` is made from
/// the layout, or from the fused node and the layout.
template <class K>
sdk::KernelCreator creatorOf(const sdk::Layout* layout) {
  return [layout](const sdk::NodeView& fused, const sdk::KernelContext&) {
    if constexpr (std::is_constructible_v<K, const sdk::NodeView&, const sdk::Layout*>)
      return std::make_unique<K>(fused, layout);
    else
      return std::make_unique<K>(layout);
  };
}

}  // namespace

SUBGRAPH_PLUGIN("blocked_layout", "1.0.0",
                "Keeps float32 NCHW values in a channels-blocked layout (nc4hw) between its "
                "Relu, Add and GlobalAveragePool regions") {
  const sdk::Layout* nc4hw = plugin.addLayout("nc4hw", &nc4hwBytes);
  sdk::CopyOptions f32{.dtype = sdk::DataType::kFloat32};
  plugin.addCopy(
      nullptr, nc4hw, [](const sdk::Tensor& s, const sdk::Tensor& d) { reorder(s, d, true); }, f32);
  plugin.addCopy(
      nc4hw, nullptr, [](const sdk::Tensor& s, const sdk::Tensor& d) { reorder(s, d, false); },
      f32);

  auto property = [](const char* name, sdk::Decision (*fits)(const sdk::NodeView&),
                     const char* op) {
    return std::make_unique<sdk::PatternProperty>(
        name, sdk::Pattern::chain(name, {sdk::OpPattern(op).where(fits)}));
  };
  plugin.addProperty(property("relu", &reluFits, "Relu"));
  plugin.addProperty(property("add", &addFits, "Add"));
  plugin.addProperty(property("global_avg_pool", &poolFits, "GlobalAveragePool"));

  plugin.addKernel("subgraph.blocked_layout.relu", creatorOf<ReluKernel>(nc4hw));
  plugin.addKernel("subgraph.blocked_layout.add", creatorOf<AddKernel>(nc4hw));
  plugin.addKernel("subgraph.blocked_layout.global_avg_pool",
                   creatorOf<GlobalAvgPoolKernel>(nc4hw));
}
