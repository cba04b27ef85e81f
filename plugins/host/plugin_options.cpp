//===- plugins/host/plugin_options.cpp - The options plugins declare ------===//
//
// Since plugin ABI 5 a plugin declares its options (SgOptionDesc), so the
// host checks a session's `--plugin-option <plugin>.<name>=<value>`
// before any plugin code sees it: an unknown name or a value outside the
// option's list is one error line with the known names and a "did you
// mean", instead of an option a plugin silently ignores. Plugins of older
// versions declare nothing and get their options unchecked, as before.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "plugin_tables.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/support/did_you_mean.h"

namespace subgraph::plugins {

namespace {

bool validOptionName(const char* name) {
  if (!name || !*name) return false;
  for (const char* p = name; *p; ++p)
    if (!std::isalnum(static_cast<unsigned char>(*p)) && *p != '_') return false;
  return true;
}

// The '|'-separated list `values` as its entries; empty for NULL or "".
std::vector<std::string> splitValues(const char* values) {
  std::vector<std::string> out;
  if (!values || !*values) return out;
  std::string all(values);
  for (size_t start = 0;;) {
    size_t bar = all.find('|', start);
    out.push_back(all.substr(start, bar - start));
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}

const PluginOption* findOption(const PluginInfo& info, const std::string& name) {
  for (const PluginOption& o : info.options)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

std::string adapters::checkOptionTable(const SgPlugin& p) {
  if (!hasV5Slots(p)) return {};
  if (p.num_options && !p.options) return "the plugin table has an option count with a null array";
  std::set<std::string> seen;
  for (size_t i = 0; i < p.num_options; ++i) {
    const SgOptionDesc* o = p.options[i];
    std::string what = "option " + std::to_string(i);
    if (!o) return what + " is null";
    if (o->abi_version < 5 || o->struct_size < sizeof(SgOptionDesc))
      return what + " has plugin ABI version " + std::to_string(o->abi_version) +
             " or a short struct_size (options exist since version 5)";
    if (!validOptionName(o->name)) return what + " has no valid name (letters, digits, '_')";
    if (!seen.insert(o->name).second) return "two options are named '" + std::string(o->name) + "'";
    for (const std::string& v : splitValues(o->values))
      if (v.empty()) return "option '" + std::string(o->name) + "' lists an empty value";
  }
  return {};
}

std::vector<PluginOption> adapters::describeOptions(const SgPlugin& p) {
  std::vector<PluginOption> out;
  if (!hasV5Slots(p)) return out;
  for (size_t i = 0; i < p.num_options; ++i) {
    const SgOptionDesc& o = *p.options[i];
    out.push_back({o.name, splitValues(o.values), o.default_value ? o.default_value : "",
                   o.doc ? o.doc : ""});
  }
  return out;
}

Status LoadedPlugin::checkOptions(const PluginRunOptions& options) const {
  if (!adapters::hasV5Slots(*plugin_)) return Status::ok();
  std::vector<std::string> names;
  for (const PluginOption& o : info_.options) names.push_back(o.name);
  const std::string prefix = info_.name + ".";
  for (const auto& [key, value] : options.options) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    std::string name = key.substr(prefix.size());
    const PluginOption* option = findOption(info_, name);
    if (!option)
      return Status(
          StatusCode::kUsage,
          fmt::format(
              "plugin option '{}': backend '{}' has no option '{}'{}; its options: {}", key,
              info_.name, name, didYouMean(name, names),
              names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
    if (option->values.empty() ||
        std::find(option->values.begin(), option->values.end(), value) != option->values.end())
      continue;
    return Status(StatusCode::kUsage,
                  fmt::format("plugin option '{}={}': '{}' is not a value of {}{}; it takes {}",
                              key, value, value, key, didYouMean(value, option->values),
                              fmt::join(option->values, ", ")));
  }
  return Status::ok();
}

Status checkOptionBackend(const std::string& entry, const std::string& backend,
                          const std::vector<std::string>& chosen) {
  if (std::find(chosen.begin(), chosen.end(), backend) != chosen.end()) return Status::ok();
  return Status(
      StatusCode::kUsage,
      fmt::format("plugin option '{}' is for backend '{}', which is not chosen ({}){}", entry,
                  backend,
                  chosen.empty() ? std::string("none") : fmt::format("{}", fmt::join(chosen, ",")),
                  didYouMean(backend, chosen)));
}

Status BackendSelection::setRunOptions(const PluginRunOptions& options) {
  std::vector<std::string> chosen = names();
  for (const auto& [key, value] : options.options) {
    size_t dot = key.find('.');
    std::string backend = key.substr(0, dot);
    if (dot == std::string::npos || dot == 0 || dot + 1 == key.size())
      return Status(StatusCode::kUsage, "plugin option '" + key + "' is not PLUGIN.NAME");
    SUBGRAPH_RETURN_IF_ERROR(checkOptionBackend(key, backend, chosen));
  }
  for (const SelectedBackend& b : backends_)
    if (b.plugin) SUBGRAPH_RETURN_IF_ERROR(b.plugin->checkOptions(options));
  runOptions_ = options;
  return Status::ok();
}

}  // namespace subgraph::plugins
