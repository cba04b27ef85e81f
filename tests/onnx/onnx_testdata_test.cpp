//===- tests/onnx/onnx_testdata_test.cpp - ONNX's own node test models ----===//
//
// Imports every model of ONNX's backend node tests (Debian's
// libonnx-testdata, /usr/share/libonnx-testdata/data/node/*/model.onnx):
// opsets 1 to 17, Constant nodes, If/Loop/Scan bodies, optional inputs and
// outputs, every attribute kind. Each model must either import, or fail with
// the one-line "unsupported op" (an op subgraph does not define) or
// "unsupported type" (sequence, map or optional values) error; any other
// failure is an importer bug.
//
// Then, for models whose inputs all have static shapes, the declared output
// types are erased, shape inference runs, and the inferred output shapes
// must equal the dims of test_data_set_0/output_*.pb. Integer and scalar
// inputs are given their test data as constants first, as real models have
// them, so data-dependent ops (Reshape, Slice, Expand, ...) can be inferred.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "subgraph/ir/shape_inference.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::vector<fs::path> nodeTestDirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kNodeTests, ec))
    if (fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

bool readTensorProto(const fs::path& path, ::onnx::TensorProto* proto) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return in.good() || in.eof() ? proto->ParseFromString(bytes) : false;
}

// Decodes the numeric test-data tensors that are turned into constants
// (integers and scalars); returns nullopt for anything else.
std::optional<Tensor> decodeSmallTensor(const ::onnx::TensorProto& p) {
  auto dtype = static_cast<DataType>(p.data_type());
  size_t size = dataTypeSize(dtype);
  if (size == 0 || p.data_location() == ::onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  std::vector<std::byte> bytes;
  auto copy = [&](const void* data, size_t n) {
    bytes.resize(n);
    if (n) std::memcpy(bytes.data(), data, n);
  };
  if (p.has_raw_data()) {
    copy(p.raw_data().data(), p.raw_data().size());
  } else if (dtype == DataType::kInt64) {
    copy(p.int64_data().data(), p.int64_data_size() * sizeof(int64_t));
  } else if (dtype == DataType::kInt32) {
    copy(p.int32_data().data(), p.int32_data_size() * sizeof(int32_t));
  } else if (dtype == DataType::kFloat32) {
    copy(p.float_data().data(), p.float_data_size() * sizeof(float));
  } else if (dtype == DataType::kFloat64) {
    copy(p.double_data().data(), p.double_data_size() * sizeof(double));
  } else {
    return std::nullopt;
  }
  try {
    return Tensor(dtype, std::move(dims), std::move(bytes));
  } catch (const Error&) {
    return std::nullopt;
  }
}

enum class Outcome { kImported, kUnsupportedOp, kUnsupportedType, kOther };

Outcome classify(const StatusOr<std::unique_ptr<Graph>>& result) {
  if (result.isOk()) return Outcome::kImported;
  static const std::regex unsupportedOp(
      "^.*model\\.onnx: unsupported op '[A-Za-z0-9_]+' \\(domain '[a-z.]+', opset [0-9]+\\) at "
      "node ('[^']*'|#[0-9]+( \\(output '[^']*'\\))?): subgraph has no definition for it$");
  static const std::regex unsupportedType(
      "^.*model\\.onnx: unsupported type: value '[^']*' is an? (sequence|map|optional|sparse "
      "tensor); subgraph supports only (tensor values|dense tensors)$");
  const Status& s = result.status();
  if (s.code() != StatusCode::kUnsupported) return Outcome::kOther;
  if (std::regex_match(s.message(), unsupportedOp)) return Outcome::kUnsupportedOp;
  if (std::regex_match(s.message(), unsupportedType)) return Outcome::kUnsupportedType;
  return Outcome::kOther;
}

/// Every node test model imports or fails with an "unsupported" error.
TEST(OnnxTestData, EveryNodeTestModelImportsOrIsUnsupported) {
  std::vector<fs::path> dirs = nodeTestDirs();
  ASSERT_GT(dirs.size(), 500u) << "libonnx-testdata is not installed under " << kNodeTests;
  std::map<Outcome, int> counts;
  std::map<std::string, int> missingOps;
  std::vector<std::string> others;
  std::regex opName("unsupported op '([A-Za-z0-9_]+)'");
  for (const fs::path& dir : dirs) {
    auto result = importOnnxFile((dir / "model.onnx").string());
    Outcome outcome = classify(result);
    ++counts[outcome];
    std::smatch m;
    if (outcome == Outcome::kUnsupportedOp &&
        std::regex_search(result.status().message(), m, opName))
      ++missingOps[m[1]];
    if (outcome == Outcome::kOther) others.push_back(result.status().message());
  }
  std::printf(
      "ONNX node tests: %zu models: %d imported, %d unsupported op, %d unsupported type, "
      "%d other failures\n",
      dirs.size(), counts[Outcome::kImported], counts[Outcome::kUnsupportedOp],
      counts[Outcome::kUnsupportedType], counts[Outcome::kOther]);
  std::string ops;
  for (const auto& [op, n] : missingOps) ops += op + "(" + std::to_string(n) + ") ";
  std::printf("ops without a definition: %s\n", ops.c_str());
  for (const auto& message : others) ADD_FAILURE() << message;
  EXPECT_EQ(counts[Outcome::kOther], 0);
  EXPECT_GT(counts[Outcome::kImported], 100);
}

// Node tests whose inferred shapes may legitimately differ from the test
// data, each with the reason. Keep this list short and justified.
const std::map<std::string, std::string>& shapeExceptions() {
  const std::string windowReason =
      "the window length reaches Range through Cast/Sub/Div arithmetic on the size constant; "
      "inference propagates shape values, not general constant arithmetic (constant folding "
      "first resolves it)";
  const std::string rangeReason =
      "the expanded function computes the element count ceil((limit - start) / delta) with "
      "Sub/Div/Ceil/Max and builds the output in a Loop; inference does not evaluate that "
      "arithmetic";
  const std::string nmsReason =
      "NonMaxSuppression's output length is the number of boxes kept, known only at run time";
  const std::string uniqueReason =
      "Unique's output lengths are the number of distinct values, known only at run time";
  static const std::map<std::string, std::string> kExceptions = {
      {"test_blackmanwindow_expanded", windowReason},
      {"test_blackmanwindow_symmetric_expanded", windowReason},
      {"test_hammingwindow_expanded", windowReason},
      {"test_hammingwindow_symmetric_expanded", windowReason},
      {"test_hannwindow_expanded", windowReason},
      {"test_hannwindow_symmetric_expanded", windowReason},
      {"test_range_float_type_positive_delta_expanded", rangeReason},
      {"test_range_int32_type_negative_delta_expanded", rangeReason},
      {"test_nonmaxsuppression_center_point_box_format", nmsReason},
      {"test_nonmaxsuppression_flipped_coordinates", nmsReason},
      {"test_nonmaxsuppression_identical_boxes", nmsReason},
      {"test_nonmaxsuppression_limit_output_size", nmsReason},
      {"test_nonmaxsuppression_single_box", nmsReason},
      {"test_nonmaxsuppression_suppress_by_IOU", nmsReason},
      {"test_nonmaxsuppression_suppress_by_IOU_and_scores", nmsReason},
      {"test_nonmaxsuppression_two_batches", nmsReason},
      {"test_nonmaxsuppression_two_classes", nmsReason},
      {"test_unique_not_sorted_without_axis", uniqueReason},
      {"test_unique_sorted_with_axis", uniqueReason},
      {"test_unique_sorted_with_axis_3d", uniqueReason},
      {"test_unique_sorted_with_negative_axis", uniqueReason},
      {"test_unique_sorted_without_axis", uniqueReason},
      {"test_nonzero_example",
       "NonZero's output length is the number of non-zero input elements, known only at run "
       "time"},
      {"test_loop11",
       "the scan output's length is the number of iterations actually run, which depends on the "
       "loop condition computed at run time; ONNX's own inference leaves it unknown too"},
  };
  return kExceptions;
}

struct ShapeCheck {
  bool applicable = false;  ///< imported, static inputs, outputs present
  std::string mismatch;     ///< empty when every output shape matched
};

ShapeCheck checkInferredShapes(const fs::path& dir) {
  ShapeCheck check;
  auto imported = importOnnxFile((dir / "model.onnx").string());
  if (!imported.isOk()) return check;
  Graph& g = **imported;
  fs::path data = dir / "test_data_set_0";
  if (!fs::exists(data)) return check;
  std::vector<Value*> inputs(g.inputs().begin(), g.inputs().end());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->type().hasRank() || !isStaticShape(*inputs[i]->type().shape)) return check;
    ::onnx::TensorProto proto;
    if (!readTensorProto(data / ("input_" + std::to_string(i) + ".pb"), &proto)) return check;
    // Integer inputs, scalars and short vectors are what real models hold
    // as constants: shapes, axes, indices, scales, window sizes.
    auto dtype = static_cast<DataType>(proto.data_type());
    bool shortVector = proto.dims_size() == 1 && proto.dims(0) <= 8;
    if (!isInteger(dtype) && proto.dims_size() != 0 && !shortVector) continue;
    if (std::optional<Tensor> t = decodeSmallTensor(proto)) {
      g.removeInput(inputs[i]);
      g.setInitializer(inputs[i], std::move(*t));
    }
  }
  // Erase every type the file declared, so only inference can supply them.
  for (Node* n : g.nodes())
    for (Value* out : n->outputs()) out->setType(TensorType());

  InferShapesOptions options;
  options.allowUnknownOps = false;
  Status s = inferShapes(g, options);
  check.applicable = true;
  if (!s.isOk()) {
    check.mismatch = "inference failed: " + s.message();
    return check;
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    ::onnx::TensorProto proto;
    if (!readTensorProto(data / ("output_" + std::to_string(i) + ".pb"), &proto)) {
      check.applicable = false;
      return check;
    }
    Shape want(proto.dims().begin(), proto.dims().end());
    const TensorType& got = g.outputs()[i]->type();
    if (!got.hasRank() || *got.shape != want) {
      check.mismatch += "output " + std::to_string(i) + " '" + g.outputs()[i]->name() +
                        "' inferred " + got.toString() + ", test data has " + shapeToString(want) +
                        "; ";
    }
  }
  return check;
}

/// Inferred output shapes equal the test data for every model with static
/// input shapes, except the listed ones.
TEST(OnnxTestData, InferredShapesMatchTestData) {
  int applicable = 0, passed = 0, excepted = 0;
  std::vector<std::string> failures;
  for (const fs::path& dir : nodeTestDirs()) {
    std::string name = dir.filename().string();
    ShapeCheck check = checkInferredShapes(dir);
    if (!check.applicable) continue;
    ++applicable;
    bool listed = shapeExceptions().count(name) != 0;
    if (check.mismatch.empty()) {
      ++passed;
      if (listed) std::printf("note: %s is listed as an exception but now passes\n", name.c_str());
    } else if (listed) {
      ++excepted;
    } else {
      failures.push_back(name + ": " + check.mismatch);
    }
  }
  std::printf(
      "shape inference vs ONNX test data: %d of %d models match, %d listed exceptions, "
      "%zu failures\n",
      passed, applicable, excepted, failures.size());
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(passed, 100);
}

}  // namespace
}  // namespace subgraph
