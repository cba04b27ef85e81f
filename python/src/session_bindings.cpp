//===- python/src/session_bindings.cpp - subgraph.Session -----------------===//
//
// subgraph.Session wraps api::InferenceSession, as onnxruntime's
// InferenceSession wraps its C++ session: built from a path or a Graph
// with backends, threads, precision, plugin options and the limits the CLI
// sets with --limit (the same defaults: memory_limit is three quarters of
// the machine's memory unless given, the work limits the runtime's); the
// thread count passes the runtime's one bounds check. run() takes a dict
// of numpy arrays, read in place when they are C-contiguous, and returns
// one. The request runs without the GIL, so
// other Python threads go on (and several may run one session at once:
// run is thread-safe). Outputs are numpy arrays over the session's result
// buffers, handed over without another copy.
//
//===----------------------------------------------------------------------===//
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.h"
#include "subgraph/api/inference_session.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/runtime/session.h"

namespace subgraph::python {

std::vector<std::filesystem::path> pluginDirs();

namespace {

DataType dataTypeOf(const py::dtype& d) {
  static const std::pair<const char*, DataType> kTypes[] = {
      {"float32", DataType::kFloat32}, {"float64", DataType::kFloat64},
      {"float16", DataType::kFloat16}, {"int8", DataType::kInt8},
      {"int16", DataType::kInt16},     {"int32", DataType::kInt32},
      {"int64", DataType::kInt64},     {"uint8", DataType::kUInt8},
      {"uint16", DataType::kUInt16},   {"uint32", DataType::kUInt32},
      {"uint64", DataType::kUInt64},   {"bool", DataType::kBool}};
  for (const auto& [name, type] : kTypes)
    if (d.is(py::dtype(name))) return type;
  return DataType::kUndefined;
}

// The request's inputs, read in place: a C-contiguous array of a type
// subgraph runs is passed as it is (no copy); any other layout is made
// contiguous first. `keep` holds the arrays until the run ends.
std::vector<runtime::InputView> toInputs(const py::dict& inputs, std::vector<py::array>& keep) {
  std::vector<runtime::InputView> out;
  for (auto [key, item] : inputs) {
    std::string name = py::str(key);
    py::array a = py::array::ensure(item, py::array::c_style);
    if (!a) raise(Status::invalid("input '" + name + "' is not convertible to a numpy array"));
    DataType dtype = dataTypeOf(a.dtype());
    if (dtype == DataType::kUndefined)
      raise(Status::invalid("input '" + name + "' has numpy dtype " +
                            std::string(py::str(a.dtype())) + ", which subgraph does not run"));
    out.push_back({name, dtype, std::vector<int64_t>(a.shape(), a.shape() + a.ndim()), a.data(),
                   static_cast<size_t>(a.nbytes())});
    keep.push_back(std::move(a));
  }
  return out;
}

// A numpy array that owns `tensor` (moved to the heap; freed with it).
py::array toArray(Tensor tensor) {
  auto* owned = new Tensor(std::move(tensor));
  py::capsule base(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(owned->dims().begin(), owned->dims().end());
  return py::array(py::dtype(numpyDtypeName(owned->dtype())), shape,
                   const_cast<std::byte*>(owned->bytes().data()), base);
}

py::object reportDict(const partition::PartitionReport& report) {
  return py::module_::import("json").attr("loads")(partition::reportToJson(report));
}

py::list ioInfo(const std::vector<runtime::IoInfo>& infos) {
  py::list out;
  for (const runtime::IoInfo& i : infos) {
    py::list dims;
    if (i.type.shape)
      for (const Dim& d : *i.type.shape)
        d.isStatic() ? dims.append(d.size()) : dims.append(py::str(d.symbolName()));
    out.append(py::make_tuple(i.name, numpyDtypeName(i.type.dtype), dims));
  }
  return out;
}

// A session and the Python-side facts about it.
struct PySession {
  std::unique_ptr<api::InferenceSession> s;
};

// The limits of `limits` (Python's keyword arguments), None as the default.
struct PyLimits {
  std::optional<uint64_t> memory, loopIterations, kernelWork;
  std::optional<double> loopSeconds;
};

// Checked before the session exists: a negative or absurd value is the
// caller's mistake, one line, never a wrapped integer.
runtime::WorkLimits workLimits(const PyLimits& l) {
  runtime::WorkLimits work;
  if (l.loopIterations) work.loopIterations = *l.loopIterations;
  if (l.kernelWork) work.kernelWork = *l.kernelWork;
  if (l.loopSeconds) {
    if (!(*l.loopSeconds >= 0)) raise(Status::invalid("loop_seconds must not be negative"));
    work.loopSeconds = *l.loopSeconds;
  }
  return work;
}

PySession makeSession(const py::object& model, const std::vector<std::string>& backends,
                      int64_t threads, const std::string& precision,
                      const std::map<std::string, std::string>& pluginOptions, bool allowFallback,
                      const std::string& passes, const api::InputShapes& inputShapes,
                      const PyLimits& limits) {
  check(runtime::checkThreadCount(threads));
  api::InferenceOptions o;
  o.backends = fmt::format("{}", fmt::join(backends, ","));
  o.threads = static_cast<int>(threads);
  o.memoryLimitBytes = limits.memory.value_or(api::defaultMemoryLimitBytes());
  o.work = workLimits(limits);
  o.precision = precision;
  o.pluginOptions = pluginOptions;
  o.allowFallback = allowFallback;
  o.passes = passes;
  o.pluginSearchPath = pluginDirs();
  std::unique_ptr<Graph> graph;
  if (py::isinstance<GraphBox>(model)) {
    graph = model.cast<GraphBox&>().graph->clone();
    check(api::applyInputShapes(*graph, inputShapes));
  } else {
    api::ModelOptions load;
    load.inputShapes = inputShapes;
    auto loaded = api::loadModel(py::str(model), load);
    check(loaded.status());
    graph = std::move(loaded).value();
  }
  StatusOr<std::unique_ptr<api::InferenceSession>> made = [&] {
    py::gil_scoped_release release;  // Python selectors take it back per call
    return api::InferenceSession::create(std::move(graph), std::move(o));
  }();
  check(made.status());
  return PySession{std::move(made).value()};
}

py::dict run(const PySession& self, const py::dict& inputs) {
  std::vector<py::array> keep;
  std::vector<runtime::InputView> in = toInputs(inputs, keep);
  StatusOr<runtime::RunResult> r = [&] {
    py::gil_scoped_release release;
    return self.s->runInPlace(in);
  }();
  check(r.status());
  py::dict out;
  for (runtime::NamedTensor& t : r->outputs) out[py::str(t.name)] = toArray(std::move(t.tensor));
  return out;
}

}  // namespace

void bindSession(py::module_& m) {
  py::class_<PySession>(m, "Session", "A model compiled for its backends; see docs/python.md.")
      .def(py::init([](const py::object& model, const std::vector<std::string>& backends,
                       int64_t threads, const std::string& precision,
                       const std::map<std::string, std::string>& pluginOptions, bool allowFallback,
                       const std::string& passes, const api::InputShapes& inputShapes,
                       std::optional<uint64_t> memoryLimit, std::optional<uint64_t> loopIterations,
                       std::optional<double> loopSeconds, std::optional<uint64_t> kernelWork) {
             return makeSession(model, backends, threads, precision, pluginOptions, allowFallback,
                                passes, inputShapes,
                                PyLimits{memoryLimit, loopIterations, kernelWork, loopSeconds});
           }),
           py::arg("model"), py::arg("backends") = std::vector<std::string>{},
           py::arg("threads") = 0, py::arg("precision") = "",
           py::arg("plugin_options") = std::map<std::string, std::string>{},
           py::arg("allow_fallback") = false, py::arg("passes") = "default",
           py::arg("input_shapes") = api::InputShapes{}, py::arg("memory_limit") = py::none(),
           py::arg("loop_iterations") = py::none(), py::arg("loop_seconds") = py::none(),
           py::arg("kernel_work") = py::none())
      .def("run", &run, py::arg("inputs"),
           "Runs one request: {input name: numpy array} -> {output name: numpy array}.")
      .def_property_readonly("backends", [](const PySession& s) { return s.s->backends(); })
      .def_property_readonly("inputs",
                             [](const PySession& s) { return ioInfo(s.s->session().inputInfo()); })
      .def_property_readonly("outputs",
                             [](const PySession& s) { return ioInfo(s.s->session().outputInfo()); })
      .def_property_readonly("warnings", [](const PySession& s) { return s.s->warnings(); })
      .def_property_readonly("report", [](const PySession& s) -> py::object {
        if (!s.s->report()) return py::none();
        return reportDict(*s.s->report());
      });
}

}  // namespace subgraph::python
