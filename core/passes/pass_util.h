//===- core/passes/pass_util.h - Helpers shared by the passes ---*- C++ -*-===//
//
// Private to core/passes. Two things several passes need:
//
// Outer-scope captures. A nested graph (an If/Loop body held in a node attribute) reads values of
// the enclosing graph by name, as in ONNX: a body value with no producer that
// is neither a body input nor a constant stands for the outer value of the
// same name. Passes that delete or rename top-level values must respect these
// invisible uses; capturedNames() finds them.
//
// Op counts. Pass summaries say what was touched per op ("3 nodes: 2 Shape,
// 1 Gather"); OpCounter builds that text.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>
#include <unordered_set>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"

namespace subgraph::passes_detail {

/// Names that the graphs held in `node`'s attributes (recursively) read from
/// enclosing scopes.
std::unordered_set<std::string> capturedNames(const Node& node);

/// capturedNames() of every node of `graph`; empty for the common graph
/// without control flow, which is checked first so the scan stays cheap.
std::unordered_set<std::string> capturedNames(const Graph& graph);

/// Counts nodes per op type for a pass summary.
class OpCounter {
 public:
  /// Counts one node of `opType`.
  void add(const std::string& opType) {
    ++counts_[opType];
    ++total_;
  }
  /// Number of nodes counted.
  size_t total() const { return total_; }
  /// "3 nodes (2 Shape, 1 Gather)", ops by descending count then name;
  /// "1 node (Relu)" for one.
  std::string describe() const;

 private:
  std::map<std::string, size_t> counts_;
  size_t total_ = 0;
};

}  // namespace subgraph::passes_detail
