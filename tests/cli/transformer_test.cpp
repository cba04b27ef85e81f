//===- tests/cli/transformer_test.cpp - Transformer blocks end to end -----===//
//
// The tiny transformer layers of tests/data/graphs (tiny_bert.sg as the
// TorchScript exporter writes BERT, tiny_bert_fp16.sg the same from
// model.half(), tiny_gpt2.sg as the dynamo exporter writes GPT-2;
// make_transformer_blocks.py) through the program: the
// default passes leave Attention, Gelu and LayerNormalization, and
// `run --check` compares the result with the model as written on the
// reference backend. An ONNX file written at the model's old opset has the
// new ops written out again and computes the same.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string block(const std::string& name) { return sourcePath("tests/data/graphs/" + name); }

// An .npy file of int64 `values` with `shape` "(1, 6)", written by hand: the
// program reads what numpy writes.
std::string npyInt64(TempDir& dir, const std::string& name, const std::string& shape,
                     const std::vector<int64_t>& values) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  return dir.write(name, bytes);
}

/// BERT's layer: the attention, the erf GELU and both written-out layer
/// norms become single ops, and the result matches the model as written.
TEST(CliTransformer, BertLayerBecomesAttentionGeluAndLayerNorm) {
  TempDir dir;
  std::string out = (dir.path() / "part.sg").string();
  CliResult p = runCli({"partition", block("tiny_bert.sg"), "--backend", "convbn", "-o", out});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  std::string text = readFile(out);
  EXPECT_THAT(text, HasSubstr("Attention("));
  EXPECT_THAT(text, HasSubstr("q_num_heads = 2"));
  EXPECT_THAT(text, HasSubstr("Gelu("));
  EXPECT_THAT(text, HasSubstr("LayerNormalization("));
  for (const char* gone : {"Softmax(", "Transpose(", "Erf(", "ReduceMean("})
    EXPECT_THAT(text, Not(HasSubstr(gone))) << gone;
  CliResult r = runCli(
      {"run", block("tiny_bert.sg"), "--backend", "convbn", "--random-inputs", "3", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
}

/// GPT-2's block as the dynamo exporter writes it: the Split-fed
/// attention with its IsNaN guard and the tanh GELU become single ops.
TEST(CliTransformer, Gpt2BlockBecomesAttentionAndTanhGelu) {
  TempDir dir;
  std::string out = (dir.path() / "part.sg").string();
  CliResult p = runCli({"partition", block("tiny_gpt2.sg"), "--backend", "convbn", "-o", out});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  std::string text = readFile(out);
  EXPECT_THAT(text, HasSubstr("Attention(%qs, %ks, %vs, %mask)"));
  EXPECT_THAT(text, HasSubstr("approximate = \"tanh\""));
  for (const char* gone : {"IsNaN(", "Pow(", "Tanh(", "Softmax("})
    EXPECT_THAT(text, Not(HasSubstr(gone))) << gone;
  CliResult r = runCli(
      {"run", block("tiny_gpt2.sg"), "--backend", "convbn", "--random-inputs", "4", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
}

/// A model that quantizes at run time is judged by its output's scale
/// (2e-3), and says so; a --tolerance given keeps the element rule.
TEST(CliTransformer, RequantizingModelsAreCheckedByScale) {
  TempDir dir;
  std::string model = dir.write("q.sg", R"(graph @q(%x: f32[2, 8]) opset(ai.onnx = 14) {
  %w = const i8[8, 4] splat(3)
  %wz = const i8[] [0]
  %ws = const f32[] [0.01]
  %q, %s, %z = DynamicQuantizeLinear(%x)
  %a = MatMulInteger(%q, %w, %z, %wz)
  %f = Cast(%a) {to = 1}
  %c = Mul(%s, %ws)
  %y = Mul(%f, %c)
  return %y
}
)");
  CliResult r = runCli({"run", model, "--random-inputs", "1", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("quantizes at run time; judging by the output scale"));
  CliResult given =
      runCli({"run", model, "--random-inputs", "1", "--check", "--tolerance", "1e-3"});
  ASSERT_EQ(given.exitCode, 0) << given.err;
  EXPECT_THAT(given.err, Not(HasSubstr("quantizes at run time")));
}

/// The same layer exported from model.half(): the passes compute it in
/// f32 and find the same three ops, the GELU's coefficients written in f16
/// (sqrt 2 as 1.4140625) and each layer norm between its Cast up and Cast
/// down; only the f16 input and output and the mask's Casts stay outside
/// onednn's regions, and the result matches the f16 model as written.
TEST(CliTransformer, Fp16BertLayerComputesInF32WithTheSameOps) {
  TempDir dir;
  std::string out = (dir.path() / "part.sg").string();
  CliResult p = runCli({"partition", block("tiny_bert_fp16.sg"), "--backend", "onednn", "-o", out});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  std::string text = readFile(out);
  for (const char* gone : {"Erf(", "ReduceMean(", "Pow(", "Softmax(", "Transpose("})
    EXPECT_THAT(text, Not(HasSubstr(gone))) << gone;
  // What the regions leave: the top-level nodes (two-space indent).
  std::istringstream lines(text);
  std::string line, left;
  while (std::getline(lines, line)) {
    if (line.rfind("  %", 0) != 0 || line.find(" = const ") != std::string::npos) continue;
    std::smatch op;
    if (std::regex_search(line, op, std::regex(R"(= ([A-Za-z.]+)\()")) &&
        op[1].str().rfind("subgraph.onednn.", 0) != 0)
      left += op[1].str() + " ";
  }
  EXPECT_EQ(left, "Cast Cast Cast Reshape Cast ");
  // A padding mask of 0s and 1s: random integers 0..9 would scale the mask
  // past f16's range in the model as written.
  std::string mask = npyInt64(dir, "mask.npy", "(1, 6)", {1, 1, 1, 1, 0, 0});
  CliResult r = runCli({"run", block("tiny_bert_fp16.sg"), "--backend", "onednn", "--input",
                        "attention_mask=" + mask, "--random-inputs", "3", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
}

#if SUBGRAPH_CLI_TEST_HAVE_ONNX
/// Written as ONNX, BERT's opset-14 layer stays opset 14: Attention and
/// Gelu are written out again (no such op in the file), and the file
/// computes what the passes' graph does, which the passes find again.
TEST(CliTransformer, OnnxAtTheOldOpsetWritesTheNewOpsOut) {
  TempDir dir;
  std::string onnx = (dir.path() / "part.onnx").string();
  CliResult p = runCli({"partition", block("tiny_bert.sg"), "--backend", "convbn", "-o", onnx});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  CliResult i = runCli({"inspect", onnx});
  ASSERT_EQ(i.exitCode, 0) << i.err;
  EXPECT_THAT(i.out, Not(HasSubstr("Attention")));
  EXPECT_THAT(i.out, Not(HasSubstr("Gelu")));
  EXPECT_THAT(i.out, HasSubstr("Softmax"));
  CliResult r = runCli({"run", onnx, "--backend", "convbn", "--random-inputs", "3", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
  CliResult again =
      runCli({"partition", onnx, "--backend", "convbn", "-o", (dir.path() / "again.sg").string()});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_THAT(readFile((dir.path() / "again.sg").string()), HasSubstr("Attention("));
}
#endif

}  // namespace
}  // namespace subgraph::cli::testing
