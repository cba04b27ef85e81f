//===- plugins/host/host_api.h - The host's side of the plugin C ABI ------===//
//
// Internal to subgraph::plugins. The C handles a plugin sees are the host's
// own objects behind opaque pointer types: an SgNode is a Node, an SgValue a
// Value, an SgGraph a Graph. SgMessage and SgFusedNode are small structs
// defined here. hostApi() is the one table every plugin gets.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/subgraph_property.h"
#include "subgraph/plugin_abi.h"

/// A message a plugin writes into (an error or a reason).
struct SgMessage {
  std::string text;
};

/// The fused node a property is describing, with the defaults it started
/// from.
struct SgFusedNode {
  subgraph::partition::FusedNode* node = nullptr;
  std::string defaultDomain;
  std::string defaultOp;
};

namespace subgraph::plugins::host {

/// The host table handed to every plugin.
const SgHostApi* hostApi();

/// Longest message kept from a plugin; the rest is cut, so a broken plugin
/// cannot flood the one-line error.
inline constexpr size_t kMaxMessageBytes = 4096;

inline const SgNode* toC(const Node* n) { return reinterpret_cast<const SgNode*>(n); }
inline const Node* fromC(const SgNode* n) { return reinterpret_cast<const Node*>(n); }
inline const SgValue* toC(const Value* v) { return reinterpret_cast<const SgValue*>(v); }
inline const Value* fromC(const SgValue* v) { return reinterpret_cast<const Value*>(v); }
inline const SgGraph* toC(const Graph* g) { return reinterpret_cast<const SgGraph*>(g); }
inline SgGraph* toMutableC(Graph* g) { return reinterpret_cast<SgGraph*>(g); }

/// The text of `message`, or `fallback` if the plugin left it empty.
std::string messageOr(const SgMessage& message, const std::string& fallback);

}  // namespace subgraph::plugins::host
