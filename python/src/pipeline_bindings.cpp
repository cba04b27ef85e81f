//===- python/src/pipeline_bindings.cpp - subgraph.MpiPipeline -----------===//
//
// subgraph.MpiPipeline wraps api::MpiPipelinedSession for scripts started
// by `mpirun -np N python3 script.py`: every rank builds one with the same
// model and devices; rank 0 calls run() and close(), the others serve().
// Loading errors do not raise before the ranks agree: a rank whose model
// cannot be read joins the setup with its error, so every rank raises the
// same one-line error naming it instead of the others waiting.
//
//===----------------------------------------------------------------------===//
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.h"
#include "subgraph/api/mpi_pipeline.h"
#include "subgraph/api/stages.h"

namespace subgraph::python {
namespace {

struct PyMpiPipeline {
  std::unique_ptr<api::MpiPipelinedSession> s;
  api::MpiPipelinedSession& get() const {
    if (!s) raise(ErrorKind::kInvalidArgument, "the MpiPipeline has failed or closed");
    return *s;
  }
};

// The model as a graph, or the error reading it (kept, not raised).
StatusOr<std::unique_ptr<Graph>> modelOrError(const py::object& model) {
  try {
    if (py::isinstance<GraphBox>(model)) return model.cast<GraphBox&>().graph->clone();
    return loadModelArgument(model, {});
  } catch (py::error_already_set& e) {
    return Status(StatusCode::kInvalidArgument, std::string(py::str(e.value())));
  }
}

PyMpiPipeline makePipeline(const py::object& model, const std::vector<std::string>& devices,
                           const std::vector<uint64_t>& memoryLimits,
                           const std::vector<std::string>& backends, int64_t threads,
                           const std::string& precision,
                           const std::map<std::string, std::string>& pluginOptions,
                           const std::string& passes, const api::InputShapes& microBatch,
                           double timeout) {
  check(runtime::checkThreadCount(threads));
  StatusOr<std::vector<api::StageDevice>> stageDevices =
      api::stageDevices(devices, memoryLimits, "memory_limits");
  check(stageDevices.status());
  api::InferenceOptions o;
  o.backends = fmt::format("{}", fmt::join(backends, ","));
  o.threads = static_cast<int>(threads);
  o.precision = precision;
  o.pluginOptions = pluginOptions;
  o.passes = passes;
  o.pluginSearchPath = pluginDirs();
  o.memoryLimitBytes = api::defaultMemoryLimitBytes();
  StatusOr<std::unique_ptr<Graph>> graph = modelOrError(model);
  auto made = [&] {
    py::gil_scoped_release release;
    return api::MpiPipelinedSession::create(std::move(graph), std::move(o),
                                            std::move(stageDevices).value(), microBatch,
                                            api::MpiOptions{timeout});
  }();
  check(made.status());
  return PyMpiPipeline{std::move(made).value()};
}

py::dict runPipeline(PyMpiPipeline& self, const py::object& inputs, int64_t microBatches) {
  if (microBatches < 1 || microBatches > (1 << 20))
    raise(Status::invalid(
        fmt::format("micro_batches must be from 1 to {}, not {}", 1 << 20, microBatches)));
  std::vector<py::array> keep;
  std::vector<runtime::NamedTensor> feeds;
  for (const runtime::InputView& v : toInputs(inputs, keep)) {
    const auto* b = static_cast<const std::byte*>(v.data);
    feeds.push_back({v.name, Tensor(v.dtype, v.dims, std::vector<std::byte>(b, b + v.bytes))});
  }
  api::MpiPipelinedSession& s = self.get();
  auto ran = [&] {
    py::gil_scoped_release release;
    return s.run(feeds, static_cast<size_t>(microBatches));
  }();
  check(ran.status());
  py::dict out;
  for (runtime::NamedTensor& t : *ran) out[py::str(t.name)] = toArray(std::move(t.tensor));
  return out;
}

size_t servePipeline(PyMpiPipeline& self) {
  api::MpiPipelinedSession& s = self.get();
  auto served = [&] {
    py::gil_scoped_release release;
    return s.serve();
  }();
  check(served.status());
  return *served;
}

constexpr const char* kDoc = R"doc(One pipeline stage per MPI rank.

Start the script with `mpirun -np N python3 script.py`; every rank builds
an MpiPipeline with the same model and N devices. Rank 0 calls run() (as
often as it likes) and then close(); every other rank calls serve(), which
returns once rank 0 closes. A rank that fails, or that waits longer than
`timeout` seconds for its peer within a run, ends every rank's call with
the same subgraph.Error naming the rank and stage.)doc";

}  // namespace

void bindPipeline(py::module_& m) {
  m.def("mpi_available", &api::mpiBuilt, "True if this build runs pipelines over MPI.");
  py::class_<PyMpiPipeline>(m, "MpiPipeline", kDoc)
      .def(py::init(&makePipeline), py::arg("model"), py::arg("devices"),
           py::arg("memory_limits") = std::vector<uint64_t>{},
           py::arg("backends") = std::vector<std::string>{}, py::arg("threads") = 0,
           py::arg("precision") = "",
           py::arg("plugin_options") = std::map<std::string, std::string>{},
           py::arg("passes") = "default", py::arg("micro_batch_shapes") = api::InputShapes{},
           py::arg("timeout") = 60.0)
      .def_property_readonly("rank", [](const PyMpiPipeline& p) { return p.get().rank(); })
      .def_property_readonly("ranks", [](const PyMpiPipeline& p) { return p.get().ranks(); })
      .def_property_readonly(
          "plan",
          [](const PyMpiPipeline& p) {
            return py::module_::import("json").attr("loads")(api::stagesToJson(p.get().plan()));
          })
      .def("run", &runPipeline, py::arg("inputs"), py::arg("micro_batches") = 1,
           "Rank 0: runs `inputs` through every rank's stage in `micro_batches` parts of dim 0; "
           "returns the outputs.")
      .def("serve", &servePipeline,
           "Every other rank: runs this rank's stage until rank 0 closes; returns how many "
           "micro-batches it ran.")
      .def(
          "close",
          [](PyMpiPipeline& p) {
            if (p.s) check(p.s->close());
          },
          "Rank 0: ends every rank's serve().")
      .def("__enter__", [](py::object self) { return self; })
      .def(
          "__exit__",
          [](PyMpiPipeline& p, const py::object&, const py::object&, const py::object&) {
            // Closing ends the other ranks' serve(); an error already on
            // its way out is not replaced by close()'s.
            if (p.s) (void)p.s->close();
            return false;
          },
          "Rank 0: close() on leaving a `with` block.");
  // MPI ends with the interpreter, once every pipeline is gone.
  py::module_::import("atexit").attr("register")(py::cpp_function([] { api::mpiFinalize(); }));
}

}  // namespace subgraph::python
