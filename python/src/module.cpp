//===- python/src/module.cpp - Module subgraph._subgraph ------------------===//
//
// The extension module behind the `subgraph` Python package
// (python/subgraph/__init__.py adds the Python classes and docstrings):
// load(), partition(), plugins(), the Graph views, Session and Python
// backends. Every failure raises subgraph.Error with the same one-line
// message the CLI prints.
//
//===----------------------------------------------------------------------===//
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.h"
#include "subgraph/api/inference_session.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::python {

namespace {
// Directories the package adds to the plugin search path (its build tree's
// or install's plugin folder), set once at import.
std::vector<std::filesystem::path> gPackagePluginDirs;
}  // namespace

/// The plugin search path: SUBGRAPH_PLUGIN_PATH and the program's default,
/// then the package's own plugin folders.
std::vector<std::filesystem::path> pluginDirs() {
  std::vector<std::filesystem::path> dirs = plugins::pluginSearchPath();
  for (const auto& d : gPackagePluginDirs) {
    std::error_code ec;
    if (std::filesystem::is_directory(d, ec) &&
        std::find(dirs.begin(), dirs.end(), d) == dirs.end())
      dirs.push_back(d);
  }
  return dirs;
}

namespace {
// subgraph.Error, set once in the module init; never freed (the
// interpreter owns the type).
py::object* gErrorType = nullptr;
}  // namespace

py::object errorType() { return *gErrorType; }

void raise(const Status& status) {
  PyErr_SetString(errorType().ptr(), status.message().c_str());
  throw py::error_already_set();
}

std::string numpyDtypeName(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kInt8: return "int8";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kUInt8: return "uint8";
    case DataType::kUInt16: return "uint16";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kBool: return "bool";
    case DataType::kString: return "str";
    default: return "undefined";
  }
}

namespace {

GraphBox load(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
  api::ModelOptions options;
  options.inputShapes = shapes;
  auto graph = api::loadModel(path, options);
  check(graph.status());
  return GraphBox{std::shared_ptr<Graph>(std::move(graph).value())};
}

py::object partitionGraph(GraphBox& box, const std::vector<std::string>& backends,
                          bool allowFallback, const std::string& passes) {
  plugins::SelectOptions select;
  select.allowFallback = allowFallback;
  select.searchPath = pluginDirs();
  std::string list = backends.empty() ? "NONE" : fmt::format("{}", fmt::join(backends, ","));
  StatusOr<plugins::BackendSelection> selection = plugins::selectBackends(list, select);
  check(selection.status());
  std::unique_ptr<Graph> copy = box.graph->clone();
  std::vector<std::string> warnings;
  StatusOr<partition::PartitionReport> report = [&]() -> StatusOr<partition::PartitionReport> {
    py::gil_scoped_release release;  // Python selectors take it back per call
    if (passes != "none" && !backends.empty()) {
      auto pipeline = parsePassPipeline(passes, PassManagerOptions{.runToFixedPoint = true});
      if (!pipeline.isOk()) return pipeline.status();
      auto ran = pipeline.value().run(*copy);
      if (!ran.isOk()) return ran.status();
    }
    return selection->partitionWithFallback(copy, warnings);
  }();
  check(report.status());
  box.graph = std::shared_ptr<Graph>(std::move(copy));
  py::object dict = py::module_::import("json").attr("loads")(partition::reportToJson(*report));
  dict["warnings"] = warnings;
  return dict;
}

py::list listPlugins() {
  py::list out;
  for (const plugins::FoundPlugin& f : plugins::discoverPlugins(pluginDirs())) {
    py::dict d;
    d["path"] = f.path.string();
    if (!f.plugin) {
      d["error"] = f.error;
      d["unavailable"] = f.unavailable;
      out.append(d);
      continue;
    }
    const plugins::PluginInfo& i = f.plugin->info();
    d["name"] = i.name;
    d["version"] = i.version;
    d["description"] = i.description;
    d["abi_version"] = i.abiVersion;
    d["properties"] = i.properties;
    d["kernels"] = i.kernels;
    d["device"] = i.device;
    d["layouts"] = i.layouts;
    d["copies"] = i.copies;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_subgraph, m) {
  m.doc() = "subgraph's C++ core; use the `subgraph` package.";
  gErrorType = new py::object(py::register_exception<Error>(m, "Error", PyExc_RuntimeError));
  bindGraph(m);
  bindSelectors(m);
  bindSession(m);
  m.def("load", &load, py::arg("path"),
        py::arg("shapes") = std::map<std::string, std::vector<int64_t>>{},
        "Reads a .onnx or .sg model and verifies it.");
  m.def("partition", &partitionGraph, py::arg("graph"), py::arg("backends"),
        py::arg("allow_fallback") = false, py::arg("passes") = "default",
        "Partitions `graph` in place for `backends`; returns the report as a dict.");
  m.def("plugins", &listPlugins, "The plugins on the search path, as `subgraph plugins` lists.");
  m.def("_set_plugin_dirs",
        [](std::vector<std::filesystem::path> dirs) { gPackagePluginDirs = std::move(dirs); });
  m.def("_plugin_dirs", [] { return pluginDirs(); });
}

}  // namespace subgraph::python
