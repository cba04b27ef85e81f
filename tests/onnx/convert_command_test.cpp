//===- tests/onnx/convert_command_test.cpp - `subgraph convert` -----------===//
//
// Runs the `subgraph` program built next to this test binary (in
// <build>/bin) on the committed ONNX models and on small text graphs, and
// checks the files it writes by loading them back, plus its one-line errors.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "onnx/onnx_test_util.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph {
namespace {

using namespace onnx_test;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path cliPath() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path().parent_path() / "bin" / "subgraph";
}

struct CliResult {
  int exitCode = -1;
  std::string err;
};

CliResult runCli(const std::string& args, const TempDir& dir) {
  std::string command = cliPath().string() + " " + args + " > " + (dir / "stdout").string() +
                        " 2> " + (dir / "stderr").string();
  int status = std::system(command.c_str());
  std::ifstream in(dir / "stderr");
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

class ConvertCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(cliPath()))
      GTEST_SKIP() << "the subgraph program is not built at " << cliPath()
                   << ": build the 'subgraph' target first";
  }
  fs::path data_ = sourceDir() / "tests" / "data" / "onnx";
  TempDir dir_;
};

/// ONNX (opset 11, dynamic dims) to text with --shape: the Shape -> Gather
/// -> Concat -> Reshape chain resolves and the output shape becomes static.
TEST_F(ConvertCommand, OnnxToTextWithShape) {
  std::string out = (dir_ / "m.sg").string();
  CliResult r = runCli(
      "convert " + (data_ / "opset11_dynamic.onnx").string() + " " + out + " --shape x=2,5,8",
      dir_);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto g = parseGraphOrThrow(text);
  EXPECT_EQ(g->findValue("x")->type().toString(), "f32[2, 5, 8]");
  EXPECT_EQ(g->findValue("y")->type().toString(), "f32[10, 6]");
  EXPECT_EQ(g->opsetImports().at(""), 11);
}

/// Text to ONNX: the written file imports to the same graph.
//   x -> Relu -> y
TEST_F(ConvertCommand, TextToOnnx) {
  const char* text = R"(graph @g(%x: f32[N, 4]) opset(ai.onnx = 17) {
  %y: f32[N, 4] = Relu(%x) @relu
  return %y
}
)";
  writeFile(dir_ / "in.sg", text);
  std::string out = (dir_ / "out.onnx").string();
  CliResult r = runCli("convert " + (dir_ / "in.sg").string() + " " + out, dir_);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto back = importOnnxFile(out);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(**back), printGraph(*parseGraphOrThrow(text)));
}

/// A --shape naming no input fails with one line naming it.
TEST_F(ConvertCommand, UnknownShapeNameFails) {
  CliResult r = runCli("convert " + (data_ / "opset9_dynamic.onnx").string() + " " +
                           (dir_ / "o.onnx").string() + " --shape nope=1",
                       dir_);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("subgraph: error: "));
  EXPECT_THAT(r.err, HasSubstr("a shape is given for 'nope', which is not a graph input"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o.onnx"));
}

/// An output extension that is neither .sg nor .onnx fails before loading,
/// as a usage error (exit 2).
TEST_F(ConvertCommand, UnknownOutputFormatFails) {
  CliResult r = runCli("convert " + (data_ / "opset9_dynamic.onnx").string() + " out.txt", dir_);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("out.txt: unknown model format '.txt'"));
}

}  // namespace
}  // namespace subgraph
