//===- subgraph/ir/verifier.h - Structural and schema checks ----*- C++ -*-===//
//
// verify() decides whether a Graph is well formed, and when it is not, says
// why in one line that names the node (op type and name, or #id) and the
// value involved. Passes run it in tests and debug builds; importers and the
// CLI run it on every graph they load.
//
// What is checked, in this order, for the graph and then (recursively) for
// every graph held in a node attribute (If/Loop bodies):
//  1. Links: every node input, node output, use, graph input and graph
//     output points at a live object of this graph; use lists match node
//     inputs exactly (internal invariants; code kInternal). Value-name
//     uniqueness is not re-checked: Graph refuses duplicates on insertion.
//  2. Definitions: every value read by a node or returned by the graph has a
//     producer, is a graph input or is a constant; no value has two
//     producers; no graph input or constant is also computed by a node. In a
//     body graph, a value with none of these is fine when an enclosing graph
//     defines a value of the same name (outer-scope capture, as in ONNX).
//  3. Acyclicity, naming the nodes of a cycle.
//  4. Schemas (from OpSchema): unknown ops, input/output counts (optional
//     and variadic operands respected), missing required inputs, missing,
//     unknown or mistyped attributes, element types outside a type
//     constraint, operands sharing a constraint with different element
//     types, and finally the op's own VerifyFn.
// A later step is skipped for a graph whose links are broken, since walking
// broken links could read freed memory. The verifier never throws on a bad
// graph and never dereferences a pointer it has not first found in the
// graph's tables.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// Knobs for verify() and verifyAll().
struct VerifyOptions {
  /// Accept nodes whose op has no registered schema (their arity and
  /// attributes are then not checked). Off by default: an unknown op is
  /// usually a typo or a plugin that was not loaded.
  bool allowUnknownOps = false;
  /// Accept attributes the op's schema does not define.
  bool allowUnknownAttributes = false;
  /// Run step 4 (schema checks). Turn off to check only the graph's shape,
  /// e.g. in the middle of a rewrite that has not set attributes yet.
  bool checkSchemas = true;
  /// Also verify graphs held in node attributes.
  bool recurseIntoSubgraphs = true;
};

/// Returns OK, or the first problem found (see the file comment for the
/// order). Problems inside a body graph are prefixed with the path to it,
/// e.g. "in If node 'cond' attribute 'then_branch': ...".
Status verify(const Graph& graph, const VerifyOptions& options = {});

/// Returns every problem found, in the same order verify() would meet them;
/// empty when the graph is valid. For tools that report all problems at
/// once (the CLI's `verify` command).
std::vector<Status> verifyAll(const Graph& graph, const VerifyOptions& options = {});

}  // namespace subgraph
