//===- python/src/selector_bindings.cpp - Selectors written in Python -----===//
//
// A backend written in Python: subgraph.register_backend(name, [property,
// ...]) registers properties whose selectors are Python objects, so an
// author can prototype a fusion before writing the C++ plugin. The
// partitioner calls them with MXNet's semantics (Select, SelectInput,
// SelectOutput, Filter, FilterReason, Reset; CreateSubgraphSelector and
// CreateSubgraphNode on the property), duck-typed: the Python base classes
// in subgraph/__init__.py give the defaults.
//
// The partitioner runs without the GIL; each call into Python takes it.
// Decisions cannot carry errors, so a Python exception answers "no" and is
// remembered; SelectionStatus then fails the partition with the
// exception's one line ("Select: ValueError: ..."), which reaches Python
// as subgraph.Error. Node views passed to callbacks borrow the graph being
// partitioned: they hold the call's Lease (bindings.h), so a view kept past
// its call raises subgraph.Error instead of reading freed nodes. A callback
// is hostile input too: a wrong return type, a node Filter was not given
// or a view from an earlier call fail the partition with one line.
//
//===----------------------------------------------------------------------===//
#include <pybind11/stl.h>

#include <mutex>

#include "bindings.h"
#include "subgraph/partition/backend_registry.h"

namespace subgraph::python {
namespace {

// A Python object that C++ copies freely: only the shared_ptr is copied,
// and the reference is dropped under the GIL (or leaked after the
// interpreter is gone, when the registry outlives it).
using PyRef = std::shared_ptr<py::object>;

PyRef hold(py::object obj) {
  return PyRef(new py::object(std::move(obj)), [](py::object* o) {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      delete o;
    }
  });
}

// The first Python exception of a partitioning run.
class ErrorSlot {
 public:
  void set(std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.empty()) first_ = std::move(message);
  }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::string first_;
};

// "ValueError: message" of the exception being handled (GIL held).
std::string describe(py::error_already_set& e) {
  std::string type = py::str(e.type().attr("__name__"));
  std::string text = py::str(e.value());
  std::string out = type + (text.empty() ? "" : ": " + text);
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// True/False, or (False, "reason"), or None (no).
partition::Decision toDecision(const py::object& r) {
  if (py::isinstance<py::tuple>(r)) {
    py::tuple t = r;
    bool yes = t.size() > 0 && py::bool_(t[0]);
    std::string why = t.size() > 1 ? std::string(py::str(t[1])) : std::string();
    return yes ? partition::Decision::yes() : partition::Decision::no(why);
  }
  return py::bool_(r) ? partition::Decision::yes() : partition::Decision::no();
}

py::object view(const Node& node, const LeaseScope& scope) {
  return py::cast(NodeHandle{nullptr, scope.lease(), &node});
}

// "TypeError: ..." for a C++ exception pybind raised while reading a
// callback's answer (a cast of the wrong type).
std::string describe(const std::exception& e) {
  const char* type = dynamic_cast<const py::value_error*>(&e) ? "ValueError" : "TypeError";
  return std::string(type) + ": " + e.what();
}

class PythonSelector final : public partition::SubgraphSelector {
 public:
  PythonSelector(PyRef obj, std::shared_ptr<ErrorSlot> errors)
      : obj_(std::move(obj)), errors_(std::move(errors)) {}

  partition::Decision Select(const Node& node) override {
    return decide("Select",
                  [&](const LeaseScope& l) { return obj_->attr("Select")(view(node, l)); });
  }
  partition::Decision SelectInput(const Node& node, const Node& producer) override {
    return decide("SelectInput", [&](const LeaseScope& l) {
      return obj_->attr("SelectInput")(view(node, l), view(producer, l));
    });
  }
  partition::Decision SelectOutput(const Node& node, const Node& consumer) override {
    return decide("SelectOutput", [&](const LeaseScope& l) {
      return obj_->attr("SelectOutput")(view(node, l), view(consumer, l));
    });
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept;
    bool ok = guarded("Filter", [&] {
      LeaseScope lease;
      py::list in;
      for (const Node* n : candidates) in.append(view(*n, lease));
      for (py::handle h : obj_->attr("Filter")(in)) kept.push_back(keptCandidate(h, candidates));
    });
    return ok ? kept : std::vector<const Node*>{};
  }
  std::string FilterReason(const Node& node) const override {
    std::string reason;
    guarded("FilterReason", [&] {
      LeaseScope lease;
      reason = py::str(obj_->attr("FilterReason")(view(node, lease)));
    });
    return reason;
  }
  void Reset() override {
    guarded("Reset", [&] { obj_->attr("Reset")(); });
  }

 private:
  // Runs `call` with the GIL; a Python exception, or a C++ one pybind
  // raised reading the answer, is remembered as the partition's failure.
  template <typename Call>
  bool guarded(const char* what, Call&& call) const {
    py::gil_scoped_acquire gil;
    try {
      call();
      return true;
    } catch (py::error_already_set& e) {
      errors_->set(std::string(what) + ": " + describe(e));
    } catch (const std::exception& e) {
      errors_->set(std::string(what) + ": " + describe(e));
    }
    return false;
  }

  template <typename Call>
  partition::Decision decide(const char* what, Call&& call) {
    partition::Decision answer = partition::Decision::no();
    bool ok = guarded(what, [&] {
      LeaseScope lease;
      answer = toDecision(call(lease));
    });
    return ok ? answer : partition::Decision::no("the Python selector raised an exception");
  }

  // The candidate a node Filter returned names; throws (failing the
  // partition) for anything else: another type, a node of another graph, a
  // view kept from an earlier call.
  static const Node* keptCandidate(py::handle h, std::span<const Node* const> candidates) {
    if (!py::isinstance<NodeHandle>(h))
      throw py::type_error("Filter returned a " +
                           std::string(py::str(py::type::of(h).attr("__name__"))) + ", not a Node");
    const NodeHandle& n = h.cast<const NodeHandle&>();
    if (n.owner || !n.lease || !n.lease->active ||
        std::find(candidates.begin(), candidates.end(), n.node) == candidates.end())
      throw py::value_error(
          "Filter returned a node that is not one of the candidates it was given");
    return n.node;
  }

  PyRef obj_;
  std::shared_ptr<ErrorSlot> errors_;
};

class PythonProperty final : public partition::SubgraphProperty {
 public:
  PythonProperty(PyRef obj, std::string name) : obj_(std::move(obj)), name_(std::move(name)) {
    py::gil_scoped_acquire gil;
    partition::PropertyOptions options;
    try {
      options.inferenceOnly = py::bool_(obj_->attr("inference_only"));
      options.minRegionSize = obj_->attr("min_region_size").cast<size_t>();
    } catch (py::error_already_set& e) {
      errors_->set("options: " + describe(e));
    } catch (const std::exception& e) {
      errors_->set("options: min_region_size must be a non-negative int (" + std::string(e.what()) +
                   ")");
    }
    setOptions(options);
  }
  std::string name() const override { return name_; }

  std::unique_ptr<partition::SubgraphSelector> CreateSubgraphSelector() const override {
    py::gil_scoped_acquire gil;
    try {
      py::object selector = obj_->attr("CreateSubgraphSelector")();
      if (selector.is_none()) throw py::value_error("CreateSubgraphSelector returned None");
      return std::make_unique<PythonSelector>(hold(std::move(selector)), errors_);
    } catch (py::error_already_set& e) {
      errors_->set("CreateSubgraphSelector: " + describe(e));
    } catch (const std::exception& e) {
      errors_->set(std::string("CreateSubgraphSelector: ") + e.what());
    }
    return std::make_unique<NoSelector>();
  }

  partition::SubgraphNodeResult CreateSubgraphNode(
      std::shared_ptr<Graph> body, const partition::RegionInfo& region) const override {
    {
      py::gil_scoped_acquire gil;
      try {
        py::object r = obj_->attr("CreateSubgraphNode")(GraphBox{body}, region.id);
        if (!r.is_none()) return partition::SubgraphNodeResult::reject(py::str(r));
      } catch (py::error_already_set& e) {
        errors_->set("CreateSubgraphNode: " + describe(e));
        return partition::SubgraphNodeResult::reject("the Python property raised an exception");
      } catch (const std::exception& e) {
        errors_->set("CreateSubgraphNode: " + describe(e));
        return partition::SubgraphNodeResult::reject("the Python property raised an exception");
      }
    }
    return partition::SubgraphProperty::CreateSubgraphNode(std::move(body), region);
  }

  Status SelectionStatus() const override {
    std::string e = errors_->first();
    return e.empty() ? Status::ok() : Status::invalid("Python property '" + name_ + "': " + e);
  }

 private:
  // What a property whose selector could not be made offers: nothing.
  class NoSelector final : public partition::SubgraphSelector {
    partition::Decision Select(const Node&) override { return partition::Decision::no(); }
    partition::Decision SelectInput(const Node&, const Node&) override {
      return partition::Decision::no();
    }
    partition::Decision SelectOutput(const Node&, const Node&) override {
      return partition::Decision::no();
    }
  };

  PyRef obj_;
  std::string name_;
  std::shared_ptr<ErrorSlot> errors_ = std::make_shared<ErrorSlot>();
};

void registerBackend(const std::string& name, const py::list& properties) {
  partition::BackendRegistry& registry = partition::BackendRegistry::global();
  if (registry.contains(name))
    raise(Status::invalid("backend '" + name + "' is already registered"));
  if (properties.empty()) raise(Status::invalid("backend '" + name + "' has no properties"));
  std::vector<std::pair<PyRef, std::string>> held;
  for (py::handle p : properties) {
    if (!py::hasattr(p, "CreateSubgraphSelector") || !py::hasattr(p, "name"))
      raise(Status::invalid("register_backend('" + name +
                            "'): a property must be a subgraph.SubgraphProperty"));
    held.emplace_back(hold(py::reinterpret_borrow<py::object>(p)),
                      py::str(p.attr("name")).cast<std::string>());
  }
  check(registry.registerBackend(name));
  for (auto& [obj, propertyName] : held)
    check(registry.registerProperty(name, [obj, propertyName]() {
      return std::make_unique<PythonProperty>(obj, propertyName);
    }));
}

}  // namespace

void bindSelectors(py::module_& m) {
  m.def("_register_backend", &registerBackend, py::arg("name"), py::arg("properties"));
  m.def("_backend_names", [] { return partition::BackendRegistry::global().names(); });
}

}  // namespace subgraph::python
