//===- subgraph/passes/pass.h - The graph pass interface --------*- C++ -*-===//
//
// A Pass rewrites a Graph in place and says whether it changed anything, so
// that a PassManager can run a pipeline to a fixed point and report what each
// pass did. Concrete passes live in core/passes/, one per file, inside an
// anonymous namespace; each file exports only a create...Pass() factory
// declared in its own header, and takes its options as constructor
// arguments.
//
// Contract every pass keeps:
//  * run() leaves the graph consistent (the verifier accepts it if it
//    accepted the input) even when it returns an error;
//  * graph input and output names and order never change;
//  * nested graphs held in node attributes (If/Loop bodies) are shared and
//    immutable once attached, so passes only rewrite the top-level graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// A graph-to-graph rewrite.
class Pass {
 public:
  virtual ~Pass() = default;

  /// Short, stable, kebab-case name ("constant-folding") used by
  /// `--passes`, reports and createPassByName().
  virtual std::string_view name() const = 0;
  /// One sentence saying what the pass does, for `--help` and docs.
  virtual std::string_view description() const = 0;

  /// Rewrites `graph` in place. Returns true if anything changed, false if
  /// the graph is exactly as before, or an error naming the node involved.
  virtual StatusOr<bool> run(Graph& graph) = 0;

  /// What the last run() did, in words ("folded 12 nodes: 4 Shape, 8
  /// Gather"); empty when it did nothing. Reports show it next to the name.
  virtual std::string lastRunSummary() const { return {}; }
  /// Whether a PassManager may run this pass over nested graphs (If
  /// branches, Loop bodies), whose reads of enclosing values by name are
  /// values without a producer or a type.
  virtual bool appliesToNestedGraphs() const { return true; }
};

}  // namespace subgraph
