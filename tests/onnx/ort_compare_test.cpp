//===- tests/onnx/ort_compare_test.cpp - Exports run like the originals ---===//
//
// ONNX Runtime (onnxruntime-node, driven by tools/ort_run.js) runs three
// versions of each model on the same inputs: the original file, the model
// subgraph imported and exported, and that export imported and exported
// again. Their outputs must be byte-identical. Graph optimizations are off
// so ONNX Runtime computes the same kernels for all three.
//
//   original.onnx --import--> Graph --export--> exported.onnx
//                                                   |
//                            Graph <--import--------+--export--> reexported.onnx
//
// A fused region, exported as a local function, must compute what the same
// ops give unfused. These tests skip, saying how to install ONNX Runtime,
// when bench/node_modules/onnxruntime-node is missing.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx/onnx_test_util.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph {
namespace {

using namespace onnx_test;
namespace fs = std::filesystem;

constexpr const char* kInstallHint =
    "onnxruntime-node not installed: run `cd bench && npm install --ignore-scripts` (needs node)";

bool ortAvailable() {
  return fs::exists(sourceDir() / "bench" / "node_modules" / "onnxruntime-node") &&
         std::system("node --version > /dev/null 2>&1") == 0;
}

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// One model run: which file, which inputs, where the outputs go.
struct OrtJob {
  fs::path model;
  std::map<std::string, fs::path> inputs;  ///< input name -> .npy
  std::map<std::string, std::vector<int64_t>> shapes;
  fs::path out;
};

/// Runs all jobs in one ort_run.js process; returns the error of each job
/// ("" for success), in order.
std::vector<std::string> runOrt(const std::vector<OrtJob>& jobs, const fs::path& workDir) {
  std::ostringstream list;
  list << "[";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const OrtJob& job = jobs[i];
    list << (i ? ",\n" : "") << "{\"model\": " << jsonString(job.model.string())
         << ", \"out\": " << jsonString(job.out.string())
         << ", \"seed\": 1, \"optLevel\": \"disabled\", \"inputs\": {";
    bool first = true;
    for (const auto& [name, file] : job.inputs) {
      list << (first ? "" : ", ") << jsonString(name) << ": " << jsonString(file.string());
      first = false;
    }
    list << "}, \"shapes\": {";
    first = true;
    for (const auto& [name, dims] : job.shapes) {
      list << (first ? "" : ", ") << jsonString(name) << ": [";
      for (size_t d = 0; d < dims.size(); ++d) list << (d ? ", " : "") << dims[d];
      list << "]";
      first = false;
    }
    list << "}}";
  }
  list << "]";
  writeFile(workDir / "jobs.json", list.str());
  std::string command = "node " + (sourceDir() / "tools" / "ort_run.js").string() + " --batch " +
                        (workDir / "jobs.json").string() + " > " +
                        (workDir / "results.jsonl").string() + " 2> " +
                        (workDir / "stderr.txt").string();
  int rc = std::system(command.c_str());
  EXPECT_EQ(rc, 0) << readAll(workDir / "stderr.txt");
  std::vector<std::string> errors;
  std::istringstream lines(readAll(workDir / "results.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find("\"error\":");
    errors.push_back(at == std::string::npos ? "" : line.substr(at + 8));
  }
  errors.resize(jobs.size(), "no result line");
  return errors;
}

/// Compares two output folders file by file; returns "" or what differs.
std::string compareOutputs(const fs::path& a, const fs::path& b) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(a)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  size_t countB = std::distance(fs::directory_iterator(b), fs::directory_iterator());
  if (names.empty() || countB != names.size())
    return "output count differs: " + std::to_string(names.size()) + " vs " +
           std::to_string(countB);
  for (const auto& n : names) {
    if (!fs::exists(b / n)) return "output " + n + " missing";
    if (readAll(a / n) != readAll(b / n)) return "output " + n + " differs";
  }
  return "";
}

/// Writes a test-data TensorProto as .npy; false for types .npy or the
/// runner cannot carry (strings).
bool tensorProtoToNpy(const ::onnx::TensorProto& t, const fs::path& path) {
  using TP = ::onnx::TensorProto;
  static const std::map<int, std::pair<const char*, size_t>> kDescr = {
      {TP::FLOAT, {"<f4", 4}},  {TP::DOUBLE, {"<f8", 8}}, {TP::INT64, {"<i8", 8}},
      {TP::INT32, {"<i4", 4}},  {TP::INT16, {"<i2", 2}},  {TP::INT8, {"|i1", 1}},
      {TP::UINT8, {"|u1", 1}},  {TP::UINT16, {"<u2", 2}}, {TP::UINT32, {"<u4", 4}},
      {TP::UINT64, {"<u8", 8}}, {TP::BOOL, {"|b1", 1}},   {TP::FLOAT16, {"<f2", 2}}};
  auto it = kDescr.find(t.data_type());
  if (it == kDescr.end()) return false;
  const size_t size = it->second.second;
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  std::string data;
  auto narrow = [&](auto field) {
    for (auto v : field) {
      uint64_t bits = static_cast<uint64_t>(v);
      data.append(reinterpret_cast<const char*>(&bits), size);  // little-endian
    }
  };
  if (t.has_raw_data()) {
    data = t.raw_data();
  } else if (t.data_type() == TP::FLOAT) {
    data.assign(reinterpret_cast<const char*>(t.float_data().data()), t.float_data_size() * 4);
  } else if (t.data_type() == TP::DOUBLE) {
    data.assign(reinterpret_cast<const char*>(t.double_data().data()), t.double_data_size() * 8);
  } else if (t.int64_data_size()) {
    narrow(t.int64_data());
  } else if (t.uint64_data_size()) {
    narrow(t.uint64_data());
  } else {
    narrow(t.int32_data());
  }
  if (data.size() != static_cast<size_t>(count) * size) return false;
  std::string shape = "(";
  for (int i = 0; i < t.dims_size(); ++i) shape += std::to_string(t.dims(i)) + ",";
  shape += ")";
  std::string header = std::string("{'descr': '") + it->second.first +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  header += std::string(63 - (header.size() + 10) % 64, ' ') + "\n";
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  writeFile(path, file + header + data);
  return true;
}

/// Imports `model` and exports it to `out`; returns the error or "".
std::string importExport(const fs::path& model, const fs::path& out) {
  auto g = importOnnxFile(model.string());
  if (!g.isOk()) return g.status().message();
  Status s = exportOnnxFile(**g, out.string());
  return s.isOk() ? "" : s.message();
}

/// The three versions of one model, set up as ORT jobs.
struct Trio {
  std::string name;
  OrtJob original, exported, reexported;
};

std::optional<Trio> makeTrio(const std::string& name, const fs::path& model, const fs::path& work,
                             std::map<std::string, fs::path> inputs,
                             std::map<std::string, std::vector<int64_t>> shapes) {
  fs::create_directories(work);
  std::string error = importExport(model, work / "exported.onnx");
  EXPECT_EQ(error, "") << name;
  if (!error.empty()) return std::nullopt;
  error = importExport(work / "exported.onnx", work / "reexported.onnx");
  EXPECT_EQ(error, "") << name;
  if (!error.empty()) return std::nullopt;
  // The exports drop initializers that were also listed as inputs.
  auto exportedInputs = [&](const fs::path& file) {
    std::map<std::string, fs::path> kept;
    auto g = importOnnxFile(file.string());
    for (const auto& [input, npy] : inputs)
      if (g.isOk() && (*g)->findValue(input) && (*g)->findValue(input)->isGraphInput())
        kept[input] = npy;
    return kept;
  };
  Trio trio{name,
            {model, inputs, shapes, work / "out_original"},
            {work / "exported.onnx", exportedInputs(work / "exported.onnx"), shapes,
             work / "out_exported"},
            {work / "reexported.onnx", exportedInputs(work / "reexported.onnx"), shapes,
             work / "out_reexported"}};
  return trio;
}

/// The committed exporter-style models (opset 9 and 11 with dynamic dims,
/// many Constant nodes, If/Loop) give identical outputs after export.
TEST(OrtCompare, CommittedModelsMatchAfterExport) {
  if (!ortAvailable()) GTEST_SKIP() << kInstallHint;
  TempDir tmp;
  fs::path data = sourceDir() / "tests" / "data" / "onnx";
  std::vector<Trio> trios;
  const std::map<std::string, std::vector<int64_t>> shapes = {{"opset9_dynamic", {2, 3, 4, 4}},
                                                              {"opset11_dynamic", {2, 5, 8}},
                                                              {"many_constants", {3, 4}},
                                                              {"control_flow", {2, 3}}};
  for (const auto& [name, dims] : shapes) {
    auto trio = makeTrio(name, data / (name + ".onnx"), tmp / name, {}, {{"x", dims}});
    ASSERT_TRUE(trio);
    trios.push_back(*trio);
  }
  std::vector<OrtJob> jobs;
  for (const Trio& t : trios) {
    jobs.push_back(t.original);
    jobs.push_back(t.exported);
    jobs.push_back(t.reexported);
  }
  std::vector<std::string> errors = runOrt(jobs, tmp.path());
  for (size_t i = 0; i < trios.size(); ++i) {
    const Trio& t = trios[i];
    for (size_t k = 0; k < 3; ++k) ASSERT_EQ(errors[3 * i + k], "") << t.name;
    EXPECT_EQ(compareOutputs(t.original.out, t.exported.out), "") << t.name;
    EXPECT_EQ(compareOutputs(t.exported.out, t.reexported.out), "") << t.name;
  }
}

/// Every ONNX node test model that subgraph imports and ONNX Runtime runs
/// gives identical outputs after export and re-export, on its test inputs.
TEST(OrtCompare, NodeTestModelsMatchAfterExport) {
  if (!ortAvailable()) GTEST_SKIP() << kInstallHint;
  TempDir tmp;
  std::vector<Trio> trios;
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/share/libonnx-testdata/data/node", ec))
    dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  int notImported = 0, noNpy = 0;
  for (const fs::path& dir : dirs) {
    std::string name = dir.filename().string();
    if (!importOnnxFile((dir / "model.onnx").string()).isOk()) {
      ++notImported;
      continue;
    }
    ::onnx::ModelProto model;
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!model.ParseFromIstream(&in)) continue;
    std::map<std::string, fs::path> inputs;
    bool ok = true;
    for (int i = 0;
         ok && fs::exists(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")); ++i) {
      ::onnx::TensorProto t;
      ok = t.ParseFromString(
               readAll(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"))) &&
           i < model.graph().input_size();
      if (!ok) break;
      std::string input = t.name().empty() ? model.graph().input(i).name() : t.name();
      fs::path npy = tmp / name / ("input_" + std::to_string(i) + ".npy");
      fs::create_directories(npy.parent_path());
      ok = tensorProtoToNpy(t, npy);
      inputs[input] = npy;
    }
    if (!ok) {
      ++noNpy;
      continue;
    }
    if (auto trio = makeTrio(name, dir / "model.onnx", tmp / name, inputs, {}))
      trios.push_back(*trio);
  }
  std::vector<OrtJob> jobs;
  for (const Trio& t : trios) {
    jobs.push_back(t.original);
    jobs.push_back(t.exported);
    jobs.push_back(t.reexported);
  }
  std::vector<std::string> errors = runOrt(jobs, tmp.path());
  int compared = 0, ortRejects = 0;
  for (size_t i = 0; i < trios.size(); ++i) {
    const Trio& t = trios[i];
    if (!errors[3 * i].empty()) {  // ONNX Runtime 1.30 cannot run the original
      ++ortRejects;
      continue;
    }
    EXPECT_EQ(errors[3 * i + 1], "") << t.name << ": the export fails where the original runs";
    EXPECT_EQ(errors[3 * i + 2], "") << t.name << ": the re-export fails";
    if (!errors[3 * i + 1].empty() || !errors[3 * i + 2].empty()) continue;
    EXPECT_EQ(compareOutputs(t.original.out, t.exported.out), "") << t.name;
    EXPECT_EQ(compareOutputs(t.exported.out, t.reexported.out), "") << t.name;
    ++compared;
  }
  std::printf(
      "ONNX Runtime: %d node test models give identical outputs after export; "
      "%d not imported, %d with inputs .npy cannot carry, %d the runtime rejects\n",
      compared, notImported, noNpy, ortRejects);
  EXPECT_GT(compared, 100);
}

/// A fused region exported as a local function computes what its ops do
/// unfused:
//
//   fused:   x -> [subgraph.test.Region0 {body: Add(a, k) -> Relu}] -> y
//   plain:   x -> Add(x, k) -> Relu -> y
TEST(OrtCompare, FusedRegionRunsAsLocalFunction) {
  if (!ortAvailable()) GTEST_SKIP() << kInstallHint;
  TempDir tmp;
  auto fused = parseGraphOrThrow(R"(
    graph @main(%x: f32[2, 3]) opset(ai.onnx = 17) {
      %y: f32[2, 3] = subgraph.test.Region0(%x) {
        body = graph @region(%a: f32[2, 3]) {
          %k = const f32[3] [1.0, -2.0, 3.0]
          %s: f32[2, 3] = Add(%a, %k)
          %r: f32[2, 3] = Relu(%s)
          return %r
        }} @fused
      return %y
    })");
  auto plain = parseGraphOrThrow(R"(
    graph @main(%x: f32[2, 3]) opset(ai.onnx = 17) {
      %k = const f32[3] [1.0, -2.0, 3.0]
      %s: f32[2, 3] = Add(%x, %k)
      %y: f32[2, 3] = Relu(%s)
      return %y
    })");
  ASSERT_TRUE(exportOnnxFile(*fused, (tmp / "fused.onnx").string()).isOk());
  ASSERT_TRUE(exportOnnxFile(*plain, (tmp / "plain.onnx").string()).isOk());
  std::vector<std::string> errors = runOrt({{tmp / "fused.onnx", {}, {}, tmp / "out_fused"},
                                            {tmp / "plain.onnx", {}, {}, tmp / "out_plain"}},
                                           tmp.path());
  ASSERT_EQ(errors[0], "") << "ONNX Runtime cannot run the fused model";
  ASSERT_EQ(errors[1], "");
  EXPECT_EQ(compareOutputs(tmp / "out_fused", tmp / "out_plain"), "");
}

}  // namespace
}  // namespace subgraph
