//===- examples/example_convbn/example_convbn.cpp - MXNet's seed example ---===//
//
// The MXNet subgraph API's seed example as a plugin, backend
// `example_convbn`: a selector that starts on Conv, follows the outgoing
// edge to one BatchNormalization, and whose Filter drops a lone Conv when no
// BatchNormalization followed it. The plugin registers no kernel, so each
// fused node runs its region body on subgraph's default executor (the
// analogue of MXNet's CachedOp). On ResNet-50 it finds the 53 Conv+BN pairs.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <memory>
#include <string>
#include <vector>

namespace {

namespace sdk = subgraph::sdk;

/// Conv -> one BatchNormalization. State: whether the region already has
/// its BatchNormalization, so a Conv feeding two of them takes only one.
class ConvBnSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& node) override {
    return node.is("Conv") ? sdk::Decision::yes() : sdk::Decision::no();
  }
  sdk::Decision SelectInput(const sdk::NodeView&, const sdk::NodeView&) override {
    return sdk::Decision::no("example_convbn grows only along the Conv's outgoing edge");
  }
  sdk::Decision SelectOutput(const sdk::NodeView& node, const sdk::NodeView& consumer) override {
    if (!node.is("Conv") || !consumer.is("BatchNormalization") || foundBn_)
      return sdk::Decision::no();
    foundBn_ = true;
    return sdk::Decision::yes();
  }
  std::vector<sdk::NodeView> Filter(const std::vector<sdk::NodeView>& candidates) override {
    for (const sdk::NodeView& n : candidates)
      if (n.is("BatchNormalization")) return candidates;
    return {};  // a Conv without its BatchNormalization is not worth a region
  }
  std::string FilterReason(const sdk::NodeView&) override {
    return "no BatchNormalization follows the Conv, and a lone Conv is not worth a region";
  }
  void Reset() override { foundBn_ = false; }

 private:
  bool foundBn_ = false;
};

class ConvBnProperty final : public sdk::SubgraphProperty {
 public:
  ConvBnProperty() : SubgraphProperty("conv_bn", {.inferenceOnly = true}) {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<ConvBnSelector>();
  }
  /// Only a Conv can seed a region (Select says a reasonless no to the
  /// rest), so the host offers the selector the Convs alone.
  std::vector<std::string> SeedOpTypes() const override { return {"Conv"}; }
  /// Every region the selector forms is fused as it is, so the host need
  /// not copy each one into a body to ask CreateSubgraphNode: it moves the
  /// members into their bodies once partitioning is over.
  bool AcceptsEveryRegion() const override { return true; }
};

}  // namespace

SUBGRAPH_PLUGIN("example_convbn", "1.0.0",
                "MXNet's seed example: Conv followed by one BatchNormalization, run by the "
                "default executor") {
  plugin.addProperty<ConvBnProperty>();
}
