//===- tests/core/op_generator_test.cpp - The opgen build-time generator --===//
//
// Runs the opgen program (built next to this test, under
// <build>/tools/opgen/) on small op tables written to a temporary folder:
// a valid table must produce the typed class and registration, and each
// kind of table mistake must stop with one line naming the file and op.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace subgraph {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// The opgen executable of the build tree this test binary belongs to.
fs::path opgenPath() {
  return fs::canonical("/proc/self/exe").parent_path().parent_path() / "tools" / "opgen" / "opgen";
}

/// A fresh temporary folder, removed when the fixture ends.
class OpGen : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(opgenPath())) << "opgen is not built at " << opgenPath();
    dir_ = fs::temp_directory_path() /
           ("subgraph_opgen_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Writes `json` as table `name` and returns its path.
  fs::path table(const std::string& name, const std::string& json) {
    fs::path p = dir_ / name;
    std::ofstream(p) << json;
    return p;
  }

  /// Runs opgen on `tables`; returns its exit status and combined output.
  std::pair<int, std::string> run(const std::vector<fs::path>& tables) {
    std::string cmd = opgenPath().string() + " --header " + (dir_ / "out.h").string() +
                      " --source " + (dir_ / "out.cpp").string() + " --functions " +
                      (dir_ / "fns.h").string() + " --markdown " + (dir_ / "ops.md").string();
    for (const fs::path& t : tables) cmd += " " + t.string();
    cmd += " 2>&1";
    std::string output;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    std::array<char, 512> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
    int status = ::pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
  }

  std::string read(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  /// The one-line error opgen prints for a table holding `op`.
  std::string errorFor(const std::string& op) {
    auto [status, output] = run({table("bad.json", R"({"ops": [)" + op + "]}")});
    EXPECT_EQ(status, 1) << output;
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << output;
    return output;
  }

  fs::path dir_;
};

constexpr const char* kTypes = R"({"typeSets": {"float": ["f32", "f16"]}})";

/// A valid table yields the typed class, builder, registration, function
/// declarations and the markdown row.
TEST_F(OpGen, GeneratesClassRegistrationAndDocs) {
  auto [status, output] = run({table("types.json", kTypes), table("demo.json", R"({
    "doc": "Demo ops.",
    "ops": [{"name": "Scale", "since": 3, "dataParallel": true, "doc": "x * factor.",
             "inputs": [{"name": "X", "type": "T"}, {"name": "bias", "arity": "optional", "type": "T"}],
             "outputs": [{"name": "Y", "type": "T"}],
             "attributes": [{"name": "scale_factor", "kind": "float", "default": 2.5},
                            {"name": "bias", "kind": "ints"}],
             "typeConstraints": {"T": "@float"}, "infer": "inferScale"}]})")});
  ASSERT_EQ(status, 0) << output;
  const std::string header = read("out.h");
  EXPECT_THAT(header, HasSubstr("class ScaleNode final : public Node {"));
  EXPECT_THAT(header, HasSubstr("Value* getX() const { return input(0); }"));
  EXPECT_THAT(header, HasSubstr("Value* getBias() const { return input(1); }"));
  EXPECT_THAT(header, HasSubstr("float getScaleFactor() const;"));
  // The attribute that shares the input's name gets the Attr suffix.
  EXPECT_THAT(header, HasSubstr("std::optional<std::vector<int64_t>> getBiasAttr() const;"));
  EXPECT_THAT(header, HasSubstr("ScaleNode* createScale(Graph& graph, Value* x, Value* bias = "
                                "nullptr, const ScaleAttrs& attrs = {}"));
  const std::string source = read("out.cpp");
  EXPECT_THAT(source, HasSubstr("{\"scale_factor\", AttrKind::kFloat, false, AttrValue(2.5f)"));
  EXPECT_THAT(source, HasSubstr("s.infer = ops::inferScale;"));
  EXPECT_THAT(source, HasSubstr("{\"T\", {DataType::kFloat32, DataType::kFloat16}}"));
  EXPECT_THAT(read("fns.h"), HasSubstr("Status inferScale(InferenceContext& ctx);"));
  EXPECT_THAT(read("ops.md"), HasSubstr("| Scale | 3 | yes | X, bias? | Y |"));
}

/// An op may live in another domain; its key and schema use it.
TEST_F(OpGen, SupportsOtherDomains) {
  auto [status, output] = run({table("ms.json", R"({"ops": [{"name": "FastGelu",
      "domain": "com.microsoft", "doc": "d", "inputs": [{"name": "X"}], "outputs": [{"name": "Y"}]}]})")});
  ASSERT_EQ(status, 0) << output;
  EXPECT_THAT(read("out.h"), HasSubstr("/// FastGelu (com.microsoft, since opset 1): d"));
  EXPECT_THAT(read("out.cpp"),
              HasSubstr("OpRegistry::global().intern(\"com.microsoft\", kOpType)"));
  EXPECT_THAT(read("out.cpp"), HasSubstr("s.domain = \"com.microsoft\";"));
  EXPECT_THAT(read("ops.md"), HasSubstr("| com.microsoft.FastGelu | 1 |"));
}

/// Each table mistake stops generation with one line naming file and op.
TEST_F(OpGen, RejectsMalformedTables) {
  EXPECT_THAT(errorFor(R"({"name": "A", "doc": "d", "outputs": [{"name": "Y"}],
                          "attributes": [{"name": "k", "kind": "int", "defualt": 1}]})"),
              HasSubstr("bad.json: op 'A': unknown key 'defualt'"));
  EXPECT_THAT(errorFor(R"({"name": "B", "doc": "d", "outputs": [{"name": "Y"}],
                          "attributes": [{"name": "k", "kind": "int", "default": 1.5}]})"),
              HasSubstr("op 'B': attribute 'k': default 1.5 is not a valid int"));
  EXPECT_THAT(errorFor(R"({"name": "C", "doc": "d", "outputs": [{"name": "Y", "type": "T"}]})"),
              HasSubstr("op 'C': operand 'Y' uses undefined type constraint 'T'"));
  EXPECT_THAT(errorFor(R"({"name": "D", "doc": "d", "outputs": [{"name": "Y"}],
                          "inputs": [{"name": "Xs", "arity": "variadic"}, {"name": "Z"}]})"),
              HasSubstr("op 'D': variadic operand 'Xs' must be the last one"));
  EXPECT_THAT(errorFor(R"({"name": "E", "doc": "d", "outputs": [{"name": "Y"}],
                          "inputs": [{"name": "x"}, {"name": "X"}]})"),
              HasSubstr("op 'E': two operands would both get the accessor getX()"));
  EXPECT_THAT(errorFor(R"({"name": "F", "doc": "d", "outputs": [{"name": "Y"}],
                          "attributes": [{"name": "k", "kind": "tensr"}]})"),
              HasSubstr("op 'F': attribute 'k': unknown kind 'tensr'"));
  EXPECT_THAT(errorFor(R"({"name": "G", "doc": "d", "outputs": []})"),
              HasSubstr("op 'G': an op needs at least one output"));
  EXPECT_THAT(errorFor(R"({"name": "H", "doc": "d", "outputs": [{"name": "Y"}],
                          "attributes": [{"name": "k", "kind": "int", "required": true,
                                          "default": 1}]})"),
              HasSubstr("op 'H': attribute 'k' is required and cannot have a default"));
}

/// Invalid JSON and an op defined in two files are reported too.
TEST_F(OpGen, RejectsBadJsonAndDuplicates) {
  auto [status, output] = run({table("broken.json", "{\"ops\": [}")});
  EXPECT_EQ(status, 1);
  EXPECT_THAT(output, StartsWith("opgen: "));
  EXPECT_THAT(output, HasSubstr("broken.json: [json.exception.parse_error"));

  const std::string op = R"({"ops": [{"name": "Twice", "doc": "d", "outputs": [{"name": "Y"}]}]})";
  std::tie(status, output) = run({table("a.json", op), table("b.json", op)});
  EXPECT_EQ(status, 1);
  EXPECT_THAT(output, HasSubstr("b.json: op 'Twice' is defined twice"));
}

/// Unchanged outputs are not rewritten, so their dependents stay built.
TEST_F(OpGen, LeavesUnchangedOutputsAlone) {
  fs::path t =
      table("one.json", R"({"ops": [{"name": "One", "doc": "d", "outputs": [{"name": "Y"}]}]})");
  ASSERT_EQ(run({t}).first, 0);
  const auto before = fs::last_write_time(dir_ / "out.h");
  fs::last_write_time(dir_ / "out.h", before - std::chrono::hours(1));
  ASSERT_EQ(run({t}).first, 0);
  EXPECT_EQ(fs::last_write_time(dir_ / "out.h"), before - std::chrono::hours(1));
}

}  // namespace
}  // namespace subgraph
