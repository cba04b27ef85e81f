//===- tests/onnx/external_data_test.cpp - External data stays in its folder ===//
//
// One test per way a hostile model might read a file outside its own
// folder, plus the valid case. Each test writes a model whose initializer
// 'w' (f32[4], 16 bytes) points at external data, into a fresh folder:
//
//   tmp/
//     model/            <- the model's folder
//       model.onnx      (w: data_location EXTERNAL, location = <attack>)
//       weights.bin     (32 bytes: two copies of w's data)
//     secret.bin        (16 bytes outside the model folder)
//
// The graph itself is y = Add(x, w).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "onnx/onnx_test_util.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph {
namespace {

using namespace onnx_test;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    modelDir_ = tmp_ / "model";
    fs::create_directories(modelDir_);
    std::vector<float> data = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f};
    writeFile(modelDir_ / "weights.bin",
              std::string(reinterpret_cast<const char*>(data.data()), 32));
    writeFile(tmp_ / "secret.bin", std::string(16, 's'));
  }

  /// Writes model.onnx whose 'w' uses the given external_data entries and
  /// imports it.
  StatusOr<std::unique_ptr<Graph>> importWith(
      const std::vector<std::pair<std::string, std::string>>& entries) {
    ::onnx::ModelProto model = emptyModel();
    auto* g = model.mutable_graph();
    addValueInfo(g->mutable_input(), "x", ::onnx::TensorProto::FLOAT, {"4"});
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(::onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(::onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : entries) {
      auto* e = w->add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    addNode(g, "Add", {"x", "w"}, {"y"});
    addValueInfo(g->mutable_output(), "y", ::onnx::TensorProto::FLOAT, {"4"});
    writeFile(modelDir_ / "model.onnx", serialize(model));
    return importOnnxFile((modelDir_ / "model.onnx").string());
  }

  std::string expectError(const std::vector<std::pair<std::string, std::string>>& entries) {
    auto result = importWith(entries);
    EXPECT_FALSE(result.isOk()) << "external data attack was not rejected";
    if (result.isOk()) return "";
    EXPECT_THAT(result.status().message(), HasSubstr("initializer 'w'"));
    return result.status().message();
  }

  TempDir tmp_;
  fs::path modelDir_;
};

/// Valid external data in the model folder loads, with offset and length.
TEST_F(ExternalData, ValidExternalDataLoads) {
  auto result = importWith({{"location", "weights.bin"}, {"offset", "16"}, {"length", "16"}});
  ASSERT_TRUE(result.isOk()) << result.status().message();
  const Tensor* w = (*result)->findValue("w")->initializer();
  ASSERT_TRUE(w);
  EXPECT_EQ(w->elementAsDouble(0), 5.0);
  EXPECT_EQ(w->elementAsDouble(3), 8.0);
}

/// A path in a subfolder, with a harmless "..", and a symlink that stays
/// inside the folder, also load.
TEST_F(ExternalData, PathsThatStayInsideLoad) {
  fs::create_directories(modelDir_ / "sub");
  fs::copy_file(modelDir_ / "weights.bin", modelDir_ / "sub" / "w.bin");
  auto nested = importWith({{"location", "sub/../sub/w.bin"}, {"length", "16"}});
  EXPECT_TRUE(nested.isOk()) << nested.status().message();
  fs::create_symlink("weights.bin", modelDir_ / "alias.bin");
  auto linked = importWith({{"location", "alias.bin"}, {"length", "16"}});
  EXPECT_TRUE(linked.isOk()) << linked.status().message();
}

/// Absolute paths are refused outright.
TEST_F(ExternalData, AbsolutePathIsRejected) {
  std::string abs = (tmp_ / "secret.bin").string();
  EXPECT_THAT(expectError({{"location", abs}}),
              HasSubstr("external data path '" + abs + "' is absolute"));
}

/// "../secret.bin" climbs out of the folder.
TEST_F(ExternalData, DotDotEscapeIsRejected) {
  EXPECT_THAT(expectError({{"location", "../secret.bin"}}),
              HasSubstr("external data path '../secret.bin' uses '..' to leave the model folder"));
}

/// "a/../../secret.bin" climbs out through a nested "..".
TEST_F(ExternalData, NestedDotDotEscapeIsRejected) {
  fs::create_directories(modelDir_ / "a");
  EXPECT_THAT(expectError({{"location", "a/../../secret.bin"}}),
              HasSubstr("'a/../../secret.bin' uses '..' to leave the model folder"));
}

/// A symlink inside the folder that points outside it.
TEST_F(ExternalData, SymlinkOutIsRejected) {
  fs::create_symlink(tmp_ / "secret.bin", modelDir_ / "link.bin");
  std::string message = expectError({{"location", "link.bin"}});
  EXPECT_THAT(message, HasSubstr("external data path 'link.bin' resolves to '"));
  EXPECT_THAT(message, HasSubstr("outside the model folder"));
}

/// A symlinked folder on the path that points outside.
TEST_F(ExternalData, SymlinkedFolderOutIsRejected) {
  fs::create_directories(tmp_ / "elsewhere");
  fs::copy_file(tmp_ / "secret.bin", tmp_ / "elsewhere" / "w.bin");
  fs::create_directory_symlink(tmp_ / "elsewhere", modelDir_ / "dir");
  EXPECT_THAT(expectError({{"location", "dir/w.bin"}}), HasSubstr("outside the model folder"));
}

/// A hard link to an outside file cannot be told apart from a real file in
/// the folder except by its link count, so any multiply-linked file is
/// refused.
TEST_F(ExternalData, HardLinkIsRejected) {
  std::error_code ec;
  fs::create_hard_link(tmp_ / "secret.bin", modelDir_ / "hard.bin", ec);
  ASSERT_FALSE(ec) << "cannot create a hard link in " << tmp_.path() << ": " << ec.message();
  EXPECT_THAT(expectError({{"location", "hard.bin"}}),
              HasSubstr("external data file 'hard.bin' has 2 hard links"));
}

/// An offset past the end of the file.
TEST_F(ExternalData, OffsetBeyondFileIsRejected) {
  EXPECT_THAT(expectError({{"location", "weights.bin"}, {"offset", "64"}}),
              HasSubstr("external data offset 64 is beyond the end of 'weights.bin' (32 bytes)"));
}

/// A length that runs past the end of the file.
TEST_F(ExternalData, LengthBeyondFileIsRejected) {
  EXPECT_THAT(expectError({{"location", "weights.bin"}, {"offset", "24"}, {"length", "16"}}),
              HasSubstr("offset 24 + length 16 is beyond the end of 'weights.bin' (32 bytes)"));
}

/// A range inside the file whose size does not match the tensor's shape.
TEST_F(ExternalData, LengthNotMatchingShapeIsRejected) {
  EXPECT_THAT(expectError({{"location", "weights.bin"}, {"length", "8"}}),
              HasSubstr("is 8 bytes but the tensor's shape needs 16"));
  // Without a length the rest of the file is the data: 32 bytes, not 16.
  EXPECT_THAT(expectError({{"location", "weights.bin"}}),
              HasSubstr("is 32 bytes but the tensor's shape needs 16"));
}

/// Offsets that are not plain decimals.
TEST_F(ExternalData, MalformedOffsetIsRejected) {
  for (const char* bad : {"-1", "+4", "0x10", "4 ", "99999999999999999999999"})
    EXPECT_THAT(expectError({{"location", "weights.bin"}, {"offset", bad}}),
                HasSubstr("is not a non-negative integer"))
        << bad;
}

/// A missing file and a missing location key.
TEST_F(ExternalData, MissingFileOrLocationIsRejected) {
  EXPECT_THAT(expectError({{"location", "absent.bin"}}),
              HasSubstr("external data file 'absent.bin'"));
  EXPECT_THAT(expectError({{"offset", "0"}}), HasSubstr("has external data without a location"));
}

/// A folder is not a data file.
TEST_F(ExternalData, DirectoryIsRejected) {
  fs::create_directories(modelDir_ / "d");
  EXPECT_THAT(expectError({{"location", "d"}}), HasSubstr("is not a regular file"));
}

/// Models read from bytes have no folder, so external data is refused.
TEST_F(ExternalData, BytesImportRefusesExternalData) {
  // Writes model.onnx, which loads from its file.
  ASSERT_TRUE(importWith({{"location", "weights.bin"}, {"length", "16"}}).isOk());
  std::ifstream in(modelDir_ / "model.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto result = importOnnxBytes(bytes);
  ASSERT_FALSE(result.isOk());
  EXPECT_THAT(result.status().message(),
              HasSubstr("initializer 'w': external data 'weights.bin' cannot be read: the model "
                        "was not loaded from a folder"));
  ImportOptions options;
  options.externalDataDir = modelDir_.string();
  EXPECT_TRUE(importOnnxBytes(bytes, options).isOk());
}

}  // namespace
}  // namespace subgraph
