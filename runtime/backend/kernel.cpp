//===- runtime/backend/kernel.cpp - Kernel context helpers ----------------===//
//
// Error construction shared by every kernel, so that all kernel failures read
// "<op> node '<name>': <what is wrong>".
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/kernel.h"

namespace subgraph::runtime {

std::string nodeErrorPrefix(const Node* node) {
  if (!node) return "copy: ";
  return node->qualifiedOpType() + " node '" + node->displayName() + "': ";
}

Status ResizeContext::fail(const std::string& message) const {
  return Status::invalid(nodeErrorPrefix(node_) + message);
}

Status RunContext::fail(const std::string& message) const {
  return Status::invalid(nodeErrorPrefix(node_) + message);
}

}  // namespace subgraph::runtime
