//===- tests/onnx/onnx_malformed_test.cpp - Hostile and broken ONNX files -===//
//
// Every test feeds the importer one defect and checks that it fails with a
// one-line error that names the tensor, node or limit involved. Limits are
// tested by setting them just below what a tiny model needs. A randomized
// test corrupts a valid model many times and only requires that the
// importer never crashes (it prints its seed).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "onnx/onnx_test_util.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph {
namespace {

using namespace onnx_test;
using ::testing::HasSubstr;
using TP = ::onnx::TensorProto;

Status importError(const std::string& bytes, ImportOptions options = {}) {
  auto result = importOnnxBytes(bytes, options);
  EXPECT_FALSE(result.isOk()) << "import unexpectedly succeeded";
  if (result.isOk()) return Status::ok();
  EXPECT_EQ(result.status().message().find('\n'), std::string::npos);
  return result.status();
}
Status importError(const ::onnx::ModelProto& model, ImportOptions options = {}) {
  return importError(serialize(model), options);
}

/// A protobuf cut short fails as such.
TEST(OnnxMalformed, TruncatedProtobufIsRejected) {
  std::string bytes = serialize(addReluModel());
  Status s = importError(bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "<memory>: not a valid ONNX model: the protobuf is truncated or malformed");
}

/// Random bytes are not a model.
TEST(OnnxMalformed, GarbageIsRejected) {
  EXPECT_THAT(importError(std::string("\xff\xff\xff\xff not onnx", 13)).message(),
              HasSubstr("truncated or malformed"));
  EXPECT_THAT(importError(std::string()).message(), HasSubstr("model has no graph"));
}

/// A model without opset_import cannot say what its ops mean.
TEST(OnnxMalformed, MissingOpsetImportIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  model.clear_opset_import();
  EXPECT_THAT(importError(model).message(), HasSubstr("model declares no opset_import"));
}

/// Negative dims in an initializer and in a value type.
TEST(OnnxMalformed, NegativeDimIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_initializer(0)->set_dims(0, -3);
  EXPECT_THAT(importError(model).message(),
              HasSubstr("initializer 'w' has negative dim -3 at axis 0"));

  ::onnx::ModelProto typed = addReluModel();
  typed.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(-1);
  EXPECT_THAT(importError(typed).message(), HasSubstr("value 'x' has negative dim -1 at axis 1"));
}

/// A dim far above anything real (2^62) trips maxDimSize before any
/// allocation, in tensors and in value types.
TEST(OnnxMalformed, HugeDimIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_initializer(0)->set_dims(0, int64_t{1} << 62);
  Status s = importError(model);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(s.message(), HasSubstr("initializer 'w' has dim 4611686018427387904 at axis 0, "
                                     "over the maxDimSize limit of 1099511627776"));

  ::onnx::ModelProto typed = addReluModel();
  typed.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(int64_t{1} << 62);
  EXPECT_THAT(importError(typed).message(), HasSubstr("value 'y' has dim 4611686018427387904"));
}

/// Dims whose product overflows int64 even though each is allowed.
TEST(OnnxMalformed, ElementCountOverflowIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  auto* w = model.mutable_graph()->mutable_initializer(0);
  w->clear_dims();
  for (int i = 0; i < 4; ++i) w->add_dims(int64_t{1} << 20);
  EXPECT_THAT(importError(model).message(), HasSubstr("element count overflows int64"));
}

/// raw_data shorter than the shape needs.
TEST(OnnxMalformed, RawDataSizeMismatchIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(8, '\0'));
  EXPECT_THAT(importError(model).message(),
              HasSubstr("initializer 'w' has 8 bytes of raw_data but shape [3] of f32 needs 12"));
}

/// float_data / int64_data with the wrong number of elements, and data in
/// the field of another type.
TEST(OnnxMalformed, TypedDataSizeMismatchIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  auto* w = model.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->add_float_data(1.f);
  EXPECT_THAT(importError(model).message(),
              HasSubstr("initializer 'w' has 1 elements in float_data but shape [3] needs 3"));

  ::onnx::ModelProto ints = addReluModel();
  *ints.mutable_graph()->mutable_initializer(0) = int64Tensor("w", {4}, {1, 2, 3});
  EXPECT_THAT(importError(ints).message(),
              HasSubstr("initializer 'w' has 3 elements in int64_data but shape [4] needs 4"));

  ::onnx::ModelProto wrongField = addReluModel();
  auto* wf = wrongField.mutable_graph()->mutable_initializer(0);
  wf->clear_raw_data();
  for (int i = 0; i < 3; ++i) wf->add_int64_data(i);
  EXPECT_THAT(importError(wrongField).message(),
              HasSubstr("initializer 'w' of type f32 stores data in int64_data"));
}

/// A size mismatch inside a Constant node's tensor attribute.
TEST(OnnxMalformed, ConstantAttributeSizeMismatchIsRejected) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addTensorAttr(addNode(g, "Constant", {}, {"c"}, "k"), "value", floatTensor("", {4}, {1.f}));
  addValueInfo(g->mutable_output(), "c", TP::FLOAT, {"4"});
  EXPECT_THAT(importError(model).message(),
              HasSubstr("node 'k' attribute 'value' has 4 bytes of raw_data but shape [4]"));
}

/// A node input naming nothing, in the main graph and in a branch.
TEST(OnnxMalformed, InputNamingNothingIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_node(1)->set_input(0, "ghost");
  EXPECT_THAT(importError(model).message(),
              HasSubstr("node 'relu' (Relu) input 0 names 'ghost', which no node, input or "
                        "initializer defines"));

  ::onnx::ModelProto branch = emptyModel();
  auto* g = branch.mutable_graph();
  addValueInfo(g->mutable_input(), "c", TP::BOOL, {});
  auto* ifNode = addNode(g, "If", {"c"}, {"y"}, "if");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* b = addGraphAttr(ifNode, name);
    addNode(b, "Not", {"phantom"}, {std::string("o_") + name}, "inner");
    addValueInfo(b->mutable_output(), std::string("o_") + name, TP::BOOL, {});
  }
  addValueInfo(g->mutable_output(), "y", TP::BOOL, {});
  EXPECT_THAT(importError(branch).message(),
              HasSubstr("names 'phantom', which no node, input or initializer defines in this "
                        "graph or any enclosing one"));
}

/// A graph output naming nothing.
TEST(OnnxMalformed, OutputNamingNothingIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_output(0)->set_name("nowhere");
  EXPECT_THAT(importError(model).message(), HasSubstr("graph output names 'nowhere'"));
}

/// Two nodes defining the same value, and a node redefining an input.
TEST(OnnxMalformed, DuplicateOutputNamesAreRejected) {
  ::onnx::ModelProto model = addReluModel();
  addNode(model.mutable_graph(), "Neg", {"x"}, {"s"}, "again");
  EXPECT_THAT(
      importError(model).message(),
      HasSubstr("value 's' is defined twice: by node 'add' and as an output of node 'again'"));

  ::onnx::ModelProto shadow = addReluModel();
  addNode(shadow.mutable_graph(), "Neg", {"s"}, {"x"}, "redefine");
  EXPECT_THAT(importError(shadow).message(),
              HasSubstr("value 'x' is defined twice: by a graph input"));
}

/// Two initializers of one name.
TEST(OnnxMalformed, DuplicateInitializerIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  *model.mutable_graph()->add_initializer() = floatTensor("w", {1}, {0.f});
  EXPECT_THAT(importError(model).message(), HasSubstr("initializer 'w' is defined twice"));
}

/// Nodes that feed each other.
TEST(OnnxMalformed, CycleIsRejected) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addNode(g, "Relu", {"b"}, {"a"}, "r1");
  addNode(g, "Relu", {"a"}, {"b"}, "r2");
  addValueInfo(g->mutable_output(), "a", TP::FLOAT, {});
  EXPECT_THAT(importError(model).message(), HasSubstr("has a cycle through Relu node"));
}

/// Sequence-typed values and tensor lists are reported as unsupported, not
/// silently mistyped.
TEST(OnnxMalformed, NonTensorTypesAreUnsupported) {
  ::onnx::ModelProto model = addReluModel();
  auto* in = model.mutable_graph()->mutable_input(0);
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(TP::FLOAT);
  Status s = importError(model);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("unsupported type: value 'x' is a sequence"));
}

/// A graph attribute may not name a function attribute outside a function.
TEST(OnnxMalformed, AttributeReferenceOutsideFunctionIsRejected) {
  ::onnx::ModelProto model = addReluModel();
  auto* a = model.mutable_graph()->mutable_node(1)->add_attribute();
  a->set_name("alpha");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_ref_attr_name("outer_alpha");
  EXPECT_THAT(importError(model).message(),
              HasSubstr("refers to function attribute 'outer_alpha'"));
}

/// maxModelBytes, for bytes and for a file (checked before reading it).
TEST(OnnxMalformed, MaxModelBytesLimit) {
  std::string bytes = serialize(addReluModel());
  ImportOptions options;
  options.maxModelBytes = 16;
  Status s = importError(bytes, options);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(s.message(), HasSubstr("over the maxModelBytes limit of 16"));

  TempDir dir;
  writeFile(dir / "m.onnx", bytes);
  auto fromFile = importOnnxFile((dir / "m.onnx").string(), options);
  ASSERT_FALSE(fromFile.isOk());
  EXPECT_THAT(fromFile.status().message(), HasSubstr("m.onnx: model file is"));
  EXPECT_THAT(fromFile.status().message(), HasSubstr("over the maxModelBytes limit of 16"));
}

/// maxTensorBytes, for an initializer and for a tensor attribute.
TEST(OnnxMalformed, MaxTensorBytesLimit) {
  ImportOptions options;
  options.maxTensorBytes = 11;  // w needs 12
  Status s = importError(addReluModel(), options);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(s.message(),
              HasSubstr("initializer 'w' needs 12 bytes, over the maxTensorBytes limit of 11"));

  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addTensorAttr(addNode(g, "Constant", {}, {"c"}, "k"), "value",
                floatTensor("", {4}, {1.f, 2.f, 3.f, 4.f}));
  addValueInfo(g->mutable_output(), "c", TP::FLOAT, {"4"});
  EXPECT_THAT(
      importError(model, options).message(),
      HasSubstr("node 'k' attribute 'value' needs 16 bytes, over the maxTensorBytes limit of 11"));
}

/// maxTotalInitializerBytes counts initializers and tensor attributes.
TEST(OnnxMalformed, MaxTotalInitializerBytesLimit) {
  ::onnx::ModelProto model = addReluModel();
  auto* g = model.mutable_graph();
  addTensorAttr(addNode(g, "Constant", {}, {"c"}, "k"), "value", floatTensor("", {2}, {1.f, 2.f}));
  ImportOptions options;
  options.maxTotalInitializerBytes = 19;  // 12 + 8
  Status s = importError(model, options);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(s.message(),
              HasSubstr("constant data reaches 20 bytes at node 'k' attribute 'value', "
                        "over the maxTotalInitializerBytes limit of 19"));
  options.maxTotalInitializerBytes = 20;
  EXPECT_TRUE(importOnnxBytes(serialize(model), options).isOk());
}

/// maxNodes counts nodes of nested graphs too.
TEST(OnnxMalformed, MaxNodesLimit) {
  ImportOptions options;
  options.maxNodes = 1;
  Status s = importError(addReluModel(), options);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(s.message(), HasSubstr("model has more than 1 nodes, over the maxNodes limit of 1"));
}

/// maxSubgraphDepth: If in If in If is depth 3.
TEST(OnnxMalformed, MaxSubgraphDepthLimit) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "c", TP::BOOL, {});
  ::onnx::GraphProto* level = g;
  for (int depth = 0; depth < 3; ++depth) {
    std::string out = "y" + std::to_string(depth);
    auto* ifNode = addNode(level, "If", {"c"}, {out}, "if" + std::to_string(depth));
    auto* elseG = addGraphAttr(ifNode, "else_branch");
    addNode(elseG, "Identity", {"c"}, {"e" + std::to_string(depth)});
    addValueInfo(elseG->mutable_output(), "e" + std::to_string(depth), TP::BOOL, {});
    level = addGraphAttr(ifNode, "then_branch");
    addValueInfo(level->mutable_output(), "y" + std::to_string(depth + 1), TP::BOOL, {});
  }
  addNode(level, "Identity", {"c"}, {"y3"});
  addValueInfo(g->mutable_output(), "y0", TP::BOOL, {});

  ImportOptions options;
  EXPECT_TRUE(importOnnxBytes(serialize(model), options).isOk());
  options.maxSubgraphDepth = 2;
  Status s = importError(model, options);
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(s.message(), HasSubstr("node 'if2' attribute 'else_branch' nests subgraphs 3 deep, "
                                     "over the maxSubgraphDepth limit of 2"));
}

/// Control bytes in names from the file are escaped, so errors stay one
/// printable line.
TEST(OnnxMalformed, ControlCharactersInNamesAreEscaped) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_node(1)->set_name("evil\nname\x1b[31m");
  model.mutable_graph()->mutable_node(1)->set_input(0, "ghost");
  Status s = importError(model);
  EXPECT_THAT(s.message(), HasSubstr("node 'evil\\x0aname\\x1b[31m' (Relu) input 0"));
}

/// Missing files and folders are named as such.
TEST(OnnxMalformed, MissingFileOrFolderIsRejected) {
  TempDir dir;
  auto missing = importOnnxFile((dir / "absent.onnx").string());
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.onnx: no such model file"));
  auto folder = importOnnxFile(dir.path().string());
  ASSERT_FALSE(folder.isOk());
  EXPECT_THAT(folder.status().message(), HasSubstr(": not a regular file"));
}

/// Randomly corrupted models either import or fail cleanly; never crash.
TEST(OnnxMalformed, RandomCorruptionNeverCrashes) {
  std::random_device rd;
  const unsigned seed = rd();
  std::printf("RandomCorruptionNeverCrashes seed: %u\n", seed);
  std::mt19937 rng(seed);
  ::onnx::ModelProto base = addReluModel();
  addTensorAttr(addNode(base.mutable_graph(), "Constant", {}, {"c"}, "k"), "value",
                int64Tensor("", {2}, {1, 2}));
  const std::string bytes = serialize(base);
  int failures = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string corrupt = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i)
      corrupt[rng() % corrupt.size()] = static_cast<char>(rng() & 0xff);
    if (rng() % 4 == 0) corrupt.resize(rng() % corrupt.size());
    auto result = importOnnxBytes(corrupt);
    if (!result.isOk()) {
      ++failures;
      ASSERT_EQ(result.status().message().find('\n'), std::string::npos)
          << "seed " << seed << " round " << round;
    }
  }
  EXPECT_GT(failures, 0) << "seed " << seed;
}

}  // namespace
}  // namespace subgraph
