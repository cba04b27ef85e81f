//===- tests/plugins/corpus/session_plugin.cpp - Selection by session -----===//
//
// Backend `session_probe` (plugin ABI 5): selection that depends on the
// session, as cuDNN's does (its engine checks find engines for some graphs
// in fp16 only). Its one property, `relu_chain`, takes a Relu only in a
// session of precision fp16, and says why not in any other. Options:
//   engine = fp16 | any   fp16 (the default): the rule above; any: every
//                         precision;
//   fusion = on | off     on (the default): a Relu grows into the Sigmoid
//                         that alone reads it; off: the Relu alone.
// Each region records the precision it was planned for (attribute
// `planned_precision`), and its kernel refuses to be made for a session of
// another: a host that plans with one precision and runs with another
// fails loudly rather than running what it did not plan.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace sdk = subgraph::sdk;

namespace {

class ReluChainProperty final : public sdk::SubgraphProperty {
 public:
  explicit ReluChainProperty(const sdk::KernelContext& session)
      : SubgraphProperty("relu_chain"), precision_(session.precision) {
    const bool anyEngine = session.option("engine", "fp16") == "any";
    std::string precision = precision_;
    std::vector<sdk::OpPattern> chain = {
        sdk::OpPattern("Relu").where([anyEngine, precision](const sdk::NodeView&) {
          if (anyEngine || precision == "fp16") return sdk::Decision::yes();
          return sdk::Decision::no("session_probe: no engine for Relu in precision '" +
                                   (precision.empty() ? std::string("default") : precision) +
                                   "', only in fp16");
        })};
    if (session.option("fusion", "on") == "on")
      chain.push_back(sdk::OpPattern("Sigmoid").optional());
    setPattern(sdk::Pattern::chain("relu_chain", std::move(chain)));
  }
  sdk::FusedNode CreateSubgraphNode(const sdk::GraphView&, int) const override {
    sdk::FusedNode node = sdk::FusedNode::accept();
    node.attrs.push_back(sdk::Attr::String("planned_precision", precision_));
    return node;
  }

 private:
  std::string precision_;
};

/// Relu, then Sigmoid when the region holds one, on float32.
class ReluChainKernel final : public sdk::Kernel {
 public:
  ReluChainKernel(const sdk::NodeView& node, const sdk::KernelContext& context) {
    std::string planned = node.attrString("planned_precision", "?");
    if (planned != context.precision)
      throw sdk::Error("session_probe: region '" + node.name() + "' was planned for precision '" +
                       planned + "' but the session runs in '" + context.precision + "'");
    sigmoid_ = node.body() && node.body()->nodes().size() == 2;
  }
  void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
    const float* x = in[0].data<float>();
    float* y = out[0].data<float>();
    for (int64_t i = 0, n = in[0].numElements(); i < n; ++i) {
      float r = x[i] > 0.0f ? x[i] : 0.0f;
      y[i] = sigmoid_ ? 1.0f / (1.0f + std::exp(-r)) : r;
    }
  }

 private:
  bool sigmoid_ = false;
};

}  // namespace

SUBGRAPH_PLUGIN("session_probe", "1.0.0", "selection that depends on the session's precision") {
  plugin.addOption({.name = "engine",
                    .values = {"fp16", "any"},
                    .defaultValue = "fp16",
                    .doc = "fp16: Relu regions only in fp16 sessions; any: in every session"});
  plugin.addOption({.name = "fusion",
                    .values = {"on", "off"},
                    .defaultValue = "on",
                    .doc = "on: a Relu takes the Sigmoid that alone reads it"});
  plugin.setProperties([](const sdk::KernelContext& session) {
    std::vector<std::unique_ptr<sdk::SubgraphProperty>> out;
    out.push_back(std::make_unique<ReluChainProperty>(session));
    return out;
  });
  plugin.addKernel("subgraph.session_probe.relu_chain",
                   [](const sdk::NodeView& node, const sdk::KernelContext& context) {
                     return std::make_unique<ReluChainKernel>(node, context);
                   });
}
