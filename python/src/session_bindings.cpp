//===- python/src/session_bindings.cpp - subgraph.Session -----------------===//
//
// subgraph.Session wraps api::InferenceSession, as onnxruntime's
// InferenceSession wraps its C++ session: built from a path, a model's
// bytes or a Graph with backends, threads, precision, plugin options and
// the limits the CLI sets with --limit (the same defaults: memory_limit is
// three quarters of the machine's memory unless given, the work limits the
// runtime's); the thread count passes the runtime's one bounds check.
// run() takes a dict of numpy arrays, read in place when they are
// C-contiguous, and returns one; anything else in the inputs' place (ONNX
// Runtime's run(None, feeds) order, a list) is named in one line without
// printing the arrays. The request runs without the GIL, so other Python
// threads go on (and several may run one session at once: run is
// thread-safe). Outputs are numpy arrays over the session's result
// buffers, handed over without another copy. run_with_profile adds each
// step's time (what InferenceSession's profiling records), and save()
// writes the model as the session runs it (optimized_model_filepath).
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

}  // namespace

// The request's inputs, read in place: a C-contiguous array of a type
// subgraph runs is passed as it is (no copy); any other layout is made
// contiguous first. `keep` holds the arrays until the run ends. `inputs`
// must be a dict (or another mapping): ONNX Runtime's run(output_names,
// feeds) order, or a list of arrays, is told apart from it and named
// without printing the arrays.
std::vector<runtime::InputView> toInputs(const py::object& inputs, std::vector<py::array>& keep) {
  if (!py::isinstance<py::dict>(inputs) && !py::hasattr(inputs, "items")) {
    std::string type = py::str(py::type::of(inputs).attr("__name__"));
    raise(ErrorKind::kInvalidArgument,
          "Session.run takes the inputs first, as a dict {input name: numpy array}, not a " + type +
              (inputs.is_none() || py::isinstance<py::list>(inputs)
                   ? "; run(output_names, feeds) is ONNX Runtime's order, which "
                     "subgraph.InferenceSession takes (or call run(feeds, output_names))"
                   : ""));
  }
  std::vector<runtime::InputView> out;
  for (py::handle entry : inputs.attr("items")()) {
    py::tuple kv = py::reinterpret_borrow<py::tuple>(entry);
    if (!py::isinstance<py::str>(kv[0]))
      raise(ErrorKind::kInvalidArgument,
            "Session.run: input names are str, not " +
                std::string(py::str(py::type::of(kv[0]).attr("__name__"))));
    std::string name = py::str(kv[0]);
    py::array a = py::array::ensure(kv[1], py::array::c_style);
    if (!a) {
      PyErr_Clear();
      raise(ErrorKind::kInvalidArgument,
            "input '" + name + "' is a " +
                std::string(py::str(py::type::of(kv[1]).attr("__name__"))) +
                ", not convertible to a numpy array");
    }
    DataType dtype = dataTypeOf(a.dtype());
    if (char kind = a.dtype().kind(); kind == 'U' || kind == 'S' || kind == 'O')
      raise(ErrorKind::kNotImplemented, "input '" + name + "' holds numpy dtype " +
                                            std::string(py::str(a.dtype())) +
                                            "; subgraph has no string or object tensors");
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

namespace {

py::object reportDict(const partition::PartitionReport& report) {
  return py::module_::import("json").attr("loads")(partition::reportToJson(report));
}

// (name, numpy dtype name, dims): a static dim as an int, a symbolic one
// as its name, an unknown one as None; None for a value of unknown rank.
py::list ioInfo(const std::vector<runtime::IoInfo>& infos) {
  py::list out;
  for (const runtime::IoInfo& i : infos) {
    py::object dims = py::none();
    if (i.type.shape) {
      py::list known;
      for (const Dim& d : *i.type.shape) {
        if (d.isStatic())
          known.append(d.size());
        else if (d.isSymbolic())
          known.append(py::str(d.symbolName()));
        else
          known.append(py::none());
      }
      dims = known;
    }
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

// Concurrent requests and dynamic batching (docs/runtime.md).
struct PyServing {
  int64_t maxConcurrentRuns = 0;
  int64_t maxBatch = 0;
  int64_t maxDelayUs = 1000;
};

void applyServing(const PyServing& s, api::InferenceOptions& o) {
  auto bounded = [](int64_t v, int64_t most, const char* name) {
    if (v < 0 || v > most)
      raise(Status::invalid(
          fmt::format("{} must be 0 (off) or more, at most {}, not {}", name, most, v)));
  };
  bounded(s.maxConcurrentRuns, 1 << 16, "max_concurrent_runs");
  bounded(s.maxBatch, 1 << 20, "max_batch");
  bounded(s.maxDelayUs, 60'000'000, "max_delay_us");
  o.maxConcurrentRuns = static_cast<int>(s.maxConcurrentRuns);
  o.batching.maxBatch = s.maxBatch;
  o.batching.maxDelayUs = s.maxDelayUs;
}

PySession makeSession(const py::object& model, const std::vector<std::string>& backends,
                      int64_t threads, const std::string& precision,
                      const std::map<std::string, std::string>& pluginOptions, bool allowFallback,
                      const std::string& passes, const api::InputShapes& inputShapes,
                      const PyLimits& limits, const PyServing& serving) {
  check(runtime::checkThreadCount(threads));
  api::InferenceOptions o;
  applyServing(serving, o);
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
    graph = loadModelArgument(model, inputShapes);
  }
  StatusOr<std::unique_ptr<api::InferenceSession>> made = [&] {
    py::gil_scoped_release release;  // Python selectors take it back per call
    return api::InferenceSession::create(std::move(graph), std::move(o));
  }();
  check(made.status());
  return PySession{std::move(made).value()};
}

// One request; `outputNames` None returns every output.
StatusOr<runtime::RunResult> runRequest(const PySession& self, const py::object& inputs,
                                        const py::object& outputNames, bool profile) {
  std::vector<py::array> keep;
  std::vector<runtime::InputView> in = toInputs(inputs, keep);
  runtime::RunOptions options;
  options.profile = profile;
  if (!outputNames.is_none()) {
    if (py::isinstance<py::str>(outputNames) || !py::isinstance<py::sequence>(outputNames))
      raise(ErrorKind::kInvalidArgument,
            "output_names is a list of output names or None, not a " +
                std::string(py::str(py::type::of(outputNames).attr("__name__"))));
    for (py::handle n : outputNames) {
      if (!py::isinstance<py::str>(n))
        raise(ErrorKind::kInvalidArgument,
              "output_names holds a " + std::string(py::str(py::type::of(n).attr("__name__"))) +
                  "; output names are str");
      options.outputNames.push_back(py::str(n));
    }
  }
  py::gil_scoped_release release;
  return self.s->runInPlace(in, options);
}

py::dict outputsDict(runtime::RunResult& r) {
  py::dict out;
  for (runtime::NamedTensor& t : r.outputs) out[py::str(t.name)] = toArray(std::move(t.tensor));
  return out;
}

py::dict run(const PySession& self, const py::object& inputs, const py::object& outputNames) {
  StatusOr<runtime::RunResult> r = runRequest(self, inputs, outputNames, false);
  check(r.status());
  return outputsDict(*r);
}

// The outputs and, per executed step, its time: what ONNX Runtime's
// profiler records per node.
py::tuple runWithProfile(const PySession& self, const py::object& inputs,
                         const py::object& outputNames) {
  StatusOr<runtime::RunResult> r = runRequest(self, inputs, outputNames, true);
  check(r.status());
  py::list steps;
  for (const runtime::StepTiming& t : r->steps) {
    py::dict d;
    d["name"] = t.step.name;
    d["op"] = t.step.op;
    d["backend"] = t.step.backend;
    d["provider"] = t.step.provider;
    d["scope"] = t.step.scope;
    d["region"] = t.step.isRegion;
    d["copy"] = t.step.isCopy;
    d["ms"] = t.ms;
    d["bytes"] = t.bytes;
    steps.append(d);
  }
  py::dict profile;
  profile["wall_ms"] = r->wallMs;
  profile["steps"] = steps;
  return py::make_tuple(outputsDict(*r), profile);
}

}  // namespace

namespace {

constexpr const char* kSessionDoc =
    R"doc(A model loaded, partitioned for its backends and compiled (docs/python.md).

subgraph.InferenceSession offers the same with ONNX Runtime's interface.

Args:
    model: the model: a path (str or os.PathLike) to a .onnx or .sg file,
        the bytes of an ONNX model or a text graph, or a subgraph.Graph
        (copied; the Graph is not changed).
    backends: backend names in priority order: built-in ones, plugins found
        by name on the plugin search path, plugin files ('./x.so'), or
        backends registered from Python. [] (the default) runs everything
        on the reference CPU backend.
    threads: worker threads; 0 (the default) is one per core, at most 1024.
    precision: "fp32", "bf16", "fp16" or "tf32", handed to the plugins'
        kernels; "" (the default) is each backend's own.
    plugin_options: options for the chosen plugins' kernels,
        {"<plugin>.<name>": "value"}, as `subgraph run --plugin-option`.
    allow_fallback: skip a plugin that cannot load, or fails while
        partitioning, with a line in `warnings`, instead of failing.
    passes: the pass pipeline run before partitioning: "default", "none",
        or a list (docs/passes.md). Not run without backends.
    input_shapes: static sizes for inputs by name, {"input_ids": [1, 128]},
        filling their symbolic dims (as `--shape`); the session then takes
        inputs of those shapes only.
    memory_limit: bytes a request's memory plan may take; None (the
        default) is three quarters of the machine's memory, 0 no limit.
    loop_iterations: most iterations of a Loop; None: the runtime's default.
    loop_seconds: most seconds in one Loop; None: the runtime's default.
    kernel_work: most work of a kernel whose work the data sets (Range,
        ConstantOfShape, ...); None: the runtime's default.
    max_concurrent_runs: requests that run at once when several threads
        call run(); more wait. 0 (the default): no bound. Each running
        request uses up to `threads` threads of its own.
    max_batch: dynamic batching: concurrent requests whose inputs differ
        only in dim 0 run as one batch of at most this many rows, and each
        gets its own rows back; 0 (the default) is off. The session refuses
        a model whose ops mix rows, naming the node.
    max_delay_us: how long the first request of a batch waits for others,
        in microseconds (default 1000).

Raises:
    subgraph.NoSuchFile for a model path that is not there,
    subgraph.InvalidArgument for a bad model, backend, option or name,
    subgraph.NotImplemented for what subgraph cannot run, subgraph.Fail
    for a limit or a failing plugin; all are subgraph.Error.
)doc";

constexpr const char* kRunDoc = R"doc(Runs one request.

Args:
    inputs: {input name: numpy array}; a C-contiguous array of the declared
        type is read in place, any other is made contiguous first.
    output_names: the outputs to return, by name; None (the default)
        returns every output.

Returns:
    {output name: numpy array}, in the model's output order (or
    output_names'). The request runs without the GIL; one session serves
    several threads at once.
)doc";

}  // namespace

void bindSession(py::module_& m) {
  py::class_<PySession>(m, "Session", kSessionDoc)
      .def(py::init([](const py::object& model, const std::vector<std::string>& backends,
                       int64_t threads, const std::string& precision,
                       const std::map<std::string, std::string>& pluginOptions, bool allowFallback,
                       const std::string& passes, const api::InputShapes& inputShapes,
                       std::optional<uint64_t> memoryLimit, std::optional<uint64_t> loopIterations,
                       std::optional<double> loopSeconds, std::optional<uint64_t> kernelWork,
                       int64_t maxConcurrentRuns, int64_t maxBatch, int64_t maxDelayUs) {
             return makeSession(model, backends, threads, precision, pluginOptions, allowFallback,
                                passes, inputShapes,
                                PyLimits{memoryLimit, loopIterations, kernelWork, loopSeconds},
                                PyServing{maxConcurrentRuns, maxBatch, maxDelayUs});
           }),
           py::arg("model"), py::arg("backends") = std::vector<std::string>{},
           py::arg("threads") = 0, py::arg("precision") = "",
           py::arg("plugin_options") = std::map<std::string, std::string>{},
           py::arg("allow_fallback") = false, py::arg("passes") = "default",
           py::arg("input_shapes") = api::InputShapes{}, py::arg("memory_limit") = py::none(),
           py::arg("loop_iterations") = py::none(), py::arg("loop_seconds") = py::none(),
           py::arg("kernel_work") = py::none(), py::arg("max_concurrent_runs") = 0,
           py::arg("max_batch") = 0, py::arg("max_delay_us") = 1000)
      .def("run", &run, py::arg("inputs"), py::arg("output_names") = py::none(), kRunDoc)
      .def(
          "run_with_profile", &runWithProfile, py::arg("inputs"),
          py::arg("output_names") = py::none(),
          "run(), timing each step: returns (outputs, {\"wall_ms\": float, \"steps\": [{\"name\", "
          "\"op\", \"backend\", \"provider\", \"scope\", \"region\", \"copy\", \"ms\", \"bytes\"}, "
          "...]}).")
      .def(
          "save",
          [](const PySession& s, const py::object& path, bool inlineConstants) {
            std::string p = py::str(py::module_::import("os").attr("fspath")(path));
            check(api::saveModel(s.s->session().graph(), p, inlineConstants));
          },
          py::arg("path"), py::arg("inline_constants") = false,
          "Writes the model as the session runs it (simplified and partitioned: each region one "
          "node) to `path`: a .sg text graph (constants of 1 KiB and more in `path`.data unless "
          "inline_constants) or an .onnx model.")
      .def_property_readonly(
          "backends", [](const PySession& s) { return s.s->backends(); },
          "The backends in priority order (after fallback dropped any); [] for the reference "
          "backend alone.")
      .def_property_readonly(
          "inputs", [](const PySession& s) { return ioInfo(s.s->session().inputInfo()); },
          "The inputs as (name, dtype, dims): a dim is an int, a symbol's name, or None.")
      .def_property_readonly(
          "outputs", [](const PySession& s) { return ioInfo(s.s->session().outputInfo()); },
          "The outputs as (name, dtype, dims), as `inputs`.")
      .def_property_readonly(
          "warnings", [](const PySession& s) { return s.s->warnings(); },
          "Lines about backends fallback skipped and plugin folders left out.")
      .def_property_readonly(
          "report",
          [](const PySession& s) -> py::object {
            if (!s.s->report()) return py::none();
            return reportDict(*s.s->report());
          },
          "The partition report (the keys of `subgraph partition --json`); None without "
          "backends.");
}

}  // namespace subgraph::python
