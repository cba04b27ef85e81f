//===- core/onnx/onnx_import.cpp - Reading ONNX models --------------------===//
//
// Methodology:
//  1. Read the file (size checked against maxModelBytes before reading) and
//     parse it; a parse that does not consume every byte is an error.
//  2. Walk every node of the model, nested subgraphs and local functions
//     included, before building anything: count nodes against maxNodes,
//     check nesting depth against maxSubgraphDepth, and check that each op
//     has a schema or a local function. An unknown op is thus reported as
//     such even when the model would fail later for another reason.
//  3. Build each graph in five steps: initializers, inputs, every node
//     output (so duplicate definitions are caught and nodes may appear in
//     any order), value_info types, then nodes with their attributes, then
//     outputs. Subgraph attributes are built recursively in step 5 with the
//     enclosing graphs as their scope.
//  4. Apply ImportOptions::inputShapes and run shape inference if asked.
//
// Outer-scope references: an If/Loop body may read a value of an enclosing
// graph by name. The nested Graph gets a value of that name and type that
// has no producer, is not an input and carries no data (a "free" value); the
// exporter writes it back as the same outer-scope reference.
//
// Initializers that are also listed as graph inputs (IR version 3 and older
// exporters) are imported as constants and removed from the input list, as
// ONNX Runtime does for IR < 4: subgraph optimizes for inference, where these
// weights are never fed, and folding and fusion need to see them as constant.
//
// Local functions (ModelProto.functions): a node calling one becomes a node
// of that (domain, op) with the function body attached as a graph attribute
// named "body", the inverse of how fused regions are exported.
//
//===----------------------------------------------------------------------===//
#include "subgraph/onnx/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include "subgraph/ir/shape_inference.h"
#include "subgraph/support/file_io.h"
#include "tensor_proto.h"

namespace subgraph {
namespace {

using namespace onnx_io;

std::string str(std::string_view s) { return std::string(s); }

// "node 'conv1'" or, for unnamed nodes, "node #3 (output 'y')".
std::string describeNode(const ::onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return "node '" + node.name() + "'";
  std::string text = "node #" + std::to_string(index);
  if (node.output_size() > 0 && !node.output(0).empty())
    text += " (output '" + node.output(0) + "')";
  return text;
}

std::string displayDomain(std::string_view domain) {
  return domain.empty() ? "ai.onnx" : str(domain);
}

// One graph under construction and the graphs enclosing it, innermost first.
struct Scope {
  Graph* graph = nullptr;
  const Scope* parent = nullptr;
  /// Local functions are self-contained: they may not read outer values.
  bool isFunction = false;
};

class ModelImporter {
 public:
  ModelImporter(const ImportOptions& options, std::string source)
      : options_(options), source_(std::move(source)) {
    tensorOptions_.maxTensorBytes = options.maxTensorBytes;
    tensorOptions_.maxDimSize = options.maxDimSize;
    tensorOptions_.externalDataDir = options.externalDataDir;
  }

  /// Imports `model`. Initializer data of the main graph is released from
  /// the proto as it is converted, so a large model is not held twice.
  StatusOr<std::unique_ptr<Graph>> run(::onnx::ModelProto& model);

 private:
  Status readOpsets(const ::onnx::ModelProto& model);
  Status checkGraphOps(const ::onnx::GraphProto& graph, int depth);
  Status checkNodeOps(const ::onnx::NodeProto& node, int index, int depth);
  Status importGraph(const ::onnx::GraphProto& proto, Graph& graph, const Scope* parent,
                     bool isFunction, ::onnx::GraphProto* releasable = nullptr);
  Status defineOutputs(const ::onnx::GraphProto& proto, Graph& graph);
  Status importNode(const ::onnx::NodeProto& proto, int index, const Scope& scope);
  StatusOr<Value*> resolve(const std::string& name, const Scope& scope, const std::string& user);
  StatusOr<Attribute> importAttribute(const ::onnx::AttributeProto& proto,
                                      const std::string& nodeDesc, const Scope& scope);
  StatusOr<std::shared_ptr<Graph>> importSubgraph(const ::onnx::GraphProto& proto,
                                                  const std::string& defaultName,
                                                  const Scope& scope);
  StatusOr<std::shared_ptr<Graph>> importFunctionBody(const ::onnx::FunctionProto& function,
                                                      const std::vector<Value*>& callerInputs,
                                                      const Scope& scope);
  Status chargeConstantBytes(const Tensor& tensor, const std::string& what);
  Status applyInputShapes(Graph& graph);
  const ::onnx::FunctionProto* findFunction(std::string_view domain, std::string_view op) const;

  const ImportOptions& options_;
  std::string source_;
  TensorReadOptions tensorOptions_;
  std::map<std::string, int64_t> opsets_;  // canonical domain -> version
  std::map<std::pair<std::string, std::string>, const ::onnx::FunctionProto*> functions_;
  uint64_t nodeCount_ = 0;
  uint64_t constantBytes_ = 0;
  int depth_ = 0;  // nesting depth of the graph being built
};

//===--- Step 2: a cheap walk over every node before building ---------===//

const ::onnx::FunctionProto* ModelImporter::findFunction(std::string_view domain,
                                                         std::string_view op) const {
  auto it = functions_.find({str(canonicalDomain(domain)), str(op)});
  return it == functions_.end() ? nullptr : it->second;
}

Status ModelImporter::readOpsets(const ::onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    std::string domain(canonicalDomain(opset.domain()));
    if (opset.version() < 1)
      return Status::invalid("opset_import for domain '" + displayDomain(domain) +
                             "' has invalid version " + std::to_string(opset.version()));
    auto [it, inserted] = opsets_.emplace(domain, opset.version());
    if (!inserted && it->second != opset.version())
      return Status::invalid("opset_import lists domain '" + displayDomain(domain) +
                             "' twice, with versions " + std::to_string(it->second) + " and " +
                             std::to_string(opset.version()));
  }
  if (opsets_.empty()) return Status::invalid("model declares no opset_import");
  for (const auto& function : model.functions()) {
    auto key = std::make_pair(str(canonicalDomain(function.domain())), function.name());
    if (function.name().empty()) return Status::invalid("model has a local function with no name");
    if (!functions_.emplace(key, &function).second)
      return Status::invalid("model defines local function '" + function.domain() + "." +
                             function.name() + "' twice");
  }
  return Status::ok();
}

Status ModelImporter::checkNodeOps(const ::onnx::NodeProto& node, int index, int depth) {
  if (++nodeCount_ > options_.maxNodes)
    return Status(StatusCode::kLimitExceeded,
                  "model has more than " + std::to_string(options_.maxNodes) +
                      " nodes, over the maxNodes limit of " + std::to_string(options_.maxNodes));
  if (node.op_type().empty()) return Status::invalid(describeNode(node, index) + " has no op_type");
  std::string domain(canonicalDomain(node.domain()));
  if (!options_.allowUnknownOps && !OpRegistry::global().lookup(domain, node.op_type()) &&
      !findFunction(domain, node.op_type())) {
    auto opset = opsets_.find(domain);
    std::string version = opset == opsets_.end() ? "not imported" : std::to_string(opset->second);
    return Status(StatusCode::kUnsupported, "unsupported op '" + node.op_type() + "' (domain '" +
                                                displayDomain(domain) + "', opset " + version +
                                                ") at " + describeNode(node, index) +
                                                ": subgraph has no definition for it");
  }
  for (const auto& attr : node.attribute()) {
    auto nest = [&](const ::onnx::GraphProto& g) -> Status {
      if (depth + 1 > options_.maxSubgraphDepth)
        return Status(StatusCode::kLimitExceeded, describeNode(node, index) + " attribute '" +
                                                      attr.name() + "' nests subgraphs " +
                                                      std::to_string(depth + 1) +
                                                      " deep, over the maxSubgraphDepth limit of " +
                                                      std::to_string(options_.maxSubgraphDepth));
      return checkGraphOps(g, depth + 1);
    };
    if (attr.has_g()) SUBGRAPH_RETURN_IF_ERROR(nest(attr.g()));
    for (const auto& g : attr.graphs()) SUBGRAPH_RETURN_IF_ERROR(nest(g));
  }
  return Status::ok();
}

Status ModelImporter::checkGraphOps(const ::onnx::GraphProto& graph, int depth) {
  for (int i = 0; i < graph.node_size(); ++i)
    SUBGRAPH_RETURN_IF_ERROR(checkNodeOps(graph.node(i), i, depth));
  return Status::ok();
}

//===--- Step 3: building graphs -------------------------------------===//

Status ModelImporter::chargeConstantBytes(const Tensor& tensor, const std::string& what) {
  uint64_t bytes = tensor.bytes().size();
  for (const auto& s : tensor.strings()) bytes += s.size();
  constantBytes_ += bytes;
  if (constantBytes_ > options_.maxTotalInitializerBytes)
    return Status(StatusCode::kLimitExceeded,
                  "constant data reaches " + std::to_string(constantBytes_) + " bytes at " + what +
                      ", over the maxTotalInitializerBytes limit of " +
                      std::to_string(options_.maxTotalInitializerBytes));
  return Status::ok();
}

StatusOr<Value*> ModelImporter::resolve(const std::string& name, const Scope& scope,
                                        const std::string& user) {
  if (Value* local = scope.graph->findValue(name)) return local;
  if (!scope.isFunction) {
    for (const Scope* outer = scope.parent; outer; outer = outer->parent) {
      if (Value* found = outer->graph->findValue(name))
        // A free value: same name and type as the outer one, no producer.
        return scope.graph->createValue(name, found->type());
      if (outer->isFunction) break;
    }
  }
  return Status::invalid(user + " names '" + name +
                         "', which no node, input or initializer defines" +
                         (scope.parent ? " in this graph or any enclosing one" : ""));
}

Status ModelImporter::defineOutputs(const ::onnx::GraphProto& proto, Graph& graph) {
  // Every named node output is created before any node, so nodes may read
  // values defined further down and a name defined twice is caught here.
  std::unordered_map<std::string, std::string> definedBy;
  for (Value* v : graph.values())
    definedBy.emplace(v->name(), v->isInitializer() ? "an initializer" : "a graph input");
  for (int i = 0; i < proto.node_size(); ++i) {
    const auto& node = proto.node(i);
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      auto [it, fresh] = definedBy.emplace(out, describeNode(node, i));
      if (!fresh)
        return Status::invalid("value '" + out + "' is defined twice: by " + it->second +
                               " and as an output of " + describeNode(node, i));
      graph.createValue(out);
    }
  }
  return Status::ok();
}

Status ModelImporter::importGraph(const ::onnx::GraphProto& proto, Graph& graph,
                                  const Scope* parent, bool isFunction,
                                  ::onnx::GraphProto* releasable) {
  Scope scope{&graph, parent, isFunction};
  if (proto.sparse_initializer_size() > 0)
    return Status(
        StatusCode::kUnsupported,
        "graph '" + proto.name() + "' has sparse initializers, which subgraph does not support");

  int index = 0;
  for (const auto& init : proto.initializer()) {
    if (init.name().empty())
      return Status::invalid("graph '" + proto.name() + "' has an initializer with no name");
    if (graph.findValue(init.name()))
      return Status::invalid("initializer '" + init.name() + "' is defined twice");
    std::string what = "initializer '" + init.name() + "'";
    StatusOr<Tensor> tensor = tensorFromProto(init, what, tensorOptions_);
    if (!tensor) return tensor.status();
    SUBGRAPH_RETURN_IF_ERROR(chargeConstantBytes(*tensor, what));
    graph.addInitializer(init.name(), std::move(tensor).value());
    // `releasable` is `proto` itself; clearing data leaves the repeated
    // field, and so this loop, intact.
    if (releasable) releasable->mutable_initializer(index)->clear_raw_data();
    ++index;
  }

  for (const auto& input : proto.input()) {
    if (input.name().empty())
      return Status::invalid("graph '" + proto.name() + "' has an input with no name");
    StatusOr<TensorType> type =
        tensorTypeFromProto(input.type(), input.name(), options_.maxDimSize);
    if (!type) return type.status();
    if (Value* existing = graph.findValue(input.name())) {
      if (existing->isInitializer()) continue;  // old exporters: see the file comment
      return Status::invalid("graph input '" + input.name() + "' is listed twice");
    }
    graph.addInput(input.name(), std::move(type).value());
  }

  SUBGRAPH_RETURN_IF_ERROR(defineOutputs(proto, graph));

  for (const auto& info : proto.value_info()) {
    Value* v = graph.findValue(info.name());
    // value_info for a name nothing defines is harmless (ONNX tools emit it
    // after pruning); the name is checked, the type dropped.
    StatusOr<TensorType> type = tensorTypeFromProto(info.type(), info.name(), options_.maxDimSize);
    if (!type) return type.status();
    if (v && !v->isInitializer() && !v->isGraphInput()) v->setType(std::move(type).value());
  }

  for (int i = 0; i < proto.node_size(); ++i)
    SUBGRAPH_RETURN_IF_ERROR(importNode(proto.node(i), i, scope));

  for (const auto& output : proto.output()) {
    if (output.name().empty())
      return Status::invalid("graph '" + proto.name() + "' has an output with no name");
    StatusOr<Value*> v = resolve(output.name(), scope, "graph output");
    if (!v) return v.status();
    StatusOr<TensorType> type =
        tensorTypeFromProto(output.type(), output.name(), options_.maxDimSize);
    if (!type) return type.status();
    if (!type->isUnknown() && !(*v)->isInitializer()) (*v)->setType(std::move(type).value());
    graph.addOutput(*v);
  }

  StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
  if (!order) return order.status();
  return Status::ok();
}

Status ModelImporter::importNode(const ::onnx::NodeProto& proto, int index, const Scope& scope) {
  Graph& graph = *scope.graph;
  std::string desc = describeNode(proto, index);

  std::vector<Value*> inputs;
  inputs.reserve(static_cast<size_t>(proto.input_size()));
  for (int i = 0; i < proto.input_size(); ++i) {
    const std::string& name = proto.input(i);
    if (name.empty()) {  // an omitted optional input
      inputs.push_back(nullptr);
      continue;
    }
    StatusOr<Value*> v =
        resolve(name, scope, desc + " (" + proto.op_type() + ") input " + std::to_string(i));
    if (!v) return v.status();
    inputs.push_back(*v);
  }

  std::vector<Value*> outputs;
  for (int i = 0; i < proto.output_size(); ++i) {
    const std::string& name = proto.output(i);
    if (!name.empty()) {
      outputs.push_back(graph.findValue(name));
      continue;
    }
    // An omitted optional output. Trailing ones are dropped; one in the
    // middle still needs a value to hold its position.
    bool laterNamed = false;
    for (int j = i + 1; j < proto.output_size(); ++j) laterNamed |= !proto.output(j).empty();
    if (!laterNamed) break;
    std::string base = (proto.name().empty() ? proto.op_type() : proto.name()) + "_unused";
    outputs.push_back(graph.createValue(graph.uniqueValueName(base)));
  }

  std::vector<Attribute> attrs;
  std::set<std::string> seen;
  for (const auto& attrProto : proto.attribute()) {
    if (!seen.insert(attrProto.name()).second)
      return Status::invalid(desc + " has attribute '" + attrProto.name() + "' twice");
    StatusOr<Attribute> attr = importAttribute(attrProto, desc, scope);
    if (!attr) return attr.status();
    attrs.push_back(std::move(attr).value());
  }

  std::string domain(canonicalDomain(proto.domain()));
  if (const auto* function = findFunction(domain, proto.op_type());
      function && !seen.count("body")) {
    StatusOr<std::shared_ptr<Graph>> body = importFunctionBody(*function, inputs, scope);
    if (!body) return body.status();
    attrs.emplace_back("body", std::move(body).value());
  }

  const OpKey* key = OpRegistry::global().intern(domain, proto.op_type());
  graph.addNode(key, std::move(inputs), std::move(outputs), std::move(attrs), proto.name());
  return Status::ok();
}

StatusOr<std::shared_ptr<Graph>> ModelImporter::importSubgraph(const ::onnx::GraphProto& proto,
                                                               const std::string& defaultName,
                                                               const Scope& scope) {
  auto graph = std::make_shared<Graph>(proto.name().empty() ? defaultName : proto.name());
  ++depth_;
  Status status = importGraph(proto, *graph, &scope, /*isFunction=*/false);
  --depth_;
  if (!status.isOk()) return status;
  return graph;
}

StatusOr<std::shared_ptr<Graph>> ModelImporter::importFunctionBody(
    const ::onnx::FunctionProto& function, const std::vector<Value*>& callerInputs,
    const Scope& scope) {
  if (depth_ + 1 > options_.maxSubgraphDepth)
    return Status(StatusCode::kLimitExceeded, "local function '" + function.name() + "' nests " +
                                                  std::to_string(depth_ + 1) +
                                                  " deep, over the maxSubgraphDepth limit of " +
                                                  std::to_string(options_.maxSubgraphDepth));
  // A FunctionProto is a GraphProto without types or initializers; the
  // caller's input types stand in for the missing input types.
  ::onnx::GraphProto proto;
  proto.set_name(function.name());
  for (int i = 0; i < function.input_size(); ++i) {
    auto* in = proto.add_input();
    in->set_name(function.input(i));
    if (i < static_cast<int>(callerInputs.size()) && callerInputs[i])
      tensorTypeToProto(callerInputs[i]->type(), in->mutable_type());
  }
  for (const auto& out : function.output()) proto.add_output()->set_name(out);
  *proto.mutable_node() = function.node();
  SUBGRAPH_RETURN_IF_ERROR(checkGraphOps(proto, depth_ + 1));

  auto graph = std::make_shared<Graph>(function.name());
  for (const auto& opset : function.opset_import())
    graph->setOpsetImport(opset.domain(), opset.version());
  ++depth_;
  Status status = importGraph(proto, *graph, &scope, /*isFunction=*/true);
  --depth_;
  if (!status.isOk())
    return Status(status.code(), "local function '" + function.name() + "': " + status.message());
  return graph;
}

StatusOr<Attribute> ModelImporter::importAttribute(const ::onnx::AttributeProto& proto,
                                                   const std::string& nodeDesc,
                                                   const Scope& scope) {
  using AP = ::onnx::AttributeProto;
  std::string what = nodeDesc + " attribute '" + proto.name() + "'";
  if (proto.name().empty()) return Status::invalid(nodeDesc + " has an attribute with no name");
  if (!proto.ref_attr_name().empty())
    return Status(StatusCode::kUnsupported, what + " refers to function attribute '" +
                                                proto.ref_attr_name() +
                                                "', which subgraph does not support");
  AP::AttributeType type = proto.type();
  if (type == AP::UNDEFINED) {  // IR < 2 wrote no type; infer it from the field set
    if (proto.has_f())
      type = AP::FLOAT;
    else if (proto.has_i())
      type = AP::INT;
    else if (proto.has_s())
      type = AP::STRING;
    else if (proto.has_t())
      type = AP::TENSOR;
    else if (proto.has_g())
      type = AP::GRAPH;
    else if (proto.floats_size())
      type = AP::FLOATS;
    else if (proto.ints_size())
      type = AP::INTS;
    else if (proto.strings_size())
      type = AP::STRINGS;
    else if (proto.tensors_size())
      type = AP::TENSORS;
    else if (proto.graphs_size())
      type = AP::GRAPHS;
    else
      return Status::invalid(what + " has no type and no value");
  }
  switch (type) {
    case AP::FLOAT: return Attribute(proto.name(), proto.f());
    case AP::INT: return Attribute(proto.name(), static_cast<int64_t>(proto.i()));
    case AP::STRING: return Attribute(proto.name(), proto.s());
    case AP::FLOATS:
      return Attribute(proto.name(),
                       std::vector<float>(proto.floats().begin(), proto.floats().end()));
    case AP::INTS:
      return Attribute(proto.name(),
                       std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
    case AP::STRINGS:
      return Attribute(proto.name(),
                       std::vector<std::string>(proto.strings().begin(), proto.strings().end()));
    case AP::TENSOR: {
      StatusOr<Tensor> t = tensorFromProto(proto.t(), what, tensorOptions_);
      if (!t) return t.status();
      SUBGRAPH_RETURN_IF_ERROR(chargeConstantBytes(*t, what));
      return Attribute(proto.name(), std::move(t).value());
    }
    case AP::GRAPH: {
      StatusOr<std::shared_ptr<Graph>> g = importSubgraph(proto.g(), proto.name(), scope);
      if (!g) return g.status();
      return Attribute(proto.name(), std::move(g).value());
    }
    case AP::GRAPHS: {
      std::vector<std::shared_ptr<Graph>> graphs;
      for (int i = 0; i < proto.graphs_size(); ++i) {
        StatusOr<std::shared_ptr<Graph>> g =
            importSubgraph(proto.graphs(i), proto.name() + "_" + std::to_string(i), scope);
        if (!g) return g.status();
        graphs.push_back(std::move(g).value());
      }
      return Attribute(proto.name(), std::move(graphs));
    }
    case AP::TENSORS:
    case AP::SPARSE_TENSOR:
    case AP::SPARSE_TENSORS:
    case AP::TYPE_PROTO:
    case AP::TYPE_PROTOS:
      return Status(StatusCode::kUnsupported, what + " has kind " + AP::AttributeType_Name(type) +
                                                  ", which subgraph does not support");
    default: return Status::invalid(what + " has unknown attribute type " + std::to_string(type));
  }
}

//===--- Steps 1 and 4: the model as a whole -------------------------===//

Status ModelImporter::applyInputShapes(Graph& graph) {
  for (const auto& [name, dims] : options_.inputShapes) {
    Value* v = graph.findValue(name);
    if (!v || !v->isGraphInput()) {
      std::string known;
      for (Value* in : graph.inputs()) known += (known.empty() ? "" : ", ") + in->name();
      return Status(StatusCode::kNotFound, "a shape is given for '" + name +
                                               "', which is not a graph input (inputs: " +
                                               (known.empty() ? "none" : known) + ")");
    }
    const TensorType& old = v->type();
    if (old.hasRank() && old.rank() != dims.size())
      return Status::invalid("the shape given for input '" + name + "' has " +
                             std::to_string(dims.size()) + " dims but the model declares rank " +
                             std::to_string(old.rank()) + " " + old.toString());
    Shape shape;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0 || dims[i] > options_.maxDimSize)
        return Status::invalid("the shape given for input '" + name + "' has invalid dim " +
                               std::to_string(dims[i]));
      if (old.hasRank() && (*old.shape)[i].isStatic() && (*old.shape)[i].size() != dims[i])
        return Status::invalid("the shape given for input '" + name + "' has dim " +
                               std::to_string(dims[i]) + " at axis " + std::to_string(i) +
                               " but the model fixes it to " +
                               std::to_string((*old.shape)[i].size()));
      shape.emplace_back(dims[i]);
    }
    v->setType(TensorType(old.dtype, std::move(shape)));
  }
  return Status::ok();
}

StatusOr<std::unique_ptr<Graph>> ModelImporter::run(::onnx::ModelProto& model) {
  auto fail = [&](const Status& s) { return Status(s.code(), source_ + ": " + s.message()); };
  if (!model.has_graph()) return fail(Status::invalid("model has no graph"));
  if (Status s = readOpsets(model); !s.isOk()) return fail(s);
  if (Status s = checkGraphOps(model.graph(), 0); !s.isOk()) return fail(s);
  for (const auto& function : model.functions())
    for (int i = 0; i < function.node_size(); ++i)
      if (Status s = checkNodeOps(function.node(i), i, 1); !s.isOk())
        return fail(Status(s.code(), "local function '" + function.name() + "': " + s.message()));

  auto graph =
      std::make_unique<Graph>(model.graph().name().empty() ? "main" : model.graph().name());
  for (const auto& [domain, version] : opsets_) graph->setOpsetImport(domain, version);
  try {
    Status built = importGraph(model.graph(), *graph, nullptr, false, model.mutable_graph());
    if (!built.isOk()) return fail(built);
    if (Status s = applyInputShapes(*graph); !s.isOk()) return fail(s);
  } catch (const Error& e) {  // an IR invariant the checks above missed
    return fail(Status(e.code(), e.what()));
  }
  if (!options_.inputShapes.empty() || options_.runShapeInference) {
    InferShapesOptions inferOptions;
    inferOptions.allowUnknownOps = true;
    if (Status s = inferShapes(*graph, inferOptions); !s.isOk())
      return fail(Status(s.code(), "shape inference: " + s.message()));
  }
  return graph;
}

// Parses serialized ModelProto bytes, refusing more than maxModelBytes and
// anything protobuf does not consume completely.
Status parseModel(std::string_view bytes, const ImportOptions& options, const std::string& source,
                  ::onnx::ModelProto* model) {
  if (bytes.size() > options.maxModelBytes)
    return Status(StatusCode::kLimitExceeded, source + ": model is " +
                                                  std::to_string(bytes.size()) +
                                                  " bytes, over the maxModelBytes limit of " +
                                                  std::to_string(options.maxModelBytes));
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return Status(StatusCode::kLimitExceeded,
                  source + ": model is " + std::to_string(bytes.size()) +
                      " bytes; protobuf cannot parse messages over 2 GiB");
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return Status::invalid(source +
                           ": not a valid ONNX model: the protobuf is truncated or malformed");
  return Status::ok();
}

// Names in a hostile file may hold newlines or terminal escapes; errors are
// one printable line, so control bytes are shown escaped.
StatusOr<std::unique_ptr<Graph>> oneLine(StatusOr<std::unique_ptr<Graph>> result) {
  if (result.isOk()) return result;
  static const char* kHex = "0123456789abcdef";
  std::string clean;
  for (unsigned char c : result.status().message()) {
    if (c >= 0x20 && c != 0x7f) {
      clean += static_cast<char>(c);
    } else {
      clean += "\\x";
      clean += kHex[c >> 4];
      clean += kHex[c & 15];
    }
  }
  return Status(result.status().code(), std::move(clean));
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> importOnnxBytes(std::string_view bytes,
                                                 const ImportOptions& options) {
  std::string source = options.sourceName.empty() ? "<memory>" : options.sourceName;
  ::onnx::ModelProto model;
  if (Status s = parseModel(bytes, options, source, &model); !s.isOk()) return oneLine(s);
  return oneLine(ModelImporter(options, source).run(model));
}

StatusOr<std::unique_ptr<Graph>> importOnnxFile(const std::string& path,
                                                const ImportOptions& options) {
  std::string source = options.sourceName.empty() ? path : options.sourceName;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return oneLine(Status(StatusCode::kIo, source + ": no such model file"));
  if (!std::filesystem::is_regular_file(path, ec))
    return oneLine(Status::invalid(source + ": not a regular file"));
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return oneLine(Status(StatusCode::kIo, source + ": cannot read: " + ec.message()));
  // Checked before reading so a huge file is never loaded into memory.
  if (size > options.maxModelBytes)
    return oneLine(
        Status(StatusCode::kLimitExceeded, source + ": model file is " + std::to_string(size) +
                                               " bytes, over the maxModelBytes limit of " +
                                               std::to_string(options.maxModelBytes)));
  // Read through the descriptor whose type is checked: the path may have
  // been swapped for a FIFO or a device since the checks above.
  StatusOr<std::string> read = readRegularFile(path, options.maxModelBytes, "model file");
  if (!read.isOk()) return oneLine(read.status());
  std::string bytes = std::move(read).value();

  ImportOptions withFolder = options;
  if (withFolder.externalDataDir.empty()) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    withFolder.externalDataDir = parent.empty() ? "." : parent.string();
  }
  ::onnx::ModelProto model;
  Status parsed = parseModel(bytes, withFolder, source, &model);
  std::string().swap(bytes);  // the parsed proto holds everything from here on
  if (!parsed.isOk()) return oneLine(parsed);
  return oneLine(ModelImporter(withFolder, source).run(model));
}

StatusOr<std::pair<std::string, std::vector<int64_t>>> parseInputShapeSpec(std::string_view spec) {
  size_t eq = spec.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return Status::invalid("shape '" + str(spec) + "' is not NAME=d1,d2,...");
  std::string name(spec.substr(0, eq));
  std::string_view rest = spec.substr(eq + 1);
  std::vector<int64_t> dims;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    int64_t d = -1;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || d < 0)
      return Status::invalid("shape '" + str(spec) + "': '" + str(item) +
                             "' is not a non-negative integer dim");
    dims.push_back(d);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) return Status::invalid("shape '" + str(spec) + "' ends with a comma");
  }
  return std::make_pair(std::move(name), std::move(dims));
}

}  // namespace subgraph
