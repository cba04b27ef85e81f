//===- tests/plugins/corpus/seeds_plugin.cpp - A selector with declared seeds -===//
//
// Compiled twice. With SEEDS_DECLARED, backend `seeds`: a selector property
// that declares Relu as its only seed op (SubgraphProperty::SeedOpTypes)
// and whose Select throws when offered any other node, which the SDK turns
// into a plugin error that fails the partition: the host must never offer
// it one. Without, backend `no_seeds`: the same selector, undeclared,
// saying a reasonless no to every other node, as the declaration promises.
// Both grow a Relu into the Sigmoid that alone reads it.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sdk = subgraph::sdk;

namespace {

class ReluSigmoidSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& node) override {
    if (node.is("Relu")) return sdk::Decision::yes();
#ifdef SEEDS_DECLARED
    throw std::logic_error("offered " + node.opType() + " '" + node.name() +
                           "', which is not one of its seed ops");
#else
    return sdk::Decision::no();
#endif
  }
  sdk::Decision SelectOutput(const sdk::NodeView& node, const sdk::NodeView& consumer) override {
    if (!node.is("Relu") || !consumer.is("Sigmoid"))
      return sdk::Decision::no("only a Relu's Sigmoid joins it");
    return sdk::Decision::yes();
  }
};

class ReluSigmoidProperty final : public sdk::SubgraphProperty {
 public:
  ReluSigmoidProperty() : SubgraphProperty("relu_sigmoid") {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<ReluSigmoidSelector>();
  }
#ifdef SEEDS_DECLARED
  std::vector<std::string> SeedOpTypes() const override { return {"Relu"}; }
#endif
  bool AcceptsEveryRegion() const override { return true; }
};

}  // namespace

SUBGRAPH_PLUGIN(SEEDS_NAME, "1.0.0", "a Relu-seeded selector") {
  plugin.addProperty<ReluSigmoidProperty>();
}
