//===- tools/conformance/conformance_main.cpp - ONNX node-test conformance -===//
//
// Runs the ONNX backend node tests (libonnx-testdata:
// <data>/<test>/model.onnx with test_data_set_N/{input,output}_K.pb) on the
// runtime's reference backend and compares every output with the expected
// one. A test runs when every op of its model (nested graphs included) is in
// subgraph's op table; the others are skipped. Tests in the exception list
// (one "name  reason" per line) are expected to fail and are reported as
// excepted with their reason.
//
//   subgraph_conformance [--data DIR] [--exceptions FILE] [--filter SUBSTR]
//                        [--verbose] [--list-failures]
//
// Prints "N passed, N failed, N skipped (N excepted)" and a table by op;
// exits 1 when a test outside the exception list fails, so ctest fails.
//
// Outputs match when they have the same dims and type and every element
// satisfies |actual - expected| <= atol + rtol * |expected| with the ONNX
// backend-test defaults rtol = 1e-3, atol = 1e-7, except that atol is 1e-5
// for float16 and bfloat16, whose rounding step is larger. Integers and
// booleans must match exactly; NaN matches NaN. Test data that stores
// bfloat16 as uint16 (ONNX 1.12 does) is read as the bfloat16 the model
// declares.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/onnx/onnx_import.h"
#include "subgraph/runtime/session.h"
#include "subgraph/runtime/tensor_file.h"

namespace fs = std::filesystem;
using namespace subgraph;           // NOLINT
using namespace subgraph::runtime;  // NOLINT

namespace {

struct Options {
  std::string data = "/usr/share/libonnx-testdata/data/node";
  std::string exceptions;
  std::string filter;
  bool verbose = false;
  bool listFailures = false;
};

enum class Outcome { kPassed, kFailed, kSkipped, kExcepted };

struct TestResult {
  std::string name;
  Outcome outcome = Outcome::kSkipped;
  std::string detail;
  std::set<std::string> ops;
};

// Every op of `graph` and its nested graphs, as "domain.Op" or "Op".
void collectOps(const Graph& graph, std::set<std::string>& ops) {
  for (const Node* n : graph.nodes()) {
    ops.insert(n->qualifiedOpType());
    for (const Attribute& a : n->attributes()) {
      if (a.kind() == AttrKind::kGraph && a.asGraph()) collectOps(*a.asGraph(), ops);
      if (a.kind() == AttrKind::kGraphs)
        for (const auto& g : a.asGraphs())
          if (g) collectOps(*g, ops);
    }
  }
}

bool inOpTable(const std::string& qualified) {
  size_t dot = qualified.rfind('.');
  std::string domain = dot == std::string::npos ? "" : qualified.substr(0, dot);
  std::string name = dot == std::string::npos ? qualified : qualified.substr(dot + 1);
  return OpRegistry::global().lookup(domain, name) != nullptr && canonicalDomain(domain).empty();
}

double elementAt(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kBool)
    return t.bytes()[static_cast<size_t>(i)] != std::byte{0} ? 1.0 : 0.0;
  return t.elementAsDouble(i);
}

// "" when `got` matches `want`, else why not.
std::string compareTensors(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return "type " + std::string(dataTypeName(got.dtype())) + ", expected " +
           std::string(dataTypeName(want.dtype()));
  if (got.dims() != want.dims()) {
    auto str = [](const std::vector<int64_t>& d) {
      std::string s = "[";
      for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
      return s + "]";
    };
    return "dims " + str(got.dims()) + ", expected " + str(want.dims());
  }
  const bool exact = !isFloatingPoint(got.dtype());
  const double rtol = 1e-3;
  const double atol =
      got.dtype() == DataType::kFloat16 || got.dtype() == DataType::kBFloat16 ? 1e-5 : 1e-7;
  for (int64_t i = 0, n = got.numElements(); i < n; ++i) {
    double a, b;
    if (exact && got.dtype() != DataType::kBool && dataTypeSize(got.dtype()) == 8) {
      // 64-bit integers: compare exactly, not through double.
      if (std::memcmp(got.bytes().data() + i * 8, want.bytes().data() + i * 8, 8) == 0) continue;
      return "element " + std::to_string(i) + " differs";
    }
    a = elementAt(got, i);
    b = elementAt(want, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (exact ? a == b : (a == b || std::fabs(a - b) <= atol + rtol * std::fabs(b))) continue;
    std::ostringstream os;
    os << "element " << i << " is " << a << ", expected " << b;
    return os.str();
  }
  return "";
}

// The ONNX 1.12 test data stores bfloat16 tensors as uint16 (numpy has no
// bfloat16); read such a tensor as the bfloat16 the model declares.
Tensor asDeclared(Tensor t, DataType declared) {
  if (t.dtype() == DataType::kUInt16 && declared == DataType::kBFloat16) {
    auto b = t.bytes();
    return Tensor(DataType::kBFloat16, t.dims(), std::vector<std::byte>(b.begin(), b.end()));
  }
  return t;
}

std::map<std::string, std::string> readExceptions(const std::string& path) {
  std::map<std::string, std::string> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "subgraph_conformance: error: cannot open exception list '" << path << "'\n";
    std::exit(2);
  }
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    size_t end = line.find_first_of(" \t", start);
    std::string name = line.substr(start, end - start);
    std::string reason =
        end == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", end));
    if (reason.empty()) {
      std::cerr << "subgraph_conformance: error: exception '" << name << "' in " << path
                << " has no reason\n";
      std::exit(2);
    }
    out[name] = reason;
  }
  return out;
}

std::vector<fs::path> sortedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) files.push_back(e.path());
  // input_10 must come after input_9.
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
    auto index = [&](const fs::path& p) {
      std::string s = p.stem().string().substr(prefix.size());
      return s.empty() ? 0 : std::stoi(s);
    };
    return index(a) < index(b);
  });
  return files;
}

TestResult runTest(const fs::path& dir) {
  TestResult r;
  r.name = dir.filename().string();
  ImportOptions io;
  io.allowUnknownOps = true;
  StatusOr<std::unique_ptr<Graph>> graph = importOnnxFile((dir / "model.onnx").string(), io);
  if (!graph.isOk()) {
    r.outcome = Outcome::kSkipped;
    r.detail = "import: " + graph.status().message();
    return r;
  }
  collectOps(*graph.value(), r.ops);
  for (const std::string& op : r.ops)
    if (!inOpTable(op)) {
      r.outcome = Outcome::kSkipped;
      r.detail = "op " + op + " is not in the op table";
      return r;
    }
  r.outcome = Outcome::kFailed;
  std::vector<std::string> inputNames, outputNames;
  std::vector<DataType> inputTypes;
  for (const Value* v : graph.value()->inputs())
    if (!v->isInitializer()) {
      inputNames.push_back(v->name());
      inputTypes.push_back(v->type().dtype);
    }
  for (const Value* v : graph.value()->outputs()) outputNames.push_back(v ? v->name() : "");
  SessionOptions options;
  options.threads = 1;
  Session session(options);
  Status st = session.load(std::move(graph).value());
  if (st.isOk()) st = session.compile();
  if (!st.isOk()) {
    r.detail = "compile: " + st.message();
    return r;
  }
  int sets = 0;
  for (const fs::path& set : sortedFiles(dir, "test_data_set_")) {
    ++sets;
    std::vector<NamedTensor> inputs;
    std::vector<fs::path> inputFiles = sortedFiles(set, "input_");
    for (size_t i = 0; i < inputFiles.size(); ++i) {
      StatusOr<NamedTensor> t = readTensorProtoFile(inputFiles[i].string());
      if (!t.isOk()) {
        r.detail = set.filename().string() + ": " + t.status().message();
        return r;
      }
      if (i >= inputNames.size()) {
        r.detail = "more input files than graph inputs";
        return r;
      }
      inputs.push_back({inputNames[i], asDeclared(std::move(t.value().tensor), inputTypes[i])});
    }
    StatusOr<RunResult> out = session.run(inputs);
    if (!out.isOk()) {
      r.detail = set.filename().string() + ": run: " + out.status().message();
      return r;
    }
    std::vector<fs::path> outputFiles = sortedFiles(set, "output_");
    if (outputFiles.size() != out.value().outputs.size()) {
      r.detail = "expected " + std::to_string(outputFiles.size()) + " outputs, got " +
                 std::to_string(out.value().outputs.size());
      return r;
    }
    for (size_t o = 0; o < outputFiles.size(); ++o) {
      StatusOr<NamedTensor> want = readTensorProtoFile(outputFiles[o].string());
      if (!want.isOk()) {
        r.detail = set.filename().string() + ": " + want.status().message();
        return r;
      }
      const Tensor& got = out.value().outputs[o].tensor;
      std::string diff =
          compareTensors(got, asDeclared(std::move(want.value().tensor), got.dtype()));
      if (!diff.empty()) {
        r.detail = set.filename().string() + ": output '" + outputNames[o] + "': " + diff;
        return r;
      }
    }
  }
  if (sets == 0) {
    r.detail = "no test_data_set_* folders";
    return r;
  }
  r.outcome = Outcome::kPassed;
  return r;
}

int usage() {
  std::cerr << "usage: subgraph_conformance [--data DIR] [--exceptions FILE] [--filter SUBSTR] "
               "[--verbose] [--list-failures]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--data")
      options.data = value();
    else if (arg == "--exceptions")
      options.exceptions = value();
    else if (arg == "--filter")
      options.filter = value();
    else if (arg == "--verbose")
      options.verbose = true;
    else if (arg == "--list-failures")
      options.listFailures = true;
    else
      return usage();
  }
  std::error_code ec;
  if (!fs::is_directory(options.data, ec)) {
    std::cerr << "subgraph_conformance: error: test data folder '" << options.data
              << "' does not exist\n";
    return 2;
  }
  std::map<std::string, std::string> exceptions = readExceptions(options.exceptions);
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(options.data))
    if (e.is_directory() && e.path().filename().string().find(options.filter) != std::string::npos)
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

  struct OpRow {
    int passed = 0, failed = 0, excepted = 0;
  };
  std::map<std::string, OpRow> byOp;
  int passed = 0, failed = 0, skipped = 0, excepted = 0;
  std::vector<TestResult> failures;
  std::vector<std::string> stale;
  for (const fs::path& dir : dirs) {
    TestResult r = runTest(dir);
    auto ex = exceptions.find(r.name);
    if (ex != exceptions.end()) {
      if (r.outcome == Outcome::kFailed) {
        r.outcome = Outcome::kExcepted;
        r.detail = ex->second + " [" + r.detail + "]";
      } else if (r.outcome == Outcome::kPassed) {
        stale.push_back(r.name);
      }
    }
    switch (r.outcome) {
      case Outcome::kPassed: ++passed; break;
      case Outcome::kFailed:
        ++failed;
        failures.push_back(r);
        break;
      case Outcome::kSkipped: ++skipped; break;
      case Outcome::kExcepted: ++excepted; break;
    }
    if (r.outcome != Outcome::kSkipped)
      for (const std::string& op : r.ops) {
        OpRow& row = byOp[op];
        if (r.outcome == Outcome::kPassed)
          ++row.passed;
        else if (r.outcome == Outcome::kFailed)
          ++row.failed;
        else
          ++row.excepted;
      }
    if (options.verbose || (options.listFailures && r.outcome == Outcome::kFailed)) {
      const char* tag = r.outcome == Outcome::kPassed     ? "PASS"
                        : r.outcome == Outcome::kFailed   ? "FAIL"
                        : r.outcome == Outcome::kExcepted ? "EXCEPTED"
                                                          : "SKIP";
      std::cout << tag << "  " << r.name << (r.detail.empty() ? "" : "  " + r.detail) << "\n";
    }
  }
  std::printf("%-26s %7s %7s %9s\n", "op", "passed", "failed", "excepted");
  for (const auto& [op, row] : byOp)
    std::printf("%-26s %7d %7d %9d\n", op.c_str(), row.passed, row.failed, row.excepted);
  for (const TestResult& r : failures) std::cout << "FAILED " << r.name << ": " << r.detail << "\n";
  for (const std::string& name : stale)
    std::cout << "note: excepted test " << name
              << " now passes; remove it from the exception list\n";
  std::printf("%d passed, %d failed, %d skipped (%d excepted)\n", passed, failed,
              skipped + excepted, excepted);
  return failed == 0 ? 0 : 1;
}
