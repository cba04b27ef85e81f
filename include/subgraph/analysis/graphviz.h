//===- subgraph/analysis/graphviz.h - DOT rendering of graphs ---*- C++ -*-===//
//
// Writes a Graph as Graphviz DOT for humans: `subgraph partition --dot`,
// debugging dumps and bug reports. Nodes are boxes labelled with op type and
// name; graph inputs, graph outputs and constants get their own shapes;
// edges carry the value name and type. Callers (the partitioner) may group
// nodes into coloured, labelled clusters, one `subgraph cluster_<id>` per
// region.
//
// The DOT is written by hand rather than with boost::write_graphviz because
// Boost's writer cannot emit clusters for a graph that is not a
// boost::subgraph<adjacency_list>, and clusters are the point of the
// partitioner's picture. (boost::write_graphviz still runs on the IR through
// subgraph/analysis/graph_traits.h when plain output is enough.)
//
// Output is deterministic: nodes and values appear in id order, clusters in
// cluster-id order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "subgraph/ir/graph.h"

namespace subgraph {

/// Which cluster a node is drawn in.
struct DotCluster {
  /// Nodes with the same id share one `subgraph cluster_<id>` box.
  int id = 0;
  /// Caption of the box, e.g. "region 2: onednn". The first node (lowest
  /// node id) of a cluster decides its label and colour.
  std::string label;
  /// Fill colour of the box: a Graphviz colour name ("lightblue") or
  /// "#rrggbb". Empty: no fill, black frame.
  std::string color;
};

/// Knobs for writeDot().
struct DotOptions {
  /// Draw initializers as separate nodes with edges to their users. Off
  /// declutters graphs with many weights; the nodes then simply have fewer
  /// incoming edges.
  bool showConstants = true;
  /// Add the value type ("f32[1, 64, 56, 56]") to edge labels.
  bool showTypes = true;
  /// Lay the graph out top to bottom ("TB") or left to right ("LR").
  std::string rankdir = "TB";
  /// Node id -> cluster. Nodes not listed are drawn outside any cluster.
  std::map<NodeId, DotCluster> clusters = {};
  /// Node id -> an extra label line (e.g. the reason a node was not
  /// fused); escaped like every other label.
  std::map<NodeId, std::string> notes = {};
};

/// Writes `graph` as a DOT digraph. Never throws on a well-formed graph;
/// values without a producer that are neither inputs nor constants (a
/// graph verify() would reject) are drawn as dashed "dangling" ellipses so
/// that broken graphs can still be looked at.
void writeDot(const Graph& graph, std::ostream& os, const DotOptions& options = {});

/// writeDot() into a string.
std::string toDot(const Graph& graph, const DotOptions& options = {});

/// Escapes text for a double-quoted DOT string: quotes and backslashes are
/// escaped, newlines become "\n" line breaks, other control characters are
/// dropped.
std::string escapeDotString(std::string_view text);

/// A light colour from a fixed palette, cycling, so that consecutive
/// clusters (regions) are easy to tell apart; returns "#rrggbb".
std::string dotPaletteColor(size_t index);

}  // namespace subgraph
