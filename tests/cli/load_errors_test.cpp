//===- tests/cli/load_errors_test.cpp - Bad model files -------------------===//
//
// Every kind of bad input a user can hand the CLI ends in one line on
// stderr naming the file and the problem, exit status 1, and nothing on
// stdout: never a crash, a hang, a stack trace or a partial report.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <random>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

/// A path that does not exist.
TEST(CliLoadErrors, MissingFile) {
  TempDir dir;
  std::string missing = (dir.path() / "nope.sg").string();
  for (const char* command : {"inspect", "dot"}) {
    CliResult r = runCli({command, missing});
    EXPECT_TRUE(failsWithOneLine(r, 1, missing + ": no such file")) << command;
    EXPECT_THAT(r.out, IsEmpty());
  }
}

/// A directory, even one named like a model, is not read.
TEST(CliLoadErrors, Directory) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "model.sg");
  std::string path = (dir.path() / "model.sg").string();
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", path}), 1, path + ": is a directory"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", dir.path().string()}), 1, "is a directory"));
}

/// A device is refused before reading: /dev/zero would never end.
TEST(CliLoadErrors, DeviceIsRefusedNotRead) {
  CliResult r = runCli({"inspect", "/dev/zero"}, {}, 30);
  EXPECT_TRUE(failsWithOneLine(r, 1, "/dev/zero: not a regular file"));
}

/// An empty file says so instead of reporting a parse error at 1:1.
TEST(CliLoadErrors, EmptyFile) {
  TempDir dir;
  std::string path = dir.write("empty.sg", "");
  CliResult r = runCli({"inspect", path});
  EXPECT_TRUE(failsWithOneLine(r, 1, path + ": file is empty"));
  EXPECT_THAT(r.out, IsEmpty());
}

/// Random binary bytes (with a NUL) are named as binary data.
TEST(CliLoadErrors, RandomBinaryFile) {
  std::random_device device;
  unsigned seed = device();
  std::cout << "[ seed ] CliLoadErrors.RandomBinaryFile seed=" << seed << "\n";
  std::mt19937 rng(seed);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  bytes[1000 + rng() % 1000] = '\0';  // At least one NUL, whatever the draw.
  size_t firstNul = bytes.find('\0');
  TempDir dir;
  std::string path = dir.write("garbage.sg", bytes);
  CliResult r = runCli({"inspect", path});
  EXPECT_TRUE(failsWithOneLine(
      r, 1, path + ": binary data at byte " + std::to_string(firstNul) + "; not a text graph"))
      << "seed=" << seed;
}

/// Text that is not a graph fails with the parser's file:line:col message.
TEST(CliLoadErrors, GarbageTextIsAParseErrorWithPosition) {
  TempDir dir;
  std::string path = dir.write("garbage.sg", "hello world\nthis is not a graph\n");
  CliResult r = runCli({"inspect", path});
  EXPECT_TRUE(failsWithOneLine(r, 1, path + ":1:1:"));
  EXPECT_THAT(r.out, IsEmpty());
}

/// Random printable text never crashes the parser or the CLI.
TEST(CliLoadErrors, RandomPrintableTextFailsCleanly) {
  std::random_device device;
  unsigned seed = device();
  std::cout << "[ seed ] CliLoadErrors.RandomPrintableTextFailsCleanly seed=" << seed << "\n";
  std::mt19937 rng(seed);
  const std::string alphabet = "graph@%(){}[],:=fi32 \n\"_.0123456789-abcxyz";
  TempDir dir;
  for (int round = 0; round < 10; ++round) {
    std::string text = "graph @g(%x: f32[2]) {\n";
    for (int i = 0; i < 200; ++i) text += alphabet[rng() % alphabet.size()];
    std::string path = dir.write("random" + std::to_string(round) + ".sg", text);
    CliResult r = runCli({"inspect", path});
    // The text is almost surely malformed; if a draw happens to parse, the
    // verifier may accept it, and exit 0 is then right.
    if (r.exitCode != 0) {
      EXPECT_TRUE(failsWithOneLine(r, 1, path)) << "seed=" << seed << " text:\n" << text;
    }
  }
}

/// An unknown extension names the formats that are understood, as a usage
/// error (exit 2): the command line chose it. A missing model file is a
/// failure (exit 1).
TEST(CliLoadErrors, UnknownExtension) {
  TempDir dir;
  std::string path = dir.write("model.txt", "graph @g() {\n  return\n}\n");
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", path}), 2, "unknown model format '.txt'"));
  std::string bare = dir.write("model", "x");
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", bare}), 2, "(no extension)"));
  EXPECT_TRUE(
      failsWithOneLine(runCli({"inspect", (dir.path() / "none.sg").string()}), 1, "no such file"));
}

/// A file over the text-graph size limit is refused before it is read. The
/// file is sparse, so the test costs no disk space.
TEST(CliLoadErrors, OversizedFileIsRefusedUpFront) {
  TempDir dir;
  std::string path = dir.write("huge.sg", "graph");
  std::filesystem::resize_file(path, (uint64_t{1} << 30) + 1);
  CliResult r = runCli({"inspect", path}, {}, 30);
  EXPECT_TRUE(failsWithOneLine(r, 1, "over the 1.0 GiB limit for a text graph"));
}

/// A bad .onnx file fails cleanly whether or not the importer is built in.
TEST(CliLoadErrors, GarbageOnnxFile) {
  TempDir dir;
  std::string path = dir.write("model.onnx", std::string("\x08\x07\x12\xff\xff\xff garbage", 14));
  CliResult r = runCli({"inspect", path});
#if SUBGRAPH_CLI_TEST_HAVE_ONNX
  EXPECT_TRUE(failsWithOneLine(r, 1, "model.onnx"));
#else
  EXPECT_TRUE(failsWithOneLine(r, 1, "built without the ONNX importer"));
#endif
  std::string empty = dir.write("empty.onnx", "");
#if SUBGRAPH_CLI_TEST_HAVE_ONNX
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", empty}), 1, "file is empty"));
#else
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", empty}), 1, "built without the ONNX importer"));
#endif
}

}  // namespace
}  // namespace subgraph::cli::testing
