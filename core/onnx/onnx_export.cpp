//===- core/onnx/onnx_export.cpp - Writing ONNX models --------------------===//
//
// Nodes are written in topological order (ties by id), which ONNX requires
// and which keeps output deterministic. Free values of nested graphs (values
// with no producer that are neither inputs nor constants) are outer-scope
// references in ONNX terms and are written by name only.
//
// Fused regions become ONNX local functions. A node is written as a function
// call when it carries a graph attribute named "body" and either its domain
// starts with "subgraph." (the partitioner's convention) or it is in a
// non-default domain with no schema (a local function read back by the
// importer). Loop and Scan also have a "body" but are schema'd default-domain
// ops, so they are never mistaken for regions. Each distinct body becomes one
// FunctionProto; two regions that share an op name but not a body get
// distinct function names, so no call ever runs the wrong body.
//
//===----------------------------------------------------------------------===//
#include "subgraph/onnx/onnx_export.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "subgraph/passes/opset_lowering.h"
#include "subgraph/support/file_io.h"
#include "tensor_proto.h"

namespace subgraph {
namespace {

using namespace onnx_io;

bool isRegionCall(const Node& node) {
  const Attribute* body = node.attr("body");
  if (!body || body->kind() != AttrKind::kGraph || !body->asGraph()) return false;
  if (node.domain().rfind("subgraph.", 0) == 0) return true;
  return !node.domain().empty() && node.schema() == nullptr;
}

class ModelExporter {
 public:
  explicit ModelExporter(const ExportOptions& options) : options_(options) {}

  Status run(const Graph& graph, ::onnx::ModelProto* model);

 private:
  Status writeGraph(const Graph& graph, ::onnx::GraphProto* proto);
  Status writeNode(const Node& node, ::onnx::NodeProto* proto);
  Status writeAttribute(const Attribute& attr, ::onnx::AttributeProto* proto);
  StatusOr<std::string> functionFor(const Node& node);
  Status writeFunction(const Node& node, const Graph& body, ::onnx::FunctionProto* function);
  void noteDomain(const std::string& domain) { usedDomains_.insert(domain); }

  const ExportOptions& options_;
  ::onnx::ModelProto* model_ = nullptr;
  std::set<std::string> usedDomains_;
  // Body graph -> function name, and (domain, name) pairs already taken.
  std::map<const Graph*, std::string> functionOfBody_;
  std::set<std::pair<std::string, std::string>> functionNames_;
  int functionDepth_ = 0;
};

void writeValueInfo(const Value& value, ::onnx::ValueInfoProto* proto) {
  proto->set_name(value.name());
  if (!value.type().isUnknown()) tensorTypeToProto(value.type(), proto->mutable_type());
}

Status ModelExporter::writeAttribute(const Attribute& attr, ::onnx::AttributeProto* proto) {
  using AP = ::onnx::AttributeProto;
  proto->set_name(attr.name());
  switch (attr.kind()) {
    case AttrKind::kInt:
      proto->set_type(AP::INT);
      proto->set_i(attr.asInt());
      break;
    case AttrKind::kFloat:
      proto->set_type(AP::FLOAT);
      proto->set_f(attr.asFloat());
      break;
    case AttrKind::kString:
      proto->set_type(AP::STRING);
      proto->set_s(attr.asString());
      break;
    case AttrKind::kInts:
      proto->set_type(AP::INTS);
      for (int64_t v : attr.asInts()) proto->add_ints(v);
      break;
    case AttrKind::kFloats:
      proto->set_type(AP::FLOATS);
      for (float v : attr.asFloats()) proto->add_floats(v);
      break;
    case AttrKind::kStrings:
      proto->set_type(AP::STRINGS);
      for (const auto& v : attr.asStrings()) proto->add_strings(v);
      break;
    case AttrKind::kTensor:
      proto->set_type(AP::TENSOR);
      tensorToProto(attr.asTensor(), "", proto->mutable_t());
      break;
    case AttrKind::kGraph:
      proto->set_type(AP::GRAPH);
      if (!attr.asGraph()) return Status::invalid("graph attribute '" + attr.name() + "' is null");
      return writeGraph(*attr.asGraph(), proto->mutable_g());
    case AttrKind::kGraphs:
      proto->set_type(AP::GRAPHS);
      for (const auto& g : attr.asGraphs()) {
        if (!g) return Status::invalid("graphs attribute '" + attr.name() + "' holds a null graph");
        SUBGRAPH_RETURN_IF_ERROR(writeGraph(*g, proto->add_graphs()));
      }
      break;
  }
  return Status::ok();
}

Status ModelExporter::writeNode(const Node& node, ::onnx::NodeProto* proto) {
  auto where = [&] { return node.qualifiedOpType() + " node '" + node.displayName() + "'"; };
  proto->set_op_type(node.opType());
  if (!node.domain().empty()) proto->set_domain(node.domain());
  if (!node.name().empty()) proto->set_name(node.name());
  noteDomain(node.domain());
  for (Value* in : node.inputs()) proto->add_input(in ? in->name() : "");
  for (Value* out : node.outputs()) proto->add_output(out->name());

  bool asFunction = options_.fusedRegionsAsFunctions && isRegionCall(node);
  if (asFunction) {
    StatusOr<std::string> name = functionFor(node);
    if (!name) return Status(name.status().code(), where() + ": " + name.status().message());
    proto->set_op_type(*name);
  }
  for (const Attribute& attr : node.attributes()) {
    if (asFunction && attr.name() == "body") continue;
    Status s = writeAttribute(attr, proto->add_attribute());
    if (!s.isOk()) return Status(s.code(), where() + ": " + s.message());
  }
  return Status::ok();
}

StatusOr<std::string> ModelExporter::functionFor(const Node& node) {
  const Graph* body = node.attr("body")->asGraph().get();
  if (auto it = functionOfBody_.find(body); it != functionOfBody_.end()) return it->second;
  if (functionDepth_ > 64) return Status::invalid("fused regions nest more than 64 deep");
  std::string name = node.opType();
  for (int n = 1; functionNames_.count({node.domain(), name}); ++n)
    name = node.opType() + "_" + std::to_string(n);
  functionNames_.insert({node.domain(), name});
  functionOfBody_.emplace(body, name);

  // Written into a local first: writing the body may add further functions
  // (nested regions) to the model, which would invalidate a pointer.
  ::onnx::FunctionProto function;
  function.set_name(name);
  function.set_domain(node.domain());
  ++functionDepth_;
  Status s = writeFunction(node, *body, &function);
  --functionDepth_;
  if (!s.isOk()) return s;
  *model_->add_functions() = std::move(function);
  return name;
}

Status ModelExporter::writeFunction(const Node& node, const Graph& body,
                                    ::onnx::FunctionProto* function) {
  if (body.inputs().size() != node.numInputs() || body.outputs().size() != node.numOutputs())
    return Status::invalid("its body has " + std::to_string(body.inputs().size()) + " inputs and " +
                           std::to_string(body.outputs().size()) + " outputs but the node has " +
                           std::to_string(node.numInputs()) + " and " +
                           std::to_string(node.numOutputs()));
  for (Value* in : body.inputs()) function->add_input(in->name());
  // Functions have no initializers: each becomes a Constant node.
  for (Value* init : body.initializers()) {
    if (init->isGraphInput()) continue;
    auto* constant = function->add_node();
    constant->set_op_type("Constant");
    constant->add_output(init->name());
    auto* value = constant->add_attribute();
    value->set_name("value");
    value->set_type(::onnx::AttributeProto::TENSOR);
    tensorToProto(*init->initializer(), "", value->mutable_t());
  }
  StatusOr<std::vector<Node*>> order = body.topologicalOrder();
  if (!order) return order.status();
  for (Node* inner : *order) {
    for (Value* in : inner->inputs())
      if (in && !in->producer() && !in->isGraphInput() && !in->isInitializer())
        return Status::invalid("its body reads '" + in->name() +
                               "', which is not a body input; a function cannot see outer values");
    SUBGRAPH_RETURN_IF_ERROR(writeNode(*inner, function->add_node()));
  }
  // A function output must be produced inside the function; an output that
  // is a body input passes through an Identity under a fresh name.
  std::set<std::string> taken;
  for (Value* v : body.values()) taken.insert(v->name());
  for (Value* out : body.outputs()) {
    if (!out) return Status::invalid("its body has an omitted output, which ONNX cannot express");
    if (out->producer() || (out->isInitializer() && !out->isGraphInput())) {
      function->add_output(out->name());
      continue;
    }
    std::string fresh = out->name() + "_out";
    for (int n = 1; taken.count(fresh); ++n) fresh = out->name() + "_out" + std::to_string(n);
    taken.insert(fresh);
    auto* identity = function->add_node();
    identity->set_op_type("Identity");
    identity->add_input(out->name());
    identity->add_output(fresh);
    function->add_output(fresh);
  }
  for (const Attribute& attr : node.attributes())
    if (attr.name() != "body") function->add_attribute(attr.name());

  std::map<std::string, int64_t> opsets;
  for (const auto& [domain, version] : body.opsetImports()) opsets[domain] = version;
  for (const auto& n : function->node())
    if (!opsets.count(n.domain())) opsets[n.domain()] = 0;  // filled from the model below
  for (const auto& [domain, version] : opsets) {
    auto* opset = function->add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  return Status::ok();
}

Status ModelExporter::writeGraph(const Graph& graph, ::onnx::GraphProto* proto) {
  proto->set_name(graph.name());
  for (Value* in : graph.inputs()) writeValueInfo(*in, proto->add_input());
  for (Value* init : graph.initializers())
    tensorToProto(*init->initializer(), init->name(), proto->add_initializer());

  StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
  if (!order) return order.status();
  for (Node* node : *order) SUBGRAPH_RETURN_IF_ERROR(writeNode(*node, proto->add_node()));

  std::set<const Value*> listed;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    Value* out = graph.outputs()[i];
    if (!out)
      return Status::invalid("graph '" + graph.name() + "' output #" + std::to_string(i) +
                             " is omitted, which ONNX cannot express");
    writeValueInfo(*out, proto->add_output());
    listed.insert(out);
  }
  if (!options_.writeValueInfo) return Status::ok();
  for (Node* node : *order)
    for (Value* v : node->outputs())
      if (!listed.count(v) && v->type().dtype != DataType::kUndefined && listed.insert(v).second)
        writeValueInfo(*v, proto->add_value_info());
  return Status::ok();
}

Status ModelExporter::run(const Graph& graph, ::onnx::ModelProto* model) {
  model_ = model;
  model->set_ir_version(options_.irVersion);
  model->set_producer_name(options_.producerName);
  SUBGRAPH_RETURN_IF_ERROR(writeGraph(graph, model->mutable_graph()));

  // Opsets: the graph's own, the default ONNX opset when it has none, and
  // version 1 of every other domain a node uses (custom and region domains
  // have no versions of their own).
  std::map<std::string, int64_t> opsets = graph.opsetImports();
  if (!opsets.count("")) opsets[""] = options_.defaultOpset;
  for (const std::string& domain : usedDomains_)
    if (!opsets.count(domain)) opsets[domain] = 1;
  for (const auto& [domain, version] : opsets) {
    auto* opset = model->add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  // Function opset imports left at 0 above take the model's version.
  for (auto& function : *model->mutable_functions())
    for (auto& opset : *function.mutable_opset_import())
      if (opset.version() == 0)
        opset.set_version(opsets.count(opset.domain()) ? opsets[opset.domain()] : 1);
  return Status::ok();
}

}  // namespace

StatusOr<std::string> exportOnnxBytes(const Graph& graph, const ExportOptions& options) {
  // Ops newer than the model's opset (the idiom passes' Attention and Gelu)
  // are written out again on a copy, as ops the model's opset has.
  auto opset = graph.opsetImports().find("");
  const int64_t target = opset != graph.opsetImports().end() ? opset->second : options.defaultOpset;
  std::unique_ptr<Graph> lowered;
  if (hasOpsNewerThan(graph, target)) {
    lowered = graph.clone();
    if (Status s = lowerOpsNewerThan(*lowered, target); !s.isOk())
      return Status(s.code(), "ONNX export of graph '" + graph.name() + "': " + s.message());
  }
  const Graph& written = lowered ? *lowered : graph;
  ::onnx::ModelProto model;
  ModelExporter exporter(options);
  Status s;
  try {
    s = exporter.run(written, &model);
  } catch (const Error& e) {
    s = Status(e.code(), e.what());
  }
  if (!s.isOk())
    return Status(s.code(), "ONNX export of graph '" + graph.name() + "': " + s.message());
  size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX))
    return Status(StatusCode::kLimitExceeded,
                  "ONNX export of graph '" + graph.name() + "': the model is " +
                      std::to_string(size) + " bytes; protobuf cannot write messages over 2 GiB");
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return Status(StatusCode::kInternal,
                  "ONNX export of graph '" + graph.name() + "': serialization failed");
  return bytes;
}

Status exportOnnxFile(const Graph& graph, const std::string& path, const ExportOptions& options) {
  StatusOr<std::string> bytes = exportOnnxBytes(graph, options);
  if (!bytes) return bytes.status();
  // Written to a new, exclusively created file and renamed, so a failed
  // write never leaves a truncated model where a good one was.
  return writeFileAtomically(path, [&](std::ostream& out) {
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  });
}

}  // namespace subgraph
