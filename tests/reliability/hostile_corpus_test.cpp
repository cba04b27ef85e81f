//===- tests/reliability/hostile_corpus_test.cpp - Adversarial models, each judged -===//
//
// A corpus of hostile models, generated here rather than stored, grouped
// as docs/reliability.md's table lists them (issue 32). Each case is a text
// graph that goes through what every caller does: parse, then a reference
// Session (load, compile, run) with a memory limit, on small inputs. The
// harness never verifies by itself: Session::load must. A case ends in one
// of two ways, and which one is part of the case:
//  - a clean error: a non-empty, one-line Status (no signal, no hang, no
//    allocation past the limit), containing the case's needle;
//  - a correct result, checked against an oracle written here with 128-bit
//    integers (for the overflow group) or plain truth tables (bool group).
// A crash fails the whole test binary, which is the point.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/runtime/session.h"

namespace subgraph {
namespace {

using runtime::NamedTensor;
using runtime::RunResult;
using runtime::Session;
using runtime::SessionOptions;

__extension__ typedef __int128 Int128;  // exact oracles for int64 size formulas

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
/// The memory limit every case runs under: far above what a correct case
/// needs, far below what an overflowing size asks for.
constexpr uint64_t kMemoryLimit = uint64_t{64} << 20;

/// One hostile model and what it must end in.
struct HostileCase {
  std::string group;  ///< The docs/reliability.md group.
  std::string name;   ///< Unique within the group.
  std::string text;   ///< The model, in the text format.
  /// Inputs by graph-input order; empty: every input is filled with 1s.
  std::vector<NamedTensor> inputs;
  /// Empty: the case must fail, with `needle` in the message. Set: the
  /// case may not fail, and this checks the outputs.
  std::function<void(const RunResult&)> check;
  std::string needle;
  /// Either ending will do (the sweep group, which has no oracle): a run,
  /// or one clean error line. Neither a signal nor, under the sanitizers,
  /// undefined behaviour.
  bool eitherEnding = false;
};

/// Ones for every element of `type` (static shapes only in this corpus).
Tensor onesFor(const TensorType& type) {
  std::vector<int64_t> dims;
  for (const Dim& d : *type.shape) dims.push_back(d.size());
  Tensor ones = Tensor::splat(type.dtype, dims, 1.0);
  return ones;
}

/// Parses and runs `c`; returns the first error, or OK with `result` set.
Status runCase(const HostileCase& c, RunResult& result) {
  ParseOptions parse;
  parse.maxGraphDepth = std::numeric_limits<int>::max();
  StatusOr<std::unique_ptr<Graph>> graph = parseGraph(c.text, parse);
  if (!graph.isOk()) return graph.status();
  std::vector<NamedTensor> inputs = c.inputs;
  if (inputs.empty())
    for (const Value* v : (*graph)->inputs()) inputs.push_back({v->name(), onesFor(v->type())});
  SessionOptions options;
  options.threads = 1;
  options.memoryLimitBytes = kMemoryLimit;
  Session session(options);
  SUBGRAPH_RETURN_IF_ERROR(session.load(std::move(graph).value()));
  SUBGRAPH_RETURN_IF_ERROR(session.compile());
  StatusOr<RunResult> ran = session.run(inputs);
  if (!ran.isOk()) return ran.status();
  result = std::move(ran).value();
  return Status::ok();
}

/// Runs every case and checks its ending; returns how many ran.
size_t runAll(const std::vector<HostileCase>& cases) {
  for (const HostileCase& c : cases) {
    SCOPED_TRACE(c.group + "/" + c.name + "\n" + c.text);
    RunResult result;
    Status status = runCase(c, result);
    if (c.eitherEnding) {
      if (!status.isOk()) {
        EXPECT_FALSE(status.message().empty());
        EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
      }
    } else if (c.check) {
      EXPECT_TRUE(status.isOk()) << status.message();
      if (status.isOk()) c.check(result);
    } else {
      EXPECT_FALSE(status.isOk()) << "expected an error";
      if (status.isOk()) continue;
      EXPECT_FALSE(status.message().empty());
      EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
      EXPECT_THAT(status.message(), ::testing::HasSubstr(c.needle));
    }
  }
  return cases.size();
}

/// The elements as int64: exact for i64 tensors (read from the bytes, as a
/// double would round values near 2^63), converted for the others.
std::vector<int64_t> int64s(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numElements()));
  if (t.dtype() == DataType::kInt64) {
    if (!v.empty()) std::memcpy(v.data(), t.bytes().data(), v.size() * sizeof(int64_t));
    return v;
  }
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<int64_t>(t.elementAsDouble(static_cast<int64_t>(i)));
  return v;
}

//===--- Group 1: malformed structure ------------------------------------===//

/// An op with its required inputs (by type) and the attributes it needs.
struct OpForm {
  std::string op;
  std::vector<std::string> operands;  ///< Names of graph inputs it reads.
  std::string attrs;                  ///< " {…}" or empty.
};

/// The graph inputs every form draws from: floats, ints and bools.
constexpr const char* kInputs =
    "%a: f32[2, 2], %b: f32[2, 2], %c: f32[2, 2], %i: i64[2], %p: bool[2, 2], %q: bool[2, 2]";

std::vector<OpForm> opForms() {
  std::vector<OpForm> forms;
  for (const char* unary : {"Relu",  "Neg",  "Abs",      "Exp",        "Sigmoid", "Tanh", "Sqrt",
                            "Floor", "Ceil", "Identity", "Reciprocal", "Sin",     "Cos",  "Log",
                            "Erf",   "Sign", "Softplus", "HardSwish",  "Round",   "IsNaN"})
    forms.push_back({unary, {"%a"}, ""});
  for (const char* binary :
       {"Add", "Sub", "Mul", "Div", "Pow", "MatMul", "Equal", "Less", "Greater", "PRelu", "Mod"})
    forms.push_back({binary, {"%a", "%b"}, ""});
  for (const char* logical : {"And", "Or", "Xor"}) forms.push_back({logical, {"%p", "%q"}, ""});
  forms.push_back({"Not", {"%p"}, ""});
  forms.push_back({"Where", {"%p", "%a", "%b"}, ""});
  forms.push_back({"Gemm", {"%a", "%b"}, ""});
  forms.push_back({"Softmax", {"%a"}, " {axis = 1}"});
  forms.push_back({"Transpose", {"%a"}, ""});
  forms.push_back({"Reshape", {"%a", "%i"}, ""});
  forms.push_back({"Gather", {"%a", "%i"}, ""});
  forms.push_back({"Expand", {"%a", "%i"}, ""});
  forms.push_back({"Tile", {"%a", "%i"}, ""});
  forms.push_back({"Slice", {"%a", "%i", "%i"}, ""});
  forms.push_back({"Concat", {"%a", "%b"}, " {axis = 0}"});
  forms.push_back({"Cast", {"%a"}, " {to = 7}"});
  forms.push_back({"ReduceSum", {"%a"}, ""});
  forms.push_back({"Flatten", {"%a"}, ""});
  forms.push_back({"LayerNormalization", {"%a", "%b"}, ""});
  return forms;
}

/// `form` with operand `missing` replaced by '_' (none: all present),
/// returning its result unless `noOutputs`.
std::string formGraph(const OpForm& form, size_t missing, bool noOutputs) {
  std::string operands;
  for (size_t k = 0; k < form.operands.size(); ++k)
    operands += (k ? ", " : "") + (k == missing ? std::string("_") : form.operands[k]);
  std::string call = form.op + "(" + operands + ")" + form.attrs;
  std::string body = noOutputs ? "  " + call + "\n  %y = Identity(%a)\n" : "  %y = " + call + "\n";
  return std::string("graph @g(") + kInputs + ") {\n" + body + "  return %y\n}\n";
}

std::vector<HostileCase> malformedStructureCases() {
  std::vector<HostileCase> cases;
  for (const OpForm& form : opForms()) {
    for (size_t k = 0; k < form.operands.size(); ++k)
      cases.push_back({"structure",
                       form.op + "-missing-input-" + std::to_string(k),
                       formGraph(form, k, false),
                       {},
                       nullptr,
                       "invalid graph"});
    cases.push_back({"structure",
                     form.op + "-no-outputs",
                     formGraph(form, SIZE_MAX, true),
                     {},
                     nullptr,
                     "invalid graph"});
  }
  // The same inside a body graph: the nested graphs are verified too.
  for (const char* op : {"Add", "Mul", "Sub"})
    cases.push_back({"structure",
                     std::string("if-branch-") + op + "-missing-input",
                     std::string(R"(graph @g(%a: f32[2], %c: bool[]) {
  %y: f32[2] = If(%c) {then_branch = graph @t() {
      %t: f32[2] = )") + op +
                         R"((%a, _)
      return %t
    }, else_branch = graph @e() {
      %e: f32[2] = Identity(%a)
      return %e
    }}
  return %y
})",
                     {},
                     nullptr,
                     "required input"});
  return cases;
}

TEST(HostileCorpus, MalformedStructureIsAnErrorLineNotACrash) {
  EXPECT_GE(runAll(malformedStructureCases()), 100u);
}

//===--- Group 2: integer overflow in sizes -------------------------------===//

std::string depthSpaceGraph(const char* op, int64_t blocksize, const char* mode) {
  return "graph @g(%x: f32[1, 4, 2, 2]) {\n  %y = " + std::string(op) +
         "(%x) {blocksize = " + std::to_string(blocksize) + mode + "}\n  return %y\n}\n";
}

std::string sliceGraph(int64_t start, int64_t end, int64_t step) {
  return "graph @g(%x: i64[5]) {\n  %s = const i64[1] [" + std::to_string(start) +
         "]\n  %e = const i64[1] [" + std::to_string(end) + "]\n  %a = const i64[1] [0]\n" +
         "  %t = const i64[1] [" + std::to_string(step) +
         "]\n  %y = Slice(%x, %s, %e, %a, %t)\n  return %y\n}\n";
}

/// ONNX Slice on [0, 1, 2, 3, 4], computed with 128-bit integers.
std::vector<int64_t> sliceOracle(int64_t start, int64_t end, int64_t step) {
  const Int128 dim = 5;
  auto adjust = [&](Int128 v) { return v < 0 ? v + dim : v; };
  Int128 s = adjust(start), e = adjust(end);
  std::vector<int64_t> out;
  if (step > 0) {
    s = std::clamp<Int128>(s, 0, dim);
    e = std::clamp<Int128>(e, 0, dim);
    for (Int128 i = s; i < e; i += step) out.push_back(static_cast<int64_t>(i));
  } else {
    s = std::clamp<Int128>(s, 0, dim - 1);
    e = std::clamp<Int128>(e, -1, dim - 1);
    for (Int128 i = s; i > e; i += step) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

std::string padGraph(int64_t begin, int64_t end) {
  return "graph @g(%x: i64[3]) {\n  %p = const i64[2] [" + std::to_string(begin) + ", " +
         std::to_string(end) + "]\n  %y = Pad(%x, %p)\n  return %y\n}\n";
}

Tensor int64Scalar(int64_t v) {
  std::vector<std::byte> bytes(8);
  std::memcpy(bytes.data(), &v, 8);
  return Tensor(DataType::kInt64, {1}, std::move(bytes));
}

/// Integer Div and Mod at the ends of the range and by zero: no SIGFPE,
/// and the documented answers (0 for a zero divisor, wrap for MIN / -1,
//===--- Group: every integer a model gives, at the extremes ------------===//

/// Ops whose integer attributes or integer inputs size, index or shape
/// something, each a small valid graph with `$V` where the integer goes.
std::vector<std::pair<std::string, std::string>> integerSweepForms() {
  const std::string x4 = "graph @g(%x: f32[1, 2, 5, 5]) {\n";
  const std::string x2 = "graph @g(%x: f32[3, 4]) {\n";
  const std::string w = "  %w = const f32[2, 2, 3, 3] splat(1.0)\n";
  const std::string ret = "  return %y\n}\n";
  auto k = [](const char* name) { return std::string("  %") + name + " = const i64[1] [$V]\n"; };
  return {
      {"Conv-strides", x4 + w + "  %y = Conv(%x, %w) {strides = [$V, 1]}\n" + ret},
      {"Conv-dilations", x4 + w + "  %y = Conv(%x, %w) {dilations = [1, $V]}\n" + ret},
      {"Conv-pads", x4 + w + "  %y = Conv(%x, %w) {pads = [$V, 0, 0, $V]}\n" + ret},
      {"Conv-group", x4 + w + "  %y = Conv(%x, %w) {group = $V}\n" + ret},
      {"ConvTranspose-strides",
       x4 + w + "  %y = ConvTranspose(%x, %w) {strides = [$V, 1]}\n" + ret},
      {"ConvTranspose-pads",
       x4 + w + "  %y = ConvTranspose(%x, %w) {pads = [$V, 0, 0, 0]}\n" + ret},
      {"ConvTranspose-output_padding",
       x4 + w + "  %y = ConvTranspose(%x, %w) {strides = [2, 2], output_padding = [$V, 0]}\n" +
           ret},
      {"ConvTranspose-output_shape",
       x4 + w + "  %y = ConvTranspose(%x, %w) {output_shape = [$V, 5]}\n" + ret},
      {"MaxPool-kernel", x4 + "  %y = MaxPool(%x) {kernel_shape = [$V, 1]}\n" + ret},
      {"MaxPool-strides",
       x4 + "  %y = MaxPool(%x) {kernel_shape = [2, 2], strides = [$V, 1]}\n" + ret},
      {"MaxPool-dilations",
       x4 + "  %y = MaxPool(%x) {kernel_shape = [2, 2], dilations = [$V, 1]}\n" + ret},
      {"AveragePool-pads",
       x4 + "  %y = AveragePool(%x) {kernel_shape = [2, 2], pads = [0, $V, 0, 0]}\n" + ret},
      {"LpPool-p", x4 + "  %y = LpPool(%x) {kernel_shape = [2, 2], p = $V}\n" + ret},
      {"Concat-axis", x2 + "  %y = Concat(%x, %x) {axis = $V}\n" + ret},
      {"Softmax-axis", x2 + "  %y = Softmax(%x) {axis = $V}\n" + ret},
      {"Flatten-axis", x2 + "  %y = Flatten(%x) {axis = $V}\n" + ret},
      {"Gather-axis", x2 + "  %i = const i64[1] [1]\n  %y = Gather(%x, %i) {axis = $V}\n" + ret},
      {"Gather-index", x2 + k("i") + "  %y = Gather(%x, %i)\n" + ret},
      {"GatherElements-axis",
       x2 + "  %i = const i64[3, 4] splat(0)\n  %y = GatherElements(%x, %i) {axis = $V}\n" + ret},
      {"ArgMax-axis", x2 + "  %y = ArgMax(%x) {axis = $V}\n" + ret},
      {"TopK-k", x2 + k("n") + "  %y, %yi = TopK(%x, %n)\n" + ret},
      {"TopK-axis", x2 + "  %n = const i64[1] [1]\n  %y, %yi = TopK(%x, %n) {axis = $V}\n" + ret},
      {"Split-sizes",
       x2 + "  %s = const i64[2] [$V, 1]\n  %y, %z = Split(%x, %s) {axis = 1}\n" + ret},
      {"Unsqueeze-axes", x2 + k("a") + "  %y = Unsqueeze(%x, %a)\n" + ret},
      {"Squeeze-axes", x2 + k("a") + "  %y = Squeeze(%x, %a)\n" + ret},
      {"ReduceSum-axes", x2 + k("a") + "  %y = ReduceSum(%x, %a)\n" + ret},
      {"CumSum-axis", x2 + "  %a = const i64[] [$V]\n  %y = CumSum(%x, %a)\n" + ret},
      {"OneHot-depth",
       "graph @g(%x: i64[3]) {\n  %d = const i64[] [$V]\n  %v = const f32[2] [0.0, 1.0]\n"
       "  %y = OneHot(%x, %d, %v)\n" +
           ret},
      {"OneHot-axis",
       "graph @g(%x: i64[3]) {\n  %d = const i64[] [4]\n  %v = const f32[2] [0.0, 1.0]\n"
       "  %y = OneHot(%x, %d, %v) {axis = $V}\n" +
           ret},
      {"Trilu-k", x2 + "  %n = const i64[] [$V]\n  %y = Trilu(%x, %n)\n" + ret},
      {"Range-limit",
       "graph @g(%x: i64[]) {\n  %s = const i64[] [0]\n  %l = const i64[] [$V]\n"
       "  %d = const i64[] [1]\n  %y = Range(%s, %l, %d)\n" +
           ret},
      {"Range-delta",
       "graph @g(%x: i64[]) {\n  %s = const i64[] [0]\n  %l = const i64[] [10]\n"
       "  %d = const i64[] [$V]\n  %y = Range(%s, %l, %d)\n" +
           ret},
      {"Expand-shape", x2 + "  %s = const i64[2] [$V, 4]\n  %y = Expand(%x, %s)\n" + ret},
      {"ConstantOfShape",
       "graph @g(%x: f32[1]) {\n  %s = const i64[2] [$V, 2]\n  %y = ConstantOfShape(%s)\n" + ret},
      {"Resize-sizes",
       x4 + "  %s = const i64[4] [1, 2, $V, 5]\n  %y = Resize(%x, _, _, %s)\n" + ret},
      {"Shape-start", x2 + "  %y = Shape(%x) {start = $V}\n" + ret},
      {"Shape-end", x2 + "  %y = Shape(%x) {end = $V}\n" + ret},
      {"Transpose-perm", x2 + "  %y = Transpose(%x) {perm = [$V, 0]}\n" + ret},
      {"LRN-size", x4 + "  %y = LRN(%x) {size = $V}\n" + ret},
      {"Hardmax-axis", x2 + "  %y = Hardmax(%x) {axis = $V}\n" + ret},
      {"LpNormalization-p", x2 + "  %y = LpNormalization(%x) {p = $V}\n" + ret},
      {"ReverseSequence-axes",
       x2 +
           "  %l = const i64[4] [1, 2, 3, 1]\n"
           "  %y = ReverseSequence(%x, %l) {batch_axis = 1, time_axis = $V}\n" +
           ret},
      {"SpaceToDepth", x4 + "  %y = SpaceToDepth(%x) {blocksize = $V}\n" + ret},
      {"Compress-axis",
       x2 + "  %c = const bool[3] [1, 0, 1]\n  %y = Compress(%x, %c) {axis = $V}\n" + ret},
      {"ReduceMax-keepdims", x2 + "  %y = ReduceMax(%x) {keepdims = $V}\n" + ret},
  };
}

std::vector<HostileCase> integerSweepCases() {
  const int64_t values[] = {kMax,
                            kMin,
                            int64_t{1} << 31,
                            -(int64_t{1} << 31),
                            int64_t{1} << 32,
                            int64_t{1} << 62,
                            -(int64_t{1} << 62),
                            -1,
                            0};
  std::vector<HostileCase> cases;
  for (const auto& [name, form] : integerSweepForms())
    for (int64_t v : values) {
      std::string text = form;
      for (size_t at; (at = text.find("$V")) != std::string::npos;)
        text.replace(at, 2, std::to_string(v));
      HostileCase c{"sweep", name + "=" + std::to_string(v), text, {}, nullptr, {}};
      c.eitherEnding = true;
      cases.push_back(std::move(c));
    }
  return cases;
}

/// Every integer attribute and integer input of 45 op forms at INT64_MAX,
/// INT64_MIN, +-2^31, 2^32, +-2^62, -1 and 0: a run or one error line,
/// never a signal, and (in the asan preset) never undefined behaviour.
TEST(HostileCorpus, EveryModelIntegerAtTheExtremesEndsCleanly) {
  EXPECT_GE(runAll(integerSweepCases()), 400u);
}

/// the divisor's sign for Mod).
void appendIntegerDivisionCases(std::vector<HostileCase>& cases) {
  const int64_t values[] = {kMin, -7, 0, 7, kMax};
  const int64_t divisors[] = {0, -1, 1, 3, kMin};
  for (int64_t x : values)
    for (int64_t y : divisors) {
      const Int128 wx = x, wy = y;
      int64_t quotient = 0, modulus = 0;
      if (y != 0) {
        Int128 q = wx / wy;  // truncation; MIN / -1 = 2^63 wraps to MIN
        quotient = static_cast<int64_t>(static_cast<uint64_t>(q));
        Int128 r = wx % wy;
        if (r != 0 && ((r < 0) != (wy < 0))) r += wy;
        modulus = static_cast<int64_t>(r);
      }
      const std::string graph =
          "graph @g(%x: i64[1], %d: i64[1]) {\n  %y = OP(%x, %d)\n  return %y\n}\n";
      for (const auto& [op, want] : {std::pair{"Div", quotient}, std::pair{"Mod", modulus}}) {
        std::string text = graph;
        text.replace(text.find("OP"), 2, op);
        const int64_t expected = want;
        cases.push_back({"overflow",
                         std::string(op) + "-" + std::to_string(x) + "-by-" + std::to_string(y),
                         text,
                         {{"x", int64Scalar(x)}, {"d", int64Scalar(y)}},
                         [expected](const RunResult& r) {
                           EXPECT_EQ(int64s(r.outputs[0].tensor), std::vector<int64_t>{expected});
                         },
                         ""});
      }
    }
}

std::vector<HostileCase> overflowCases() {
  std::vector<HostileCase> cases;
  const int64_t blocks[] = {int64_t{1} << 31,
                            int64_t{1} << 32,
                            (int64_t{1} << 32) + 1,
                            int64_t{1} << 62,
                            kMax,
                            3037000500,
                            3037000499,
                            kMin};
  for (int64_t b : blocks) {
    for (const char* mode : {"", ", mode = \"DCR\"", ", mode = \"CRD\""})
      cases.push_back({"overflow",
                       "DepthToSpace-" + std::to_string(b) + mode,
                       depthSpaceGraph("DepthToSpace", b, mode),
                       {},
                       nullptr,
                       "blocksize"});
    cases.push_back({"overflow",
                     "SpaceToDepth-" + std::to_string(b),
                     depthSpaceGraph("SpaceToDepth", b, ""),
                     {},
                     nullptr,
                     ""});
  }
  const int64_t bounds[] = {0, 4, -1, kMax, kMin, kMax - 1, kMin + 1};
  const int64_t steps[] = {1, -1, kMax, kMin, kMax - 1, kMin + 1, int64_t{1} << 62, 3};
  Tensor x(DataType::kInt64, {5}, [] {
    std::vector<std::byte> bytes(5 * 8);
    for (int64_t i = 0; i < 5; ++i) std::memcpy(bytes.data() + i * 8, &i, 8);
    return bytes;
  }());
  for (int64_t start : bounds)
    for (int64_t end : {int64_t{5}, int64_t{-6}, kMax, kMin})
      for (int64_t step : steps) {
        std::vector<int64_t> want = sliceOracle(start, end, step);
        cases.push_back(
            {"overflow",
             "Slice-" + std::to_string(start) + ":" + std::to_string(end) + ":" +
                 std::to_string(step),
             sliceGraph(start, end, step),
             {{"x", x}},
             [want](const RunResult& r) { EXPECT_EQ(int64s(r.outputs[0].tensor), want); },
             ""});
      }
  const int64_t pads[] = {0, 1, -1, -3, kMax, kMax - 2, kMin, kMin + 3, int64_t{1} << 40};
  Tensor three(DataType::kInt64, {3}, std::vector<std::byte>(3 * 8, std::byte{7}));
  for (int64_t begin : pads)
    for (int64_t end : pads) {
      const Int128 size = Int128{3} + begin + end;
      HostileCase c{"overflow",
                    "Pad-" + std::to_string(begin) + "," + std::to_string(end),
                    padGraph(begin, end),
                    {{"x", three}},
                    nullptr,
                    ""};
      if (size >= 0 && size <= 16)
        c.check = [begin, size, three](const RunResult& r) {
          const std::vector<int64_t> in = int64s(three);
          std::vector<int64_t> want;
          for (Int128 o = 0; o < size; ++o) {
            const Int128 from = o - begin;
            want.push_back(from >= 0 && from < 3 ? in[static_cast<size_t>(from)] : 0);
          }
          EXPECT_EQ(int64s(r.outputs[0].tensor), want);
        };
      cases.push_back(std::move(c));
    }
  appendIntegerDivisionCases(cases);
  return cases;
}

TEST(HostileCorpus, SizesFromModelDataNeverWrap) { EXPECT_GE(runAll(overflowCases()), 200u); }

//===--- Group 3: memory ------------------------------------------------===//

std::vector<HostileCase> memoryCases() {
  std::vector<HostileCase> cases;
  const int64_t sizes[] = {int64_t{1} << 30, int64_t{1} << 40, int64_t{1} << 62, kMax};
  for (int64_t n : sizes) {
    const std::string dims = std::to_string(n);
    cases.push_back({"memory",
                     "ConstantOfShape-" + dims,
                     "graph @g() {\n  %s = const i64[1] [" + dims +
                         "]\n  %y = ConstantOfShape(%s)\n  return %y\n}\n",
                     {},
                     nullptr,
                     ""});
    cases.push_back({"memory",
                     "Expand-" + dims,
                     "graph @g(%x: f32[1]) {\n  %s = const i64[2] [" + dims +
                         ", 4]\n  %y = Expand(%x, %s)\n  return %y\n}\n",
                     {},
                     nullptr,
                     ""});
    cases.push_back({"memory",
                     "Tile-" + dims,
                     "graph @g(%x: f32[2]) {\n  %s = const i64[1] [" + dims +
                         "]\n  %y = Tile(%x, %s)\n  return %y\n}\n",
                     {},
                     nullptr,
                     ""});
    cases.push_back({"memory",
                     "Reshape-" + dims,
                     "graph @g(%x: f32[2]) {\n  %s = const i64[2] [" + dims + ", " + dims +
                         "]\n  %y = Reshape(%x, %s)\n  return %y\n}\n",
                     {},
                     nullptr,
                     ""});
    cases.push_back({"memory",
                     "Range-" + dims,
                     "graph @g() {\n  %a = const i64[] [0]\n  %b = const i64[] [" + dims +
                         "]\n  %d = const i64[] [1]\n  %y = Range(%a, %b, %d)\n  return %y\n}\n",
                     {},
                     nullptr,
                     ""});
  }
  cases.push_back({"memory",
                   "Range-min-to-max",
                   "graph @g() {\n  %a = const i64[] [" + std::to_string(kMin) +
                       "]\n  %b = const i64[] [" + std::to_string(kMax) +
                       "]\n  %d = const i64[] [1]\n  %y = Range(%a, %b, %d)\n  return %y\n}\n",
                   {},
                   nullptr,
                   ""});
  return cases;
}

TEST(HostileCorpus, HugeAllocationsFailAgainstTheMemoryLimit) {
  EXPECT_GE(runAll(memoryCases()), 20u);
}

//===--- Group 4: bool bytes other than 0 and 1 -------------------------===//

/// A bool tensor with raw bytes, as a hostile .npy or initializer holds.
Tensor rawBools(std::vector<uint8_t> bytes) {
  std::vector<std::byte> raw(bytes.size());
  std::memcpy(raw.data(), bytes.data(), bytes.size());
  return Tensor(DataType::kBool, {static_cast<int64_t>(bytes.size())}, std::move(raw));
}

TEST(HostileCorpus, BoolBytesAreCanonicalAtEveryEntry) {
  const std::vector<uint8_t> p = {0, 1, 2, 255, 2, 0x80};
  const std::vector<uint8_t> q = {0, 1, 1, 2, 0, 0x80};
  Tensor tp = rawBools(p);
  for (std::byte b : tp.bytes()) EXPECT_LE(static_cast<int>(b), 1);
  auto truth = [](uint8_t v) { return v != 0; };
  struct LogicCase {
    const char* op;
    std::function<bool(bool, bool)> f;
  };
  const LogicCase ops[] = {{"And", [](bool a, bool b) { return a && b; }},
                           {"Or", [](bool a, bool b) { return a || b; }},
                           {"Xor", [](bool a, bool b) { return a != b; }},
                           {"Equal", [](bool a, bool b) { return a == b; }}};
  std::vector<HostileCase> cases;
  for (const LogicCase& op : ops) {
    std::vector<int64_t> want;
    for (size_t i = 0; i < p.size(); ++i) want.push_back(op.f(truth(p[i]), truth(q[i])));
    auto check = [want](const RunResult& r) { EXPECT_EQ(int64s(r.outputs[0].tensor), want); };
    cases.push_back({"bool",
                     std::string(op.op) + "-inputs",
                     "graph @g(%p: bool[6], %q: bool[6]) {\n  %y = " + std::string(op.op) +
                         "(%p, %q)\n  return %y\n}\n",
                     {{"p", rawBools(p)}, {"q", rawBools(q)}},
                     check,
                     ""});
  }
  std::vector<int64_t> notWant, castWant;
  for (uint8_t v : p) notWant.push_back(!truth(v)), castWant.push_back(truth(v));
  cases.push_back(
      {"bool",
       "Not",
       "graph @g(%p: bool[6]) {\n  %y = Not(%p)\n  return %y\n}\n",
       {{"p", rawBools(p)}},
       [notWant](const RunResult& r) { EXPECT_EQ(int64s(r.outputs[0].tensor), notWant); },
       ""});
  for (int to : {1, 6, 7, 11})  // f32, i32, i64, f64
    cases.push_back(
        {"bool",
         "Cast-to-" + std::to_string(to),
         "graph @g(%p: bool[6]) {\n  %y = Cast(%p) {to = " + std::to_string(to) +
             "}\n  return %y\n}\n",
         {{"p", rawBools(p)}},
         [castWant](const RunResult& r) { EXPECT_EQ(int64s(r.outputs[0].tensor), castWant); },
         ""});
  EXPECT_EQ(runAll(cases), 9u);
}

/// A bool constant with a stray byte gives the same answer folded or not.
TEST(HostileCorpus, BoolConstantFoldsToTheAnswerItRunsTo) {
  auto build = [] {
    std::unique_ptr<Graph> g = parseGraphOrThrow(R"(graph @g(%p: bool[2]) {
  %k = const bool[2] [true, false]
  %n = Not(%k)
  %y = And(%n, %p)
  return %y
})");
    Value* k = g->findValue("k");
    g->setInitializer(k, rawBools({0, 2}));  // "false, true" with a stray byte
    return g;
  };
  auto run = [](std::unique_ptr<Graph> g) {
    Session session;
    EXPECT_TRUE(session.load(std::move(g)).isOk());
    EXPECT_TRUE(session.compile().isOk());
    StatusOr<RunResult> r = session.run({{"p", rawBools({1, 1})}});
    EXPECT_TRUE(r.isOk()) << r.status().message();
    return r.isOk() ? int64s(r.value().outputs[0].tensor) : std::vector<int64_t>{};
  };
  std::unique_ptr<Graph> folded = build();
  StatusOr<PassManager> pipeline = parsePassPipeline("default");
  ASSERT_TRUE(pipeline.isOk());
  ASSERT_TRUE(pipeline.value().run(*folded).isOk());
  EXPECT_EQ(run(build()), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run(std::move(folded)), (std::vector<int64_t>{1, 0}));
}

//===--- Group 5: nesting depth and attribute count -----------------------===//

/// `levels` graphs nested through If branches (the main graph is level 1),
/// built in linear time: each level opens a then-branch that the innermost
/// level closes.
std::string nestedIfs(int levels) {
  std::string open, close;
  for (int level = 1; level < levels; ++level) {
    open += "%r: f32[1] = If(%c) {then_branch = graph @t() {\n";
    close +=
        "}, else_branch = graph @e() {\n %r: f32[1] = Identity(%x)\n return %r\n}}\n"
        " return %r\n";
  }
  return "graph @g(%x: f32[1], %c: bool[]) {\n" + open + "%r: f32[1] = Identity(%x)\n return %r\n" +
         close + "}\n";
}

TEST(HostileCorpus, NestingBeyondTheParsersCapIsAnErrorWhateverTheLimitSays) {
  ParseOptions unlimited;
  unlimited.maxGraphDepth = std::numeric_limits<int>::max();
  for (int levels : {2, 64, 65, 200, 256}) {
    SCOPED_TRACE(levels);
    StatusOr<std::unique_ptr<Graph>> g = parseGraph(nestedIfs(levels), unlimited);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    // Every later walk (verify, print, clone, destroy) fits the stack too.
    EXPECT_TRUE(verify(**g).isOk());
    EXPECT_FALSE(printGraph(**g).empty());
    EXPECT_TRUE((*g)->clone() != nullptr);
  }
  for (int levels : {257, 1000, 5000}) {
    SCOPED_TRACE(levels);
    StatusOr<std::unique_ptr<Graph>> g = parseGraph(nestedIfs(levels), unlimited);
    ASSERT_FALSE(g.isOk());
    EXPECT_THAT(g.status().message(), ::testing::HasSubstr("the most the parser's stack holds"));
  }
}

/// Duplicate-attribute detection is linear: 200,000 attributes on one node
/// took 72 s when it was quadratic.
TEST(HostileCorpus, VerifierIsLinearInAttributeCount) {
  std::string attrs;
  constexpr int kCount = 200'000;
  for (int i = 0; i < kCount; ++i) attrs += (i ? ", a" : "a") + std::to_string(i) + " = 1";
  std::string text = "graph @g(%x: f32[1]) {\n  %y = Relu(%x) {" + attrs + "}\n  return %y\n}\n";
  std::unique_ptr<Graph> g = parseGraphOrThrow(text);
  auto start = std::chrono::steady_clock::now();
  Status strict = verify(*g);
  VerifyOptions lenient;
  lenient.allowUnknownAttributes = true;
  Status allowed = verify(*g, lenient);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(strict.isOk());
  EXPECT_TRUE(allowed.isOk()) << allowed.message();
  EXPECT_LT(seconds, 20.0);  // quadratic took 72 s; linear takes ~1 s, ~5 s under ASan
}

}  // namespace
}  // namespace subgraph
