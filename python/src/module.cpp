//===- python/src/module.cpp - Module subgraph._subgraph ------------------===//
//
// The extension module behind the `subgraph` Python package
// (python/subgraph/__init__.py adds the Python classes and docstrings, and
// _inference_session.py ONNX Runtime's interface): load(), partition(),
// plugins(), the Graph views, Session and Python backends. Every failure
// raises a subgraph.Error with the same one-line message the CLI prints, as
// the kind its status code names (InvalidArgument, NoSuchFile,
// NotImplemented, Fail: ONNX Runtime's names), never by reading the
// message. Importing the module installs the plugin crash handler the
// program installs, so a plugin that crashes names itself here too.
//
//===----------------------------------------------------------------------===//
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.h"
#include "subgraph/api/inference_session.h"
#include "subgraph/api/pipeline.h"
#include "subgraph/api/stages.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/crash_handler.h"
#include "subgraph/plugins/plugin_loader.h"
#ifdef SUBGRAPH_PYTHON_HAVE_TESTKIT
#include "testkit/check_run.h"
#endif

namespace subgraph::python {

namespace {
// The package's own plugin folder (subgraph/_layout.py: beside the package
// in a wheel, the build tree's or the install's), set once at import.
std::vector<std::filesystem::path> gPackagePluginDirs;

void appendNew(std::vector<std::filesystem::path>& dirs, const std::filesystem::path& d) {
  std::error_code ec;
  if (std::filesystem::is_directory(d, ec) && std::find(dirs.begin(), dirs.end(), d) == dirs.end())
    dirs.push_back(d);
}
}  // namespace

// SUBGRAPH_PLUGIN_PATH first, as for the program; then the package's own
// folder, before the program's default (which for python3 is
// /usr/lib/subgraph/plugins, an install the package may not match).
std::vector<std::filesystem::path> pluginDirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("SUBGRAPH_PLUGIN_PATH")) {
    std::vector<std::string> entries;
    std::string_view rest = env;
    for (size_t colon; (colon = rest.find(':')) != std::string_view::npos;
         rest.remove_prefix(colon + 1))
      entries.emplace_back(rest.substr(0, colon));
    entries.emplace_back(rest);
    for (const auto& d : plugins::resolvePluginDirs(entries, "SUBGRAPH_PLUGIN_PATH").dirs)
      appendNew(dirs, d);
  }
  for (const auto& d : gPackagePluginDirs) appendNew(dirs, d);
  for (const auto& d : plugins::pluginSearchPath()) appendNew(dirs, d);
  return dirs;
}

namespace {
// subgraph.Error and its kinds (indexed by ErrorKind), set once in the
// module init; never freed (the interpreter owns the types).
py::object* gErrorType = nullptr;
py::object* gErrorKinds[4] = {};
}  // namespace

py::object errorType() { return *gErrorType; }

py::object errorType(ErrorKind kind) { return *gErrorKinds[static_cast<int>(kind)]; }

ErrorKind errorKindOf(StatusCode code) {
  switch (code) {
    // A name that resolves to nothing (a backend, an input, an op) or a
    // wrong argument is the caller's mistake, as in ONNX Runtime; a file
    // that cannot be read is NoSuchFile (ONNX Runtime's NO_SUCHFILE).
    case StatusCode::kInvalidArgument:
    case StatusCode::kUsage:
    case StatusCode::kNotFound: return ErrorKind::kInvalidArgument;
    case StatusCode::kIo: return ErrorKind::kNoSuchFile;
    case StatusCode::kUnsupported: return ErrorKind::kNotImplemented;
    case StatusCode::kOk:
    case StatusCode::kLimitExceeded:
    case StatusCode::kInternal:
    case StatusCode::kPluginFailure: return ErrorKind::kFail;
  }
  return ErrorKind::kFail;
}

void raise(const Status& status) { raise(errorKindOf(status.code()), status.message()); }

void raise(ErrorKind kind, const std::string& message) {
  PyErr_SetString(errorType(kind).ptr(), message.c_str());
  throw py::error_already_set();
}

std::unique_ptr<Graph> loadModelArgument(
    const py::object& model, const std::map<std::string, std::vector<int64_t>>& shapes) {
  api::ModelOptions options;
  options.inputShapes = shapes;
  StatusOr<std::unique_ptr<Graph>> graph = [&]() -> StatusOr<std::unique_ptr<Graph>> {
    if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model) ||
        py::isinstance<py::memoryview>(model)) {
      std::string bytes = py::bytes(py::module_::import("builtins").attr("bytes")(model));
      return api::loadModelBytes(bytes, options);
    }
    if (!py::isinstance<py::str>(model) && !py::hasattr(model, "__fspath__"))
      raise(ErrorKind::kInvalidArgument,
            "a model is a path (str or os.PathLike), the bytes of a model, or a subgraph.Graph, "
            "not a " +
                std::string(py::str(py::type::of(model).attr("__name__"))));
    std::string path = py::str(py::module_::import("os").attr("fspath")(model));
    return api::loadModel(path, options);
  }();
  check(graph.status());
  return std::move(graph).value();
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

GraphBox load(const py::object& model, const std::map<std::string, std::vector<int64_t>>& shapes) {
  return GraphBox{std::shared_ptr<Graph>(loadModelArgument(model, shapes))};
}

py::object partitionGraph(GraphBox& box, const std::vector<std::string>& backends,
                          bool allowFallback, const std::string& passes) {
  api::BackendRequest request;
  request.backends = fmt::format("{}", fmt::join(backends, ","));
  request.allowFallback = allowFallback;
  request.pluginSearchPath = pluginDirs();
  StatusOr<plugins::BackendSelection> selection = api::selectBackends(request);
  check(selection.status());
  std::unique_ptr<Graph> copy = box.graph->clone();
  StatusOr<api::Partitioned> parts = [&]() -> StatusOr<api::Partitioned> {
    py::gil_scoped_release release;  // Python selectors take it back per call
    if (!backends.empty()) {
      StatusOr<PipelineReport> ran = api::simplify(*copy, passes);
      if (!ran.isOk()) return ran.status();
    }
    return api::partition(*selection, copy);
  }();
  check(parts.status());
  box.graph = std::shared_ptr<Graph>(std::move(copy));
  py::object dict =
      py::module_::import("json").attr("loads")(partition::reportToJson(parts->report));
  dict["warnings"] = parts->warnings;
  return dict;
}

#ifdef SUBGRAPH_PYTHON_HAVE_TESTKIT
// The test kit's check-plugin run; each case in a worker process running
// `program` (the package's `subgraph`), so a crashing plugin fails its case.
py::dict checkPlugin(const std::string& target, size_t cases, uint64_t seed,
                     const std::vector<std::string>& ops, bool numerics,
                     const std::string& program) {
  testkit::CheckRunOptions run;
  run.target = target;
  if (plugins::namesPluginFile(target)) run.target = plugins::pluginFilePath(target).string();
  run.searchPath = pluginDirs();
  run.check.cases = cases;
  run.check.seed = seed;
  run.check.numerics = numerics;
  std::vector<std::string> catalog = testkit::catalogOps();
  for (const std::string& op : ops) {
    if (std::find(catalog.begin(), catalog.end(), op) == catalog.end())
      raise(ErrorKind::kInvalidArgument, "ops: '" + op + "' is not an op random graphs can use (" +
                                             testkit::joinedOrNone(catalog) + ")");
    run.check.ops.push_back(op);
  }
  run.workerProgram = program;
  std::string report;
  StatusOr<testkit::CheckRun> done = [&] {
    py::gil_scoped_release release;
    return testkit::runCheck(run, [&](const std::string& text) { report += text; });
  }();
  check(done.status());
  py::dict d;
  d["passed"] = done->summary.passed;
  d["failed"] = done->summary.failed;
  d["ok"] = done->problem.empty();
  d["problem"] = done->problem.empty() ? py::object(py::none()) : py::cast(done->problem);
  d["report"] = report;
  return d;
}
#endif

// api::planStages over `devices` ("emu:0", ...) with `memoryLimits` (one
// for all, one each, or none), as a dict.
py::object planStages(GraphBox& box, const std::vector<std::string>& devices,
                      const std::vector<uint64_t>& memoryLimits) {
  StatusOr<std::vector<api::StageDevice>> stageDevices =
      api::stageDevices(devices, memoryLimits, "memory_limit");
  check(stageDevices.status());
  StatusOr<api::StagePlan> plan = api::planStages(*box.graph, *stageDevices);
  check(plan.status());
  return py::module_::import("json").attr("loads")(api::stagesToJson(*plan));
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

// Creates subgraph.<name>, a subclass of subgraph.Error, in `m`.
py::object* addErrorKind(py::module_& m, const char* name, const char* doc) {
  std::string qualified = std::string("subgraph.") + name;
  auto* type = new py::object(py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, gErrorType->ptr(), nullptr)));
  if (!type->ptr()) throw py::error_already_set();
  m.attr(name) = *type;
  return type;
}

}  // namespace

PYBIND11_MODULE(_subgraph, m) {
  m.doc() = "subgraph's C++ core; use the `subgraph` package.";
  m.attr("__version__") = SUBGRAPH_VERSION;
  // The plugin ABI this build speaks (subgraph/plugin_abi.h).
  m.attr("PLUGIN_ABI_VERSION") = SG_PLUGIN_ABI_VERSION;
  gErrorType = new py::object(py::register_exception<Error>(m, "Error", PyExc_RuntimeError));
  gErrorKinds[static_cast<int>(ErrorKind::kInvalidArgument)] =
      addErrorKind(m, "InvalidArgument",
                   "A bad argument, model, option or name (ONNX Runtime's INVALID_ARGUMENT).");
  gErrorKinds[static_cast<int>(ErrorKind::kNoSuchFile)] =
      addErrorKind(m, "NoSuchFile", "A model file that is not there (ONNX Runtime's NO_SUCHFILE).");
  gErrorKinds[static_cast<int>(ErrorKind::kNotImplemented)] =
      addErrorKind(m, "NotImplemented",
                   "Valid input that subgraph cannot handle (ONNX Runtime's NOT_IMPLEMENTED).");
  gErrorKinds[static_cast<int>(ErrorKind::kFail)] = addErrorKind(
      m, "Fail", "A limit, or a failure of a plugin or of subgraph itself (ONNX Runtime's FAIL).");
  // A plugin that crashes inside a call (partition, compile, run) ends the
  // process with the line the program prints, naming the plugin, the call
  // and the node, instead of a bare SIGSEGV; faults elsewhere go on to the
  // handler that was there before (Python's faulthandler, or the default).
  plugins::installPluginCrashHandler();
  bindGraph(m);
  bindSelectors(m);
  bindSession(m);
  bindPipeline(m);
  m.def("load", &load, py::arg("model"),
        py::arg("shapes") = std::map<std::string, std::vector<int64_t>>{},
        "Reads a .onnx or .sg model (a path, or the model's bytes) and verifies it; `shapes` fixes "
        "input dims by name.");
  m.def("plan_stages", &planStages, py::arg("graph"), py::arg("devices"),
        py::arg("memory_limits") = std::vector<uint64_t>{},
        "Cuts a (partitioned) graph into one pipeline stage per device, each within its memory "
        "limit (bytes: one for all, or one each), balanced by cost, crossing the fewest bytes; "
        "returns the plan as `subgraph partition --stages --json` gives it.");
  m.def("partition", &partitionGraph, py::arg("graph"), py::arg("backends"),
        py::arg("allow_fallback") = false, py::arg("passes") = "default",
        "Partitions `graph` in place for `backends`; returns the report as a dict.");
#ifdef SUBGRAPH_PYTHON_HAVE_TESTKIT
  m.def("_check_plugin", &checkPlugin, py::arg("target"), py::arg("cases"), py::arg("seed"),
        py::arg("ops"), py::arg("numerics"), py::arg("program"));
#endif
  m.def("plugins", &listPlugins, "The plugins on the search path, as `subgraph plugins` lists.");
  m.def("_set_plugin_dirs",
        [](std::vector<std::filesystem::path> dirs) { gPackagePluginDirs = std::move(dirs); });
  m.def("_plugin_dirs", [] { return pluginDirs(); });
}

}  // namespace subgraph::python
