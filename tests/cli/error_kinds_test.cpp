//===- tests/cli/error_kinds_test.cpp - One pipeline, errors by kind ------===//
//
// The library (subgraph::api) loads every model and builds every session;
// its errors carry a kind (StatusCode), and the front ends map the kind,
// never the message: the program exits 2 for kUsage and 1 otherwise, the
// Python package raises the class of the kind (python/tests). These tests
// hold the library's kinds and the program's exit statuses to that.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"
#include "subgraph/api/inference_session.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;

const std::string kBlock = std::string(SUBGRAPH_SOURCE_DIR) + "/tests/data/graphs/resnet_block.sg";

StatusCode loadCode(const std::string& path, const api::ModelOptions& options = {}) {
  return api::loadModel(path, options).status().code();
}

StatusCode sessionCode(api::InferenceOptions options) {
  StatusOr<std::unique_ptr<Graph>> graph = api::loadModel(kBlock);
  EXPECT_TRUE(graph.isOk()) << graph.status().message();
  return api::InferenceSession::create(std::move(graph).value(), std::move(options))
      .status()
      .code();
}

/// Files: missing or a folder is kIo, an unknown extension kUsage, a file
/// over the size limit kLimitExceeded, a malformed one kInvalidArgument.
TEST(ErrorKinds, ModelFilesFailWithTheirKind) {
  TempDir dir;
  EXPECT_EQ(loadCode((dir.path() / "none.sg").string()), StatusCode::kIo);
  EXPECT_EQ(loadCode(dir.path().string()), StatusCode::kIo);
  EXPECT_EQ(loadCode(dir.write("m.txt", "graph")), StatusCode::kUsage);
  EXPECT_EQ(loadCode(dir.write("bad.sg", "graph @g(")), StatusCode::kInvalidArgument);
  api::ModelOptions tiny;
  tiny.limits.modelBytes = 16;
  StatusOr<std::unique_ptr<Graph>> big = api::loadModel(kBlock, tiny);
  EXPECT_EQ(big.status().code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(big.status().message(), HasSubstr("over the 16 B limit for a text graph"));
  // The negative side: a good model loads, whatever the kinds above.
  EXPECT_TRUE(api::loadModel(kBlock).isOk());
}

/// A session's options are the caller's: each mistake is kUsage, found
/// before any work.
TEST(ErrorKinds, SessionOptionMistakesAreUsage) {
  api::InferenceOptions precision;
  precision.precision = "int8";
  EXPECT_EQ(sessionCode(precision), StatusCode::kUsage);
  api::InferenceOptions passes;
  passes.backends = "convbn";
  passes.passes = "nope";
  EXPECT_EQ(sessionCode(passes), StatusCode::kUsage);
  api::InferenceOptions threads;
  threads.threads = -3;
  EXPECT_EQ(sessionCode(threads), StatusCode::kUsage);
  EXPECT_EQ(api::parsePluginOptions({"precision"}, {"onednn"}).status().code(), StatusCode::kUsage);
  api::InferenceOptions fine;
  fine.backends = "convbn";
  EXPECT_EQ(sessionCode(fine), StatusCode::kOk);
}

/// The program maps the kind, not the message: a library usage error
/// (--passes, --precision) exits 2 and an I/O one exits 1.
TEST(ErrorKinds, TheProgramExitsByKind) {
  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", kBlock, "--backend", "convbn", "--random-inputs", "1", "--passes", "nope"}), 2,
      "passes: "));
  EXPECT_TRUE(failsWithOneLine(runCli({"run", "/nonexistent/m.sg", "--random-inputs", "1"}), 1,
                               "/nonexistent/m.sg: no such file"));
  TempDir dir;
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", dir.write("m.txt", "graph")}), 2,
                               "unknown model format '.txt'"));
}

}  // namespace
}  // namespace subgraph::cli::testing
