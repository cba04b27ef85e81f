//===- subgraph/backend_registry.cpp - Named backends ---------------------===//
//
// The process-wide backend registry. A vector of entries rather than a map
// keeps registration order visible in error messages, and the handful of
// backends a process knows makes the linear lookup free.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/backend_registry.h"

#include <algorithm>
#include <cctype>

namespace subgraph::partition {
namespace {

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out.empty() ? "(none)" : out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

BackendRegistry& BackendRegistry::global() {
  // Leaked on purpose: static registrations in other translation units may
  // run before or after this one, and plugins may register during exit.
  static BackendRegistry* registry = new BackendRegistry();
  return *registry;
}

BackendRegistry::Entry* BackendRegistry::findLocked(std::string_view name) {
  for (Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const BackendRegistry::Entry* BackendRegistry::findLocked(std::string_view name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

Status BackendRegistry::registerBackend(std::string_view name) {
  if (name.empty()) return Status::invalid("a subgraph backend needs a non-empty name");
  if (name == "NONE")
    return Status::invalid("'NONE' is reserved: it means 'no backend' in --backend");
  for (char c : name)
    if (c == ',' || std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c)))
      return Status::invalid("subgraph backend name '" + std::string(name) +
                             "' may not contain commas, spaces or control characters");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!findLocked(name)) entries_.push_back(Entry{std::string(name), {}});
  return Status::ok();
}

Status BackendRegistry::registerProperty(std::string_view backend, PropertyFactory factory) {
  if (!factory)
    return Status::invalid("subgraph backend '" + std::string(backend) +
                           "': cannot register a null property factory");
  SUBGRAPH_RETURN_IF_ERROR(registerBackend(backend));
  std::lock_guard<std::mutex> lock(mutex_);
  findLocked(backend)->factories.push_back(std::move(factory));
  return Status::ok();
}

bool BackendRegistry::contains(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return findLocked(name) != nullptr;
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_) out.push_back(e.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

StatusOr<SubgraphBackend> BackendRegistry::instantiate(std::string_view name) const {
  std::vector<PropertyFactory> factories;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Entry* e = findLocked(name);
    if (e) factories = e->factories;
  }
  if (factories.empty() && !contains(name))
    return Status(StatusCode::kNotFound, "unknown subgraph backend '" + std::string(name) +
                                             "'; available: " + joinNames(names()));
  SubgraphBackend backend;
  backend.name = std::string(name);
  // Factories run outside the lock: a property constructor may itself
  // consult the registry.
  for (const PropertyFactory& make : factories) {
    std::unique_ptr<SubgraphProperty> property = make();
    if (!property)
      return Status::invalid("subgraph backend '" + backend.name +
                             "': a property factory returned nothing");
    backend.properties.push_back(std::move(property));
  }
  return backend;
}

StatusOr<std::vector<SubgraphBackend>> instantiateBackends(const std::vector<std::string>& names) {
  std::vector<SubgraphBackend> backends;
  if (names.size() == 1 && names[0] == "NONE") return backends;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "NONE")
      return Status::invalid("backend 'NONE' cannot be combined with other backends");
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        return Status::invalid("subgraph backend '" + names[i] + "' is listed twice");
    auto backend = BackendRegistry::global().instantiate(names[i]);
    if (!backend) return backend.status();
    backends.push_back(std::move(backend).value());
  }
  return backends;
}

StatusOr<std::vector<std::string>> parseBackendList(std::string_view list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string_view item =
        trim(list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
    if (item.empty())
      return Status::invalid("empty backend name in backend list '" + std::string(list) + "'");
    names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return names;
}

namespace detail {

BackendRegistration::BackendRegistration(std::string_view backend, PropertyFactory factory) {
  throwIfError(BackendRegistry::global().registerProperty(backend, std::move(factory)));
}

BackendRegistration::BackendRegistration(std::string_view backend) {
  throwIfError(BackendRegistry::global().registerBackend(backend));
}

}  // namespace detail
}  // namespace subgraph::partition
