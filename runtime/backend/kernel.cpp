//===- runtime/backend/kernel.cpp - Kernel context helpers ----------------===//
//
// Error construction shared by every kernel, so that all kernel failures read
// "<op> node '<name>': <what is wrong>".
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/kernel.h"

#include <exception>
#include <new>

namespace subgraph::runtime {

std::string nodeErrorPrefix(const Node* node) {
  if (!node) return "copy: ";
  return node->qualifiedOpType() + " node '" + node->displayName() + "': ";
}

Status runKernelGuarded(const Node* node, const std::function<Status()>& call) {
  try {
    return call();
  } catch (const Error& e) {
    return Status(e.code(), nodeErrorPrefix(node) + e.what());
  } catch (const std::bad_alloc&) {
    // Not a bug in the kernel: the machine (or a ulimit) has no memory
    // left for what the request asks of it.
    return Status(StatusCode::kLimitExceeded,
                  nodeErrorPrefix(node) + "out of memory: an allocation failed");
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, nodeErrorPrefix(node) + "kernel threw: " + e.what());
  } catch (...) {
    return Status(StatusCode::kInternal,
                  nodeErrorPrefix(node) + "kernel threw a non-standard exception");
  }
}

Status ResizeContext::fail(const std::string& message) const {
  return Status::invalid(nodeErrorPrefix(node_) + message);
}

Status RunContext::fail(const std::string& message) const {
  return Status::invalid(nodeErrorPrefix(node_) + message);
}

}  // namespace subgraph::runtime
