//===- python/src/bindings.h - The Python package's C++ side -*- C++ -*-===//
//
// Shared by the binding files of module `subgraph._subgraph`: views of
// graphs, nodes and values, and the one-line error conversion. A Graph
// handle owns its graph (shared); a Node or Value handle keeps that owner
// alive, or borrows for the duration of a selector callback (the graph
// being partitioned is the partitioner's own copy). A borrowed handle holds
// the callback's Lease, which ends when the callback returns: from then on
// the handle raises subgraph.Error instead of reading a graph that may be
// gone, however the Python code kept it (a list, an attribute, a closure).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/runtime/session.h"
#include "subgraph/support/status.h"

namespace subgraph::python {

namespace py = pybind11;

/// A Python-side graph: the graph it names can be replaced (partition()
/// works on a copy and swaps it in), so handles share this box.
struct GraphBox {
  std::shared_ptr<Graph> graph;
};

/// How long borrowed views stay valid: one selector callback. Read and
/// ended with the GIL held, so it needs no lock.
struct Lease {
  bool active = true;
};

/// Ends `lease` when the callback that made it returns, on every path.
class LeaseScope {
 public:
  LeaseScope() : lease_(std::make_shared<Lease>()) {}
  ~LeaseScope() { lease_->active = false; }
  LeaseScope(const LeaseScope&) = delete;
  LeaseScope& operator=(const LeaseScope&) = delete;
  const std::shared_ptr<Lease>& lease() const { return lease_; }

 private:
  std::shared_ptr<Lease> lease_;
};

/// Raises subgraph.Error unless a view with `owner` and `lease` may still
/// be read: it owns its graph, or its callback has not returned.
void checkAlive(const std::shared_ptr<Graph>& owner, const std::shared_ptr<Lease>& lease,
                const char* kind);

/// A node of a graph: owning (`owner` set) or borrowed (`lease` set).
struct NodeHandle {
  std::shared_ptr<Graph> owner;
  std::shared_ptr<Lease> lease;
  const Node* node = nullptr;
  /// The node; raises subgraph.Error for a view that outlived its callback.
  const Node& get() const {
    checkAlive(owner, lease, "Node");
    return *node;
  }
};

/// A value of a graph: owning (`owner` set) or borrowed (`lease` set).
struct ValueHandle {
  std::shared_ptr<Graph> owner;
  std::shared_ptr<Lease> lease;
  const Value* value = nullptr;
  /// The value; raises subgraph.Error for a view that outlived its callback.
  const Value& get() const {
    checkAlive(owner, lease, "Value");
    return *value;
  }
};

/// The kinds of subgraph.Error, named as ONNX Runtime names its error codes
/// (OrtErrorCode), so that code written for ONNX Runtime catches the same
/// classes: InvalidArgument (a bad argument, model, option or name),
/// NoSuchFile (a model file that is not there), NotImplemented (valid
/// input subgraph cannot handle), Fail (a limit, a plugin's or subgraph's
/// own failure).
enum class ErrorKind { kInvalidArgument, kNoSuchFile, kNotImplemented, kFail };

/// subgraph.Error, the base of every kind.
py::object errorType();
/// The subclass of subgraph.Error for `kind`.
py::object errorType(ErrorKind kind);
/// The kind a status's code maps to.
ErrorKind errorKindOf(StatusCode code);
/// Raises the kind of subgraph.Error for the status's code, with its
/// one-line message.
[[noreturn]] void raise(const Status& status);
/// Raises `kind` with `message`.
[[noreturn]] void raise(ErrorKind kind, const std::string& message);
/// Raises when `status` is not OK.
inline void check(const Status& status) {
  if (!status.isOk()) raise(status);
}

/// The plugin search path: SUBGRAPH_PLUGIN_PATH and the program's default,
/// then the package's own plugin folder (subgraph/_layout.py).
std::vector<std::filesystem::path> pluginDirs();

/// Reads a model for the package: a path (str or os.PathLike) or the bytes
/// of an ONNX model or a text graph. A path that does not exist raises
/// subgraph.NoSuchFile, every other failure the kind of its status.
std::unique_ptr<Graph> loadModelArgument(const py::object& model,
                                         const std::map<std::string, std::vector<int64_t>>& shapes);

/// The dtype name subgraph uses ("float32", ...) for numpy.
std::string numpyDtypeName(DataType dtype);

/// A request's inputs (a dict of numpy arrays) read in place; `keep` holds
/// the arrays for as long as the views are used. Raises for anything else.
std::vector<runtime::InputView> toInputs(const py::object& inputs, std::vector<py::array>& keep);
/// A numpy array that owns `tensor`.
py::array toArray(Tensor tensor);

void bindGraph(py::module_& m);
void bindPipeline(py::module_& m);
void bindSelectors(py::module_& m);
void bindSession(py::module_& m);

}  // namespace subgraph::python
