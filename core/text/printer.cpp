//===- core/text/printer.cpp - Graph to text -------------------------------===//
//
// Prints a Graph in the text format described in docs/text-format.md. The
// output is canonical so that print(parse(print(g))) == print(g):
//  * constants come first: those that are also graph inputs in input order,
//    then the rest in value-id order (the parser recreates exactly that);
//  * nodes follow in the graph's topological order, whose ties break by node
//    id, so reparsed node ids reproduce the same order; a cyclic graph is
//    printed in id order, which the parser also preserves;
//  * every number is spelled so that it parses back to the same bits.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <ostream>
#include <span>
#include <sstream>
#include <type_traits>

#include "external_data.h"
#include "subgraph/ir/text_format.h"
#include "syntax.h"

namespace subgraph {
namespace {

using text::quoteString;
using text::sigilName;

// Constants with more elements than this are cut to this many when the
// caller asked for elision; enough to recognise the data at a glance.
constexpr int64_t kElidedPreviewElements = 4;

// A null subgraph attribute cannot be written; an empty, unnamed graph is the
// closest parseable stand-in and keeps the attribute's kind.
const Graph& nullGraphStandIn() {
  static const Graph* empty = new Graph("");
  return *empty;
}

class GraphPrinter {
 public:
  GraphPrinter(std::ostream& os, const PrintOptions& options) : os_(os), options_(options) {}

  /// Prints `graph @name(...) {...}`; the opening line continues the
  /// current one and the body is indented one level deeper than `indent`.
  void printGraph(const Graph& graph, int indent);
  /// Prints one node without leading indentation or trailing newline.
  void printNode(const Node& node, int indent);

 private:
  void newline(int indent) {
    os_ << '\n';
    for (int i = 0; i < indent; ++i) os_ << "  ";
  }
  void printType(const TensorType& type);
  void printDims(const Shape& shape);
  void printTensor(const Tensor& tensor);
  void printElement(const Tensor& tensor, int64_t index);
  bool isSplat(const Tensor& tensor) const;
  void printAttrValue(const AttrValue& value, int indent);
  void printOpName(const Node& node);

  bool printExternal(const Tensor& tensor);

  std::ostream& os_;
  const PrintOptions& options_;
  // Bytes written to options_.externalData so far.
  uint64_t externalOffset_ = 0;
};

void GraphPrinter::printDims(const Shape& shape) { os_ << text::shapeText(shape); }

void GraphPrinter::printType(const TensorType& type) {
  if (type.dtype == DataType::kUndefined)
    os_ << '?';
  else
    os_ << dataTypeName(type.dtype);
  if (type.shape) printDims(*type.shape);
}

bool GraphPrinter::isSplat(const Tensor& tensor) const {
  int64_t n = tensor.numElements();
  if (n < 2) return false;
  if (tensor.dtype() == DataType::kString) {
    const auto& s = tensor.strings();
    for (int64_t i = 1; i < n; ++i)
      if (s[static_cast<size_t>(i)] != s[0]) return false;
    return true;
  }
  // Bitwise comparison: NaN payloads and -0.0 must not be merged into a
  // splat of a different value.
  auto bytes = tensor.bytes();
  size_t width = dataTypeSize(tensor.dtype());
  for (size_t off = width; off < bytes.size(); off += width)
    if (std::memcmp(bytes.data(), bytes.data() + off, width) != 0) return false;
  return true;
}

template <typename T>
T loadElement(const Tensor& tensor, int64_t index) {
  T value;
  std::memcpy(&value, tensor.bytes().data() + static_cast<size_t>(index) * sizeof(T), sizeof(T));
  return value;
}

void GraphPrinter::printElement(const Tensor& tensor, int64_t index) {
  switch (tensor.dtype()) {
    case DataType::kFloat32: os_ << text::formatF32(loadElement<float>(tensor, index)); break;
    case DataType::kFloat64: os_ << text::formatF64(loadElement<double>(tensor, index)); break;
    case DataType::kFloat16: os_ << text::formatF16(loadElement<uint16_t>(tensor, index)); break;
    case DataType::kBFloat16: os_ << text::formatBF16(loadElement<uint16_t>(tensor, index)); break;
    case DataType::kInt8: os_ << static_cast<int>(loadElement<int8_t>(tensor, index)); break;
    case DataType::kUInt8: os_ << static_cast<int>(loadElement<uint8_t>(tensor, index)); break;
    case DataType::kInt16: os_ << loadElement<int16_t>(tensor, index); break;
    case DataType::kUInt16: os_ << loadElement<uint16_t>(tensor, index); break;
    case DataType::kInt32: os_ << loadElement<int32_t>(tensor, index); break;
    case DataType::kUInt32: os_ << loadElement<uint32_t>(tensor, index); break;
    case DataType::kInt64: os_ << loadElement<int64_t>(tensor, index); break;
    case DataType::kUInt64: os_ << loadElement<uint64_t>(tensor, index); break;
    case DataType::kBool: {
      // A byte other than 0/1 is printed as its number so it survives.
      auto byte = loadElement<uint8_t>(tensor, index);
      if (byte <= 1)
        os_ << (byte ? "true" : "false");
      else
        os_ << static_cast<int>(byte);
      break;
    }
    case DataType::kString: os_ << quoteString(tensor.strings()[static_cast<size_t>(index)]); break;
    case DataType::kUndefined: os_ << '?'; break;
  }
}

void GraphPrinter::printTensor(const Tensor& tensor) {
  os_ << dataTypeName(tensor.dtype());
  printDims(Shape(tensor.dims().begin(), tensor.dims().end()));
  os_ << ' ';
  if (isSplat(tensor)) {
    os_ << "splat(";
    printElement(tensor, 0);
    os_ << ')';
    return;
  }
  if (printExternal(tensor)) return;
  int64_t n = tensor.numElements();
  bool elide =
      options_.elideConstantsOver != 0 && n > static_cast<int64_t>(options_.elideConstantsOver);
  int64_t shown = elide ? std::min<int64_t>(n, kElidedPreviewElements) : n;
  os_ << '[';
  for (int64_t i = 0; i < shown; ++i) {
    if (i) os_ << ", ";
    printElement(tensor, i);
  }
  if (elide) os_ << (shown ? ", ..." : "...");
  os_ << ']';
}

// Appends a large constant to the external data stream and prints its
// reference; false (printing nothing) where it stays inline.
bool GraphPrinter::printExternal(const Tensor& tensor) {
  if (!options_.externalData || tensor.dtype() == DataType::kString) return false;
  std::span<const std::byte> bytes = tensor.bytes();
  if (bytes.size() < options_.externalDataMinBytes || bytes.empty()) return false;
  static constexpr char kZeros[text::kExternalDataAlignment] = {};
  uint64_t pad = (text::kExternalDataAlignment - externalOffset_ % text::kExternalDataAlignment) %
                 text::kExternalDataAlignment;
  options_.externalData->write(kZeros, static_cast<std::streamsize>(pad));
  externalOffset_ += pad;
  options_.externalData->write(reinterpret_cast<const char*>(bytes.data()),
                               static_cast<std::streamsize>(bytes.size()));
  os_ << "external(" << quoteString(options_.externalDataLocation) << ", " << externalOffset_
      << ", " << bytes.size() << ')';
  externalOffset_ += bytes.size();
  return true;
}

template <typename T, typename Fn>
void printList(std::ostream& os, const std::vector<T>& items, std::string_view emptyKeyword,
               Fn each) {
  if (items.empty()) {
    os << emptyKeyword << "[]";
    return;
  }
  os << '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) os << ", ";
    each(items[i]);
  }
  os << ']';
}

void GraphPrinter::printAttrValue(const AttrValue& value, int indent) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          os_ << v;
        } else if constexpr (std::is_same_v<T, float>) {
          os_ << text::formatF32(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          os_ << quoteString(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          printList(os_, v, "ints", [&](int64_t x) { os_ << x; });
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          printList(os_, v, "floats", [&](float x) { os_ << text::formatF32(x); });
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          printList(os_, v, "strings", [&](const std::string& x) { os_ << quoteString(x); });
        } else if constexpr (std::is_same_v<T, Tensor>) {
          printTensor(v);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Graph>>) {
          printGraph(v ? *v : nullGraphStandIn(), indent);
        } else {
          printList(os_, v, "graphs", [&](const std::shared_ptr<Graph>& g) {
            printGraph(g ? *g : nullGraphStandIn(), indent);
          });
        }
      },
      value);
}

void GraphPrinter::printOpName(const Node& node) {
  std::string qualified = node.qualifiedOpType();
  bool bare = text::isBareDottedIdentifier(qualified) &&
              (node.domain().empty() || text::isBareDottedIdentifier(node.domain()));
  os_ << (bare ? qualified : quoteString(qualified));
}

void GraphPrinter::printNode(const Node& node, int indent) {
  auto outputs = node.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i) os_ << ", ";
    os_ << sigilName('%', outputs[i]->name());
    if (options_.printTypes && !outputs[i]->type().isUnknown()) {
      os_ << ": ";
      printType(outputs[i]->type());
    }
  }
  if (!outputs.empty()) os_ << " = ";
  printOpName(node);
  os_ << '(';
  auto inputs = node.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) os_ << ", ";
    os_ << (inputs[i] ? sigilName('%', inputs[i]->name()) : "_");
  }
  os_ << ')';
  auto attrs = node.attributes();
  if (!attrs.empty()) {
    os_ << " {";
    for (size_t i = 0; i < attrs.size(); ++i) {
      if (i) os_ << ", ";
      const std::string& name = attrs[i].name();
      os_ << (text::isBareIdentifier(name) ? name : quoteString(name)) << " = ";
      printAttrValue(attrs[i].value(), indent);
    }
    os_ << '}';
  }
  if (!node.name().empty()) os_ << ' ' << sigilName('@', node.name());
}

// The order in which constants are printed; see the file comment.
std::vector<Value*> constantsInPrintOrder(const Graph& graph) {
  std::vector<Value*> order;
  for (Value* in : graph.inputs())
    if (in->isInitializer()) order.push_back(in);
  for (Value* v : graph.initializers())
    if (!v->isGraphInput()) order.push_back(v);
  return order;
}

void GraphPrinter::printGraph(const Graph& graph, int indent) {
  os_ << "graph " << sigilName('@', graph.name()) << '(';
  auto inputs = graph.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) os_ << ", ";
    os_ << sigilName('%', inputs[i]->name());
    if (!inputs[i]->type().isUnknown()) {
      os_ << ": ";
      printType(inputs[i]->type());
    }
  }
  os_ << ')';
  if (!graph.opsetImports().empty()) {
    os_ << " opset(";
    bool first = true;
    for (const auto& [domain, version] : graph.opsetImports()) {
      if (!first) os_ << ", ";
      first = false;
      // The default domain is spelled by its ONNX name, which the parser
      // maps back to "".
      std::string_view spelled = domain.empty() ? std::string_view("ai.onnx") : domain;
      os_ << (text::isBareDottedIdentifier(spelled) ? std::string(spelled) : quoteString(spelled))
          << " = " << version;
    }
    os_ << ')';
  }
  os_ << " {";
  for (Value* c : constantsInPrintOrder(graph)) {
    newline(indent + 1);
    os_ << sigilName('%', c->name()) << " = const ";
    printTensor(*c->initializer());
  }
  auto order = graph.topologicalOrder();
  std::vector<Node*> nodes;
  if (order.isOk())
    nodes = std::move(order.value());
  else
    for (Node* n : graph.nodes()) nodes.push_back(n);
  for (Node* n : nodes) {
    newline(indent + 1);
    printNode(*n, indent + 1);
  }
  newline(indent + 1);
  os_ << "return";
  auto outputs = graph.outputs();
  for (size_t i = 0; i < outputs.size(); ++i)
    os_ << (i ? ", " : " ") << (outputs[i] ? sigilName('%', outputs[i]->name()) : "_");
  newline(indent);
  os_ << '}';
}

}  // namespace

void printGraph(const Graph& graph, std::ostream& os, const PrintOptions& options) {
  GraphPrinter printer(os, options);
  printer.printGraph(graph, 0);
  os << '\n';
}

std::string printGraph(const Graph& graph, const PrintOptions& options) {
  std::ostringstream os;
  printGraph(graph, os, options);
  return os.str();
}

std::string printNode(const Node& node, const PrintOptions& options) {
  std::ostringstream os;
  GraphPrinter printer(os, options);
  printer.printNode(node, 0);
  return os.str();
}

}  // namespace subgraph
