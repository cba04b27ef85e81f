//===- subgraph/subgraph_property.cpp - Default property behaviour --------===//
//
// The defaults a property inherits: the V1-to-V2 selector bridge, the
// default fused node (an op in the backend's `subgraph.<backend>` domain
// carrying the region body as graph attribute "body", the convention the
// ONNX exporter relies on), and helpers for hooks that reorder the fused
// node's connections together with the body's.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/subgraph_property.h"

#include <algorithm>

#include "subgraph/partition/fused_name.h"

namespace subgraph::partition {
namespace {

Status checkPermutation(std::span<const size_t> order, size_t size, const char* what) {
  if (order.size() != size)
    return Status::invalid(std::string("permutation of body ") + what + " has " +
                           std::to_string(order.size()) + " entries, expected " +
                           std::to_string(size));
  std::vector<char> seen(size, 0);
  for (size_t k : order) {
    if (k >= size || seen[k])
      return Status::invalid(std::string("permutation of body ") + what +
                             " is not a permutation: bad or repeated index " + std::to_string(k));
    seen[k] = 1;
  }
  return Status::ok();
}

}  // namespace

std::unique_ptr<SubgraphSelectorV2> SubgraphProperty::CreateSubgraphSelectorV2() const {
  return adaptSelector(CreateSubgraphSelector());
}

SubgraphNodeResult SubgraphProperty::CreateSubgraphNode(std::shared_ptr<Graph> subgraph,
                                                        const RegionInfo& region) const {
  return defaultFusedNode(std::move(subgraph), region);
}

FusedNode defaultFusedNode(std::shared_ptr<Graph> subgraph, const RegionInfo& region) {
  FusedNode node;
  // Interning locks the registry and hashes a key; a pass asks for the
  // same (backend, property) once per region, so remember the last one.
  thread_local std::string lastBackend, lastProperty;
  thread_local const OpKey* lastKey = nullptr;
  if (!lastKey || lastBackend != region.backend || lastProperty != region.property) {
    lastKey = OpRegistry::global().intern(fusedDomain(region.backend), region.property);
    lastBackend = region.backend;
    lastProperty = region.property;
  }
  node.op = lastKey;
  node.name = fusedNodeName(region.backend, region.property, region.id);
  node.attrs.emplace_back("body", std::move(subgraph));
  return node;
}

Status permuteBodyInputs(Graph& body, std::vector<Value*>& inputs, std::span<const size_t> order) {
  if (inputs.size() != body.inputs().size())
    return Status::invalid("body '" + body.name() + "' has " +
                           std::to_string(body.inputs().size()) + " inputs but " +
                           std::to_string(inputs.size()) + " outer values were given");
  SUBGRAPH_RETURN_IF_ERROR(checkPermutation(order, inputs.size(), "inputs"));
  std::vector<Value*> oldBody(body.inputs().begin(), body.inputs().end());
  std::vector<Value*> oldOuter = inputs;
  for (Value* v : oldBody) body.removeInput(v);
  for (size_t k = 0; k < order.size(); ++k) {
    body.appendInput(oldBody[order[k]]);
    inputs[k] = oldOuter[order[k]];
  }
  return Status::ok();
}

Status permuteBodyOutputs(Graph& body, std::vector<Value*>& outputs,
                          std::span<const size_t> order) {
  if (outputs.size() != body.outputs().size())
    return Status::invalid("body '" + body.name() + "' has " +
                           std::to_string(body.outputs().size()) + " outputs but " +
                           std::to_string(outputs.size()) + " outer values were given");
  SUBGRAPH_RETURN_IF_ERROR(checkPermutation(order, outputs.size(), "outputs"));
  std::vector<Value*> oldBody(body.outputs().begin(), body.outputs().end());
  std::vector<Value*> oldOuter = outputs;
  for (size_t k = 0; k < order.size(); ++k) {
    body.setOutput(k, oldBody[order[k]]);
    outputs[k] = oldOuter[order[k]];
  }
  return Status::ok();
}

}  // namespace subgraph::partition
