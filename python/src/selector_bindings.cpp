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
// Decisions cannot carry errors, so a failed callback answers "no" and is
// remembered; SelectionStatus then fails the partition with one line that
// names the property (the partitioner's prefix), the method, the node(s) it
// was called on, and what went wrong: the exception it raised
// ("ConvBnSelector.Select on node 'conv1' (Conv) raised ValueError: ..."),
// or the answer it gave and the kind expected ("returned a str ('yes');
// expected True, False or (False, \"reason\")"). That reaches Python as
// subgraph.InvalidArgument. Answers are read strictly: a decision is a bool
// (Python's or numpy's) or a (bool, str) tuple, never any truthy object,
// and a forgotten return (None) is named as such. Node views passed to
// callbacks borrow the graph being partitioned: they hold the call's Lease
// (bindings.h), so a view kept past its call raises subgraph.Error instead
// of reading freed nodes; a node Filter was not given, or a view from an
// earlier call, fails the partition too.
//
// register_backend refuses a name the backend list could not reach (a
// plugin file's form) and one a plugin on the search path already has:
// built-in and registered names win over plugins, so the plugin would be
// silently shadowed.
//
//===----------------------------------------------------------------------===//
#include <pybind11/stl.h>

#include <filesystem>
#include <mutex>
#include <optional>

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

// "ValueError: message" of the exception being handled (GIL held), on
// one line. An exception whose str() raises is named by its type alone.
std::string describe(py::error_already_set& e) {
  std::string out = py::str(e.type().attr("__name__"));
  try {
    std::string text = py::str(e.value());
    if (!text.empty()) out += ": " + text;
  } catch (py::error_already_set&) {
  }
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

// "a str ('yes')": what a callback handed back, for a message (GIL held).
std::string describeAnswer(py::handle answer) {
  if (answer.is_none()) return "None";
  std::string type = py::str(py::type::of(answer).attr("__name__"));
  std::string text;
  try {
    text = py::repr(answer);
  } catch (py::error_already_set&) {
    return "a " + type;
  }
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  std::replace(text.begin(), text.end(), '\n', ' ');
  return "a " + type + " (" + text + ")";
}

// A callback's answer that is not of the kind its method promises: the
// message says what came back and what was expected.
class WrongAnswer : public std::runtime_error {
 public:
  explicit WrongAnswer(const std::string& message) : std::runtime_error(message) {}
};

// "node 'conv1' (Conv)".
std::string nodeWords(const Node& node) {
  return "node '" + node.displayName() + "' (" + node.qualifiedOpType() + ")";
}

// "2 nodes ('conv1', 'bn1')", naming at most three.
std::string nodesWords(std::span<const Node* const> nodes) {
  std::string out = std::to_string(nodes.size()) + (nodes.size() == 1 ? " node (" : " nodes (");
  for (size_t i = 0; i < nodes.size() && i < 3; ++i)
    out += (i ? ", '" : "'") + nodes[i]->displayName() + "'";
  return out + (nodes.size() > 3 ? ", ...)" : ")");
}

// A Python bool or a numpy bool; other truthy objects (1, "no", a list)
// are not decisions.
bool isBool(py::handle h) {
  if (PyBool_Check(h.ptr())) return true;
  py::handle type = py::type::of(h);
  std::string module = py::str(type.attr("__module__"));
  std::string name = py::str(type.attr("__name__"));
  return module == "numpy" && (name == "bool_" || name == "bool");
}

constexpr const char* kDecisionExpected = "expected True, False or (False, \"reason\")";

// True/False, or (False, "reason"); anything else (None included: a
// forgotten return) is a wrong answer.
partition::Decision toDecision(const py::object& r) {
  if (isBool(r)) return py::bool_(r) ? partition::Decision::yes() : partition::Decision::no();
  if (py::isinstance<py::tuple>(r)) {
    py::tuple t = r;
    if (t.size() >= 1 && t.size() <= 2 && isBool(t[0]) &&
        (t.size() == 1 || py::isinstance<py::str>(t[1]))) {
      if (py::bool_(t[0])) return partition::Decision::yes();
      return partition::Decision::no(t.size() == 2 ? std::string(py::str(t[1])) : std::string());
    }
  }
  throw WrongAnswer(describeAnswer(r) + "; " + kDecisionExpected +
                    (r.is_none() ? " (a missing return?)" : ""));
}

py::object view(const Node& node, const LeaseScope& scope) {
  return py::cast(NodeHandle{nullptr, scope.lease(), &node});
}

// The class of `obj`, for messages ("ConvBnSelector").
std::string className(const py::handle& obj) { return py::str(py::type::of(obj).attr("__name__")); }

// Runs `call` with the GIL. A Python exception, an answer of the wrong
// kind, or a C++ exception pybind raised reading the answer becomes one
// line in `errors`: where(), the method and its node, then what happened.
template <typename Where, typename Call>
bool guarded(ErrorSlot& errors, Where&& where, Call&& call) {
  py::gil_scoped_acquire gil;
  try {
    call();
    return true;
  } catch (py::error_already_set& e) {
    errors.set(where() + " raised " + describe(e));
  } catch (const WrongAnswer& e) {
    errors.set(where() + " returned " + e.what());
  } catch (const std::exception& e) {
    errors.set(where() + " failed: " + e.what());
  }
  return false;
}

// The methods a selector must have (the base class gives them all).
constexpr const char* kSelectorMethods[] = {"Select", "SelectInput",  "SelectOutput",
                                            "Filter", "FilterReason", "Reset"};

class PythonSelector final : public partition::SubgraphSelector {
 public:
  // Called with the GIL held.
  PythonSelector(PyRef obj, std::shared_ptr<ErrorSlot> errors)
      : obj_(std::move(obj)), class_(className(*obj_)), errors_(std::move(errors)) {}

  partition::Decision Select(const Node& node) override {
    return decide([&] { return method("Select") + " on " + nodeWords(node); },
                  [&](const LeaseScope& l) { return obj_->attr("Select")(view(node, l)); });
  }
  partition::Decision SelectInput(const Node& node, const Node& producer) override {
    return decide(
        [&] {
          return method("SelectInput") + " on " + nodeWords(node) + " and its producer " +
                 nodeWords(producer);
        },
        [&](const LeaseScope& l) {
          return obj_->attr("SelectInput")(view(node, l), view(producer, l));
        });
  }
  partition::Decision SelectOutput(const Node& node, const Node& consumer) override {
    return decide(
        [&] {
          return method("SelectOutput") + " on " + nodeWords(node) + " and its consumer " +
                 nodeWords(consumer);
        },
        [&](const LeaseScope& l) {
          return obj_->attr("SelectOutput")(view(node, l), view(consumer, l));
        });
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept;
    bool ok = guarded(
        *errors_, [&] { return method("Filter") + " on a region of " + nodesWords(candidates); },
        [&] {
          LeaseScope lease;
          py::list in;
          for (const Node* n : candidates) in.append(view(*n, lease));
          py::object answer = obj_->attr("Filter")(in);
          if (!py::isinstance<py::list>(answer) && !py::isinstance<py::tuple>(answer))
            throw WrongAnswer(describeAnswer(answer) + "; " + kFilterExpected);
          for (py::handle h : answer) kept.push_back(keptCandidate(h, candidates));
        });
    return ok ? kept : std::vector<const Node*>{};
  }
  std::string FilterReason(const Node& node) const override {
    std::string reason;
    guarded(
        *errors_, [&] { return method("FilterReason") + " on " + nodeWords(node); },
        [&] {
          LeaseScope lease;
          py::object answer = obj_->attr("FilterReason")(view(node, lease));
          if (!py::isinstance<py::str>(answer))
            throw WrongAnswer(describeAnswer(answer) + "; expected a str");
          reason = py::str(answer);
        });
    return reason;
  }
  void Reset() override {
    guarded(
        *errors_, [&] { return method("Reset"); }, [&] { obj_->attr("Reset")(); });
  }

 private:
  static constexpr const char* kFilterExpected = "expected a list of the Node objects it was given";

  // "ConvBnSelector.Select".
  std::string method(const char* name) const { return class_ + "." + name; }

  template <typename Where, typename Call>
  partition::Decision decide(Where&& where, Call&& call) {
    partition::Decision answer = partition::Decision::no();
    bool ok = guarded(*errors_, where, [&] {
      LeaseScope lease;
      answer = toDecision(call(lease));
    });
    return ok ? answer : partition::Decision::no("the Python selector failed");
  }

  // The candidate a node Filter returned names; throws (failing the
  // partition) for anything else: another type, a node of another graph, a
  // view kept from an earlier call.
  static const Node* keptCandidate(py::handle h, std::span<const Node* const> candidates) {
    if (!py::isinstance<NodeHandle>(h))
      throw WrongAnswer("a list holding " + describeAnswer(h) + "; " + kFilterExpected);
    const NodeHandle& n = h.cast<const NodeHandle&>();
    if (n.owner || !n.lease || !n.lease->active ||
        std::find(candidates.begin(), candidates.end(), n.node) == candidates.end())
      throw WrongAnswer("a node that is not one of the candidates it was given; " +
                        std::string(kFilterExpected));
    return n.node;
  }

  PyRef obj_;
  std::string class_;
  std::shared_ptr<ErrorSlot> errors_;
};

class PythonProperty final : public partition::SubgraphProperty {
 public:
  PythonProperty(PyRef obj, std::string name) : obj_(std::move(obj)), name_(std::move(name)) {
    py::gil_scoped_acquire gil;
    class_ = className(*obj_);
    partition::PropertyOptions options;
    try {
      options.inferenceOnly = py::bool_(obj_->attr("inference_only"));
      py::object size = obj_->attr("min_region_size");
      if (!py::isinstance<py::int_>(size) || size.cast<int64_t>() < 0)
        throw WrongAnswer("min_region_size must be a non-negative int, not " +
                          describeAnswer(size));
      options.minRegionSize = size.cast<size_t>();
    } catch (py::error_already_set& e) {
      errors_->set(class_ + " options: " + describe(e));
    } catch (const std::exception& e) {
      errors_->set(class_ + " options: " + e.what());
    }
    setOptions(options);
  }
  std::string name() const override { return name_; }

  std::unique_ptr<partition::SubgraphSelector> CreateSubgraphSelector() const override {
    std::unique_ptr<partition::SubgraphSelector> made;
    guarded(
        *errors_, [&] { return class_ + ".CreateSubgraphSelector"; },
        [&] {
          py::object selector = obj_->attr("CreateSubgraphSelector")();
          if (selector.is_none())
            throw WrongAnswer("None; expected a subgraph.SubgraphSelector (a missing return?)");
          for (const char* m : kSelectorMethods)
            if (!py::hasattr(selector, m))
              throw WrongAnswer(describeAnswer(selector) + ", which has no method " + m +
                                "; expected a subgraph.SubgraphSelector");
          made = std::make_unique<PythonSelector>(hold(std::move(selector)), errors_);
        });
    if (!made) made = std::make_unique<NoSelector>();
    return made;
  }

  partition::SubgraphNodeResult CreateSubgraphNode(
      std::shared_ptr<Graph> body, const partition::RegionInfo& region) const override {
    std::optional<std::string> rejected;
    bool ok = guarded(
        *errors_,
        [&] {
          return class_ + ".CreateSubgraphNode on region " + std::to_string(region.id) + " of " +
                 nodesWords(region.nodes);
        },
        [&] {
          py::object r = obj_->attr("CreateSubgraphNode")(GraphBox{body}, region.id);
          if (py::isinstance<py::str>(r))
            rejected = std::string(py::str(r));
          else if (!r.is_none())
            throw WrongAnswer(describeAnswer(r) +
                              "; expected None to accept the region or a str to reject it");
        });
    if (!ok) return partition::SubgraphNodeResult::reject("the Python property failed");
    if (rejected) return partition::SubgraphNodeResult::reject(*rejected);
    return partition::SubgraphProperty::CreateSubgraphNode(std::move(body), region);
  }

  Status SelectionStatus() const override {
    std::string e = errors_->first();
    // The partitioner names the backend and the property before this.
    return e.empty() ? Status::ok() : Status::invalid(e);
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
  std::string class_;
  std::shared_ptr<ErrorSlot> errors_ = std::make_shared<ErrorSlot>();
};

// A name the backend list can reach: not a plugin file's ("x.so", "./x"),
// not a list's ("a,b", "NONE"), and not a plugin's on the search path,
// which the registered backend would shadow (built-in names win).
Status checkBackendName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Status::invalid("register_backend('" + name + "'): " + why);
  };
  if (name.empty() || name == "NONE" || name.find_first_of(",/ ") != std::string::npos ||
      name.ends_with(".so"))
    return bad("a backend name must be a plain word (no ',', '/' or spaces, not NONE, no .so)");
  for (const std::filesystem::path& dir : pluginDirs()) {
    std::error_code ec;
    std::filesystem::path file = dir / (name + ".so");
    if (std::filesystem::exists(file, ec))
      return bad("plugin " + file.string() +
                 " already has that name, and a registered backend would hide it; choose "
                 "another name");
  }
  if (partition::BackendRegistry::global().contains(name))
    return bad("a backend of that name is already registered (built in or from Python)");
  return Status::ok();
}

// The property's name, or a line saying what is wrong with the object.
StatusOr<std::string> propertyName(const std::string& backend, size_t index, py::handle p) {
  std::string where =
      "register_backend('" + backend + "'): properties[" + std::to_string(index) + "] ";
  if (!py::hasattr(p, "CreateSubgraphSelector"))
    return Status::invalid(where + "is " + describeAnswer(p) +
                           ", which has no CreateSubgraphSelector; expected a "
                           "subgraph.SubgraphProperty");
  if (!py::hasattr(p, "name"))
    return Status::invalid(where + "(" + className(p) +
                           ") has no name: its __init__ must call super().__init__(\"name\") "
                           "(subgraph.SubgraphProperty.__init__)");
  py::object name = p.attr("name");
  if (!py::isinstance<py::str>(name) || py::str(name).cast<std::string>().empty())
    return Status::invalid(where + "(" + className(p) + ") has name " + describeAnswer(name) +
                           "; expected a non-empty str");
  return py::str(name).cast<std::string>();
}

void registerBackend(const std::string& name, const py::list& properties) {
  partition::registerBuiltinBackends();  // so that their names are taken
  check(checkBackendName(name));
  if (properties.empty()) raise(Status::invalid("backend '" + name + "' has no properties"));
  std::vector<std::pair<PyRef, std::string>> held;
  for (size_t i = 0; i < properties.size(); ++i) {
    StatusOr<std::string> propertyNameOr = propertyName(name, i, properties[i]);
    check(propertyNameOr.status());
    held.emplace_back(hold(py::reinterpret_borrow<py::object>(properties[i])),
                      std::move(propertyNameOr).value());
  }
  partition::BackendRegistry& registry = partition::BackendRegistry::global();
  check(registry.registerBackend(name));
  for (auto& [obj, propertyName] : held)
    check(registry.registerProperty(name, [obj, propertyName]() {
      return std::make_unique<PythonProperty>(obj, propertyName);
    }));
}

}  // namespace

void bindSelectors(py::module_& m) {
  m.def("_register_backend", &registerBackend, py::arg("name"), py::arg("properties"));
  m.def("_backend_names", [] {
    partition::registerBuiltinBackends();  // lazily registered; list them before any selection
    return partition::BackendRegistry::global().names();
  });
}

}  // namespace subgraph::python
