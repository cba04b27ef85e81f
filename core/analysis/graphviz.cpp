//===- core/analysis/graphviz.cpp - DOT rendering of graphs ---------------===//
//
// Hand-written DOT (see the header for why not boost::write_graphviz). DOT
// identifiers are generated ("n<node id>", "v<value id>", "out<k>") so that
// only labels carry user text, and every label goes through
// escapeDotString().
//
//===----------------------------------------------------------------------===//
#include "subgraph/analysis/graphviz.h"

#include <array>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace subgraph {
namespace {

std::string quoted(std::string_view text) { return "\"" + escapeDotString(text) + "\""; }

std::string nodeDotId(const Node& node) { return "n" + std::to_string(node.id()); }
std::string valueDotId(const Value& value) { return "v" + std::to_string(value.id()); }

// The DOT id an edge carrying `value` starts from: its producer, or the
// value's own input/constant/dangling node.
std::string sourceDotId(const Value& value) {
  return value.producer() ? nodeDotId(*value.producer()) : valueDotId(value);
}

std::string valueLabel(const Value& value, const DotOptions& options) {
  std::string label = value.name();
  if (options.showTypes && !value.type().isUnknown()) label += "\n" + value.type().toString();
  return label;
}

// Constants hidden by showConstants=false are not drawn, nor are edges
// leaving them (graph inputs with a default are inputs first).
bool isHiddenConstant(const Value& value, const DotOptions& options) {
  return !options.showConstants && value.isInitializer() && !value.isGraphInput() &&
         !value.producer();
}

class DotWriter {
 public:
  DotWriter(const Graph& graph, std::ostream& os, const DotOptions& options)
      : graph_(graph), os_(os), options_(options) {}

  void write() {
    os_ << "digraph " << quoted(graph_.name()) << " {\n";
    os_ << "  rankdir=" << quoted(options_.rankdir) << ";\n";
    os_ << "  graph [fontname=\"Helvetica\", fontsize=11];\n";
    os_ << "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
           "fillcolor=\"white\"];\n";
    os_ << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    writeValueNodes();
    writeOpNodes();
    writeOutputNodes();
    writeEdges();
    os_ << "}\n";
  }

 private:
  // Values without a producer that need a node of their own: every graph
  // input, and any other such value that a drawn edge starts from.
  std::set<ValueId> valuesToDraw() const {
    std::set<ValueId> ids;
    for (Value* v : graph_.inputs()) ids.insert(v->id());
    for (Node* n : graph_.nodes())
      for (Value* v : n->inputs())
        if (v && !v->producer() && !isHiddenConstant(*v, options_)) ids.insert(v->id());
    for (Value* v : graph_.outputs())
      if (v && !v->producer()) ids.insert(v->id());
    return ids;
  }

  void writeValueNodes() {
    for (ValueId id : valuesToDraw()) {
      const Value& v = *graph_.value(id);
      std::string attrs;
      if (v.isGraphInput())
        attrs = "shape=invhouse, style=filled, fillcolor=\"#d9f0d3\"";
      else if (v.isInitializer())
        attrs = "shape=note, style=filled, fillcolor=\"#f0f0f0\", fontsize=8";
      else
        attrs = "shape=ellipse, style=dashed, color=\"red\"";
      std::string label = valueLabel(v, options_);
      if (!v.isGraphInput() && !v.isInitializer()) label += "\n(dangling)";
      os_ << "  " << valueDotId(v) << " [label=" << quoted(label) << ", " << attrs << "];\n";
    }
  }

  void writeOpNode(const Node& n, const char* indent) {
    std::string label = n.qualifiedOpType() + "\n" + n.displayName();
    // Bodies are not drawn; say at least that they exist and how big they
    // are, so an If or Loop does not look like a plain op.
    for (const Attribute& attr : n.attributes()) {
      if (attr.kind() == AttrKind::kGraph && attr.asGraph()) {
        size_t count = attr.asGraph()->numNodes();
        label +=
            "\n" + attr.name() + ": " + std::to_string(count) + (count == 1 ? " node" : " nodes");
      } else if (attr.kind() == AttrKind::kGraphs) {
        label += "\n" + attr.name() + ": " + std::to_string(attr.asGraphs().size()) + " graphs";
      }
    }
    if (auto note = options_.notes.find(n.id()); note != options_.notes.end())
      label += "\n" + note->second;
    os_ << indent << nodeDotId(n) << " [label=" << quoted(label) << "];\n";
  }

  void writeOpNodes() {
    // Cluster id -> its nodes in id order; the first one supplies label and
    // colour.
    std::map<int, std::vector<const Node*>> clustered;
    for (Node* n : graph_.nodes()) {
      auto it = options_.clusters.find(n->id());
      if (it == options_.clusters.end())
        writeOpNode(*n, "  ");
      else
        clustered[it->second.id].push_back(n);
    }
    for (const auto& [clusterId, members] : clustered) {
      const DotCluster& cluster = options_.clusters.at(members.front()->id());
      // DOT ids cannot contain '-'; a negative cluster id gets an 'm'.
      std::string idText = std::to_string(clusterId);
      if (idText[0] == '-') idText[0] = 'm';
      os_ << "  subgraph cluster_" << idText << " {\n";
      os_ << "    label=" << quoted(cluster.label) << ";\n";
      if (cluster.color.empty())
        os_ << "    style=\"rounded\";\n    color=\"black\";\n";
      else
        os_ << "    style=\"rounded,filled\";\n    fillcolor=" << quoted(cluster.color)
            << ";\n    color=\"gray30\";\n";
      for (const Node* n : members) writeOpNode(*n, "    ");
      os_ << "  }\n";
    }
  }

  void writeOutputNodes() {
    for (size_t k = 0; k < graph_.outputs().size(); ++k) {
      const Value* v = graph_.outputs()[k];
      std::string label = v ? v->name() : "(null output)";
      os_ << "  out" << k << " [label=" << quoted(label)
          << ", shape=house, style=filled, fillcolor=\"#fde0dd\"];\n";
    }
  }

  void writeEdge(const std::string& from, const std::string& to, const Value& v) {
    os_ << "  " << from << " -> " << to << " [label=" << quoted(valueLabel(v, options_)) << "];\n";
  }

  void writeEdges() {
    for (Node* n : graph_.nodes())
      for (Value* v : n->inputs())
        if (v && !isHiddenConstant(*v, options_)) writeEdge(sourceDotId(*v), nodeDotId(*n), *v);
    for (size_t k = 0; k < graph_.outputs().size(); ++k)
      if (const Value* v = graph_.outputs()[k])
        writeEdge(sourceDotId(*v), "out" + std::to_string(k), *v);
  }

  const Graph& graph_;
  std::ostream& os_;
  const DotOptions& options_;
};

}  // namespace

std::string escapeDotString(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        // Other control characters (tabs, CR, escape codes) would corrupt
        // the layout or the file; names never need them.
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
    }
  }
  return out;
}

std::string dotPaletteColor(size_t index) {
  // ColorBrewer "Set3": light, mutually distinct, and dark text stays
  // readable on every entry.
  static constexpr std::array<const char*, 12> kPalette = {
      "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
      "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  return kPalette[index % kPalette.size()];
}

void writeDot(const Graph& graph, std::ostream& os, const DotOptions& options) {
  DotWriter(graph, os, options).write();
}

std::string toDot(const Graph& graph, const DotOptions& options) {
  std::ostringstream os;
  writeDot(graph, os, options);
  return os.str();
}

}  // namespace subgraph
