//===- examples/max_splat/max_splat.cpp - A backend node from a transform --===//
//
// Glow's CPU backend turns Max(x, Splat(c)) into its own CPUMaxSplat node
// in transformPostLowering, because "max with a constant" needs no second
// buffer. This plugin, backend `max_splat`, does the same after
// partitioning:
//  * an op definition for example.max_splat.MaxSplat (input X, output Y,
//    float attribute `splat`; Y has X's type);
//  * a post-partition transform replacing Max(x, C), where C is a float32
//    constant whose elements are all equal and which does not widen x by
//    broadcasting, by MaxSplat(x) {splat = c};
//  * a kernel for MaxSplat: y = max(x, splat).
// It registers no properties, so it fuses nothing; it only rewrites.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace {

namespace sdk = subgraph::sdk;

constexpr const char* kDomain = "example.max_splat";
constexpr const char* kOp = "MaxSplat";

/// The value of a float32 constant whose elements are all equal, if `v` is
/// one; the splat must also not widen x by broadcasting.
std::optional<float> splatValue(const sdk::ValueView& v, const sdk::ValueView& x) {
  if (!v || !v.isConstant() || v.dtype() != sdk::DataType::kFloat32) return std::nullopt;
  std::span<const float> data = v.constantData<float>();
  if (data.empty()) return std::nullopt;
  for (float f : data)
    if (f != data[0]) return std::nullopt;
  // Broadcasting must leave x's shape unchanged: the constant has at most
  // x's rank and every dim is 1 or equal to x's.
  std::vector<int64_t> cd = v.dims(), xd = x.dims();
  if (!x.hasStaticShape() || cd.size() > xd.size()) return std::nullopt;
  for (size_t i = 0; i < cd.size(); ++i) {
    int64_t c = cd[cd.size() - 1 - i], xi = xd[xd.size() - 1 - i];
    if (c != 1 && c != xi) return std::nullopt;
  }
  return data[0];
}

/// Max(x, C) or Max(C, x) with a splat C -> MaxSplat(x).
bool fuseMaxSplat(sdk::MutableGraph& graph) {
  bool changed = false;
  for (const sdk::NodeView& node : graph.nodes()) {
    if (!node.is("Max") || node.numInputs() != 2) continue;
    for (size_t c = 0; c < 2; ++c) {
      sdk::ValueView x = node.input(1 - c);
      if (!x || x.dtype() != sdk::DataType::kFloat32) continue;
      std::optional<float> splat = splatValue(node.input(c), x);
      if (!splat) continue;
      graph.replaceNode(node, kDomain, kOp, {x}, {sdk::Attr::Float("splat", *splat)});
      changed = true;
      break;
    }
  }
  if (changed) graph.removeDeadNodes();
  return changed;
}

/// y = max(x, splat), elementwise on float32.
class MaxSplatKernel final : public sdk::Kernel {
 public:
  explicit MaxSplatKernel(float splat) : splat_(splat) {}
  void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
    const float* x = in[0].data<float>();
    float* y = out[0].data<float>();
    const int64_t n = in[0].numElements();
    for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i], splat_);
  }

 private:
  float splat_;
};

}  // namespace

SUBGRAPH_PLUGIN("max_splat", "1.0.0",
                "Glow's CPUMaxSplat: Max(x, splat constant) becomes one backend node") {
  plugin.addOp(sdk::OpDef(kDomain, kOp)
                   .doc("Y = max(X, splat): elementwise maximum with a scalar.")
                   .input("X")
                   .output("Y")
                   .attr(sdk::Attr::Float("splat", 0.0))
                   .dataParallel());
  plugin.addTransform("fuse_max_splat", sdk::Stage::kPostPartition, &fuseMaxSplat);
  plugin.addKernel(std::string(kDomain) + "." + kOp,
                   [](const sdk::NodeView& node, const sdk::KernelContext&) {
                     return std::make_unique<MaxSplatKernel>(node.attrFloat("splat"));
                   });
}
