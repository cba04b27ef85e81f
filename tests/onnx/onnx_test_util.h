//===- tests/onnx/onnx_test_util.h - Building ONNX models in tests --------===//
//
// Small helpers that build ModelProtos with the ONNX protobuf API, so each
// test states exactly which bytes it feeds the importer (hostile ones
// included) without committing binary files. Dims are written as strings:
// "3" is a static dim, "N" a symbolic one and "?" an unknown one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace subgraph::onnx_test {

/// Fills `type` as a tensor type of `elemType` with dims as described in the
/// file comment.
inline void setTensorType(::onnx::TypeProto* type, int elemType,
                          const std::vector<std::string>& dims) {
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(elemType);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) || d[0] == '-'))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

/// Appends a typed value_info (input, output or value_info entry).
inline ::onnx::ValueInfoProto* addValueInfo(
    google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto>* list, const std::string& name,
    int elemType = ::onnx::TensorProto::FLOAT, const std::vector<std::string>& dims = {}) {
  auto* info = list->Add();
  info->set_name(name);
  setTensorType(info->mutable_type(), elemType, dims);
  return info;
}

/// Appends a node.
inline ::onnx::NodeProto* addNode(::onnx::GraphProto* graph, const std::string& op,
                                  std::initializer_list<std::string> inputs,
                                  std::initializer_list<std::string> outputs,
                                  const std::string& name = "") {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return node;
}

/// A float tensor with data in raw_data.
inline ::onnx::TensorProto floatTensor(const std::string& name, std::vector<int64_t> dims,
                                       const std::vector<float>& values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(values.data(), values.size() * sizeof(float));
  return t;
}

/// An int64 tensor with data in int64_data.
inline ::onnx::TensorProto int64Tensor(const std::string& name, std::vector<int64_t> dims,
                                       const std::vector<int64_t>& values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

/// Adds an attribute of type INT / INTS / FLOAT / STRING / TENSOR / GRAPH.
inline void addIntAttr(::onnx::NodeProto* node, const std::string& name, int64_t v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void addIntsAttr(::onnx::NodeProto* node, const std::string& name, std::vector<int64_t> v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void addTensorAttr(::onnx::NodeProto* node, const std::string& name,
                          const ::onnx::TensorProto& t) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}
inline ::onnx::GraphProto* addGraphAttr(::onnx::NodeProto* node, const std::string& name) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  return a->mutable_g();
}

/// A model with ir_version 8 and one ai.onnx opset import.
inline ::onnx::ModelProto emptyModel(int64_t opset = 17) {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("subgraph-tests");
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

/// A model computing y = Relu(x + w) with x: f32[N, 3] and w a constant f32[3]:
///
///      x     w (initializer)
///       \   /
///        Add
///         |
///        Relu
///         |
///         y
inline ::onnx::ModelProto addReluModel() {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", ::onnx::TensorProto::FLOAT, {"N", "3"});
  *g->add_initializer() = floatTensor("w", {3}, {1.f, 2.f, 3.f});
  addNode(g, "Add", {"x", "w"}, {"s"}, "add");
  addNode(g, "Relu", {"s"}, {"y"}, "relu");
  addValueInfo(g->mutable_output(), "y", ::onnx::TensorProto::FLOAT, {"N", "3"});
  return model;
}

/// Serializes a model.
inline std::string serialize(const ::onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

/// Writes bytes to a file.
inline void writeFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A fresh temporary folder, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "subgraph_onnx_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? std::filesystem::path(tmpl) : std::filesystem::path();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// The repository root: $SUBGRAPH_SOURCE_DIR (set by ctest), else derived
/// from this file's location.
inline std::filesystem::path sourceDir() {
  if (const char* env = std::getenv("SUBGRAPH_SOURCE_DIR"); env && *env) return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

}  // namespace subgraph::onnx_test
