//===- tests/plugins/corpus/twin_plugin.cpp - Two plugins, one set of symbols -===//
//
// Compiled twice, as `twin_a` and `twin_b`, WITHOUT hidden visibility or a
// version script: both export the same symbols (twin_identity, twinValue,
// the SDK's inline functions). Loaded together they must still each call
// their own, which RTLD_LOCAL guarantees. Each claims every Relu (so the
// priority test can see which one wins) and has a kernel that fills its
// output with its own value.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <algorithm>
#include <memory>

namespace sdk = subgraph::sdk;

extern "C" __attribute__((visibility("default"))) const char* twin_identity() { return TWIN_NAME; }

__attribute__((visibility("default"))) float twinValue() { return TWIN_VALUE; }

namespace {

class ReluSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& node) override { return node.is("Relu"); }
};

class ReluProperty final : public sdk::SubgraphProperty {
 public:
  ReluProperty() : SubgraphProperty("relu") {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<ReluSelector>();
  }
};

class FillKernel final : public sdk::Kernel {
 public:
  void run(std::span<const sdk::Tensor>, std::span<const sdk::Tensor> out) override {
    float* y = out[0].data<float>();
    std::fill(y, y + out[0].numElements(), twinValue());
  }
};

}  // namespace

SUBGRAPH_PLUGIN(TWIN_NAME, "1.0.0", twin_identity()) {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel(std::string("subgraph.") + TWIN_NAME + ".relu",
                   [](const sdk::NodeView&, const sdk::KernelContext&) {
                     return std::make_unique<FillKernel>();
                   });
}
