//===- core/passes/pass_util.h - Helpers shared by the passes ---*- C++ -*-===//
//
// Private to core/passes. Op counts: pass summaries say what was touched
// per op ("3 nodes: 2 Shape, 1 Gather"); OpCounter builds that text.
// (Outer-scope captures, which passes that delete or rename values must
// respect, are subgraph/ir/captures.h.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"

namespace subgraph::passes_detail {

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
