//===- subgraph/subgraph_selector.cpp - Node views and the V1 adapter -----===//
//
// NodeView's neighbourhood queries, and the adapter that lets the
// partitioner drive a plain SubgraphSelector through the V2 interface (the
// partitioner has a single code path, as MXNet's has since V2).
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "subgraph/partition/subgraph_selector.h"

namespace subgraph::partition {
namespace {

void appendDistinct(std::vector<const Node*>& list, const Node* node) {
  if (std::find(list.begin(), list.end(), node) == list.end()) list.push_back(node);
}

class SelectorV1Adapter final : public SubgraphSelectorV2 {
 public:
  explicit SelectorV1Adapter(std::unique_ptr<SubgraphSelector> selector)
      : selector_(std::move(selector)) {}

  Decision Select(const NodeView& node) override { return selector_->Select(node.node()); }
  Decision SelectInput(const NodeView& node, const NodeView& producer) override {
    return selector_->SelectInput(node.node(), producer.node());
  }
  Decision SelectOutput(const NodeView& node, const NodeView& consumer) override {
    return selector_->SelectOutput(node.node(), consumer.node());
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    return selector_->Filter(candidates);
  }
  std::string FilterReason(const Node& node) const override {
    return selector_->FilterReason(node);
  }
  void Reset() override { selector_->Reset(); }

 private:
  std::unique_ptr<SubgraphSelector> selector_;
};

}  // namespace

std::vector<const Node*> NodeView::consumers() const {
  std::vector<const Node*> result;
  for (Value* out : node_->outputs()) {
    if (out->producer() != node_) continue;
    for (const Use& use : out->uses()) appendDistinct(result, use.user);
  }
  return result;
}

std::vector<const Node*> NodeView::producers() const {
  std::vector<const Node*> result;
  for (Value* in : node_->inputs())
    if (in && in->producer()) appendDistinct(result, in->producer());
  return result;
}

bool NodeView::feedsGraphOutput() const {
  for (Value* out : node_->outputs())
    if (out->isGraphOutput()) return true;
  return false;
}

std::unique_ptr<SubgraphSelectorV2> adaptSelector(std::unique_ptr<SubgraphSelector> selector) {
  if (!selector) return nullptr;
  return std::make_unique<SelectorV1Adapter>(std::move(selector));
}

}  // namespace subgraph::partition
