//===- subgraph/partition/backend_registry.h - Named backends -*- C++ -*-===//
//
// A backend is a named, ordered list of properties; each property runs as a
// full partitioning pass, in registration order. The registry is
// process-wide and thread-safe, so a backend may be registered at static
// initialization (the macros below), from a test, or at run time by a
// plugin loader on another thread.
//
// The registry stores property factories, not instances: every partitioning
// run gets fresh properties, so their PrePartition/PostPartition state never
// leaks between runs or threads.
//
// Static libraries drop object files nothing refers to, and with them any
// static registration inside; the built-in backends are therefore
// registered by an explicit call, registerBuiltinBackends().
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/partition/subgraph_property.h"
#include "subgraph/support/status.h"

namespace subgraph::partition {

/// Creates a fresh instance of one property.
using PropertyFactory = std::function<std::unique_ptr<SubgraphProperty>()>;

/// An instantiated backend: its name and its properties, in pass order.
struct SubgraphBackend {
  /// The backend's registered name.
  std::string name;
  /// Properties in registration (= pass) order.
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
};

/// Process-wide registry of backends. All methods are thread-safe.
class BackendRegistry {
 public:
  /// The process-wide registry.
  static BackendRegistry& global();

  /// Declares a backend with no properties yet; declaring it again is a
  /// no-op. Fails for an empty name, one with a comma or whitespace (it
  /// could not be named in `--backend A,B`), or the reserved name "NONE".
  Status registerBackend(std::string_view name);
  /// Appends a property to `backend`, declaring the backend if needed.
  Status registerProperty(std::string_view backend, PropertyFactory factory);
  /// True if a backend named `name` is registered.
  bool contains(std::string_view name) const;
  /// Registered backend names, sorted.
  std::vector<std::string> names() const;
  /// Fresh instances of the named backend's properties. Fails with one line
  /// listing the registered backends when `name` is unknown.
  StatusOr<SubgraphBackend> instantiate(std::string_view name) const;

 private:
  struct Entry {
    std::string name;
    std::vector<PropertyFactory> factories;
  };
  Entry* findLocked(std::string_view name);
  const Entry* findLocked(std::string_view name) const;

  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

/// Instantiates backends by name, in the given (priority) order. The name
/// "NONE" alone yields no backends. Fails on an unknown or repeated name.
StatusOr<std::vector<SubgraphBackend>> instantiateBackends(const std::vector<std::string>& names);

/// Splits a "--backend A,B" value (or $SUBGRAPH_BACKEND) into names,
/// dropping surrounding whitespace; an empty item is an error.
StatusOr<std::vector<std::string>> parseBackendList(std::string_view list);

/// Registers the built-in backends; safe to call any number of times:
///  * `convbn`: Conv -> BatchNormalization.
///  * `convbnrelu`: Conv -> BatchNormalization -> optional Relu.
///  * `convaddrelu`: Conv -> Add (residual) -> Relu.
void registerBuiltinBackends();

namespace detail {
/// Helper object for the registration macros: registers on construction
/// and throws `Error` if that fails, which surfaces at program start.
struct BackendRegistration {
  BackendRegistration(std::string_view backend, PropertyFactory factory);
  explicit BackendRegistration(std::string_view backend);
};
}  // namespace detail

}  // namespace subgraph::partition

#define SUBGRAPH_PARTITION_CONCAT_INNER(a, b) a##b
#define SUBGRAPH_PARTITION_CONCAT(a, b) SUBGRAPH_PARTITION_CONCAT_INNER(a, b)

/// Declares backend `Name` at static-initialization time, e.g.
/// `SUBGRAPH_REGISTER_SUBGRAPH_BACKEND(SgTest);`.
#define SUBGRAPH_REGISTER_SUBGRAPH_BACKEND(Name)                                             \
  static const ::subgraph::partition::detail::BackendRegistration SUBGRAPH_PARTITION_CONCAT( \
      subgraph_backend_registration_, __LINE__)(#Name)

/// Appends a default-constructed `Property` to backend `Backend` at
/// static-initialization time, e.g. `SUBGRAPH_REGISTER_SUBGRAPH_PROPERTY(SgTest, SgProperty);`.
/// Properties of one backend run in the order of these registrations within
/// a translation unit.
#define SUBGRAPH_REGISTER_SUBGRAPH_PROPERTY(Backend, Property)                               \
  static const ::subgraph::partition::detail::BackendRegistration SUBGRAPH_PARTITION_CONCAT( \
      subgraph_property_registration_, __LINE__)(                                            \
      #Backend, []() -> std::unique_ptr<::subgraph::partition::SubgraphProperty> {           \
        return std::make_unique<Property>();                                                 \
      })
