//===- plugins/host/backend_selection.cpp - SUBGRAPH_BACKEND resolution ---===//
//
// Turns "A,B,./c.so" (or NONE) into backends in priority order; see
// subgraph/plugins/plugin_loader.h for the rules. Security: the variables
// are read with secure_getenv (ignored in setuid programs), empty entries
// of SUBGRAPH_PLUGIN_PATH are skipped (in PATH's convention they would mean
// the current directory), relative ones are resolved against the working
// directory once, here, and a name is only ever turned into an absolute
// path by this file, never given to dlopen's own search.
//
//===----------------------------------------------------------------------===//
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/support/did_you_mean.h"

namespace subgraph::plugins {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(trim(s.substr(start, at == std::string_view::npos ? s.npos : at - start)));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

// The running program's path (/proc/self/exe), or nullopt.
std::optional<std::filesystem::path> programPath() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return std::nullopt;
  return exe;
}

// <program dir>/../lib/subgraph/plugins: bin/ and lib/ are siblings both
// in the build tree and under an install prefix, so this is where an
// installed program finds its plugins, wherever the prefix was moved.
std::optional<std::filesystem::path> programPluginDir() {
  std::optional<std::filesystem::path> exe = programPath();
  if (!exe) return std::nullopt;
  return (exe->parent_path().parent_path() / "lib" / "subgraph" / "plugins").lexically_normal();
}

bool isDirectory(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}

#ifdef SUBGRAPH_BUILD_TREE_DIR
// True for a program that runs from subgraph's build tree (a test binary,
// or build/<preset>/bin/subgraph) rather than from an install.
bool runsFromTheBuildTree() {
  std::optional<std::filesystem::path> exe = programPath();
  if (!exe) return false;
  std::error_code ec;
  std::filesystem::path tree = std::filesystem::weakly_canonical(SUBGRAPH_BUILD_TREE_DIR, ec);
  if (ec) return false;
  std::filesystem::path rel = exe->lexically_relative(tree);
  return !rel.empty() && *rel.begin() != "..";
}
#endif

// A directory without its trailing '/', so "/a/b/" and "/a/b" are one.
std::filesystem::path withoutTrailingSlash(std::filesystem::path p) {
  p = p.lexically_normal();
  if (!p.has_filename() && p != p.root_path()) p = p.parent_path();
  return p;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string joinedPaths(const std::vector<std::filesystem::path>& dirs) {
  std::vector<std::string> s;
  for (const auto& d : dirs) s.push_back(d.string());
  return s.empty() ? "(no plugin directories)" : joined(s);
}

}  // namespace

bool namesPluginFile(std::string_view item) {
  return item.find('/') != std::string_view::npos || item.ends_with(".so");
}

std::filesystem::path pluginFilePath(std::string_view item) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(std::filesystem::path(item), ec);
  return (ec ? std::filesystem::path(item) : p).lexically_normal();
}

PluginSearchPath resolvePluginDirs(const std::vector<std::string>& entries,
                                   std::string_view source) {
  PluginSearchPath out;
  for (const std::string& entry : entries) {
    if (entry.empty()) continue;  // "a::b" or a trailing ':', not a directory
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(std::filesystem::path(entry), ec);
    std::string what = std::string(source) + " entry '" + entry + "'";
    if (!ec) {
      p = withoutTrailingSlash(p);
      if (p.string() != entry) what += " (" + p.string() + ")";
    }
    if (ec) {
      out.dropped.push_back(what + ": " + ec.message() + "; ignored");
    } else if (!std::filesystem::exists(p, ec)) {
      out.dropped.push_back(what + ": no such directory; ignored");
    } else if (!isDirectory(p)) {
      out.dropped.push_back(what + ": not a directory; ignored");
    } else if (std::find(out.dirs.begin(), out.dirs.end(), p) == out.dirs.end()) {
      out.dirs.push_back(p);
    }
  }
  return out;
}

PluginSearchPath resolvePluginSearchPath(std::optional<std::string> pluginPathEnv) {
  if (!pluginPathEnv) {
    const char* env = secure_getenv("SUBGRAPH_PLUGIN_PATH");
    if (env) pluginPathEnv = env;
  }
  PluginSearchPath path;
  if (pluginPathEnv) path = resolvePluginDirs(split(*pluginPathEnv, ':'), "SUBGRAPH_PLUGIN_PATH");
  auto add = [&](const std::filesystem::path& p) {
    std::filesystem::path n = withoutTrailingSlash(p);
    if (isDirectory(n) && std::find(path.dirs.begin(), path.dirs.end(), n) == path.dirs.end())
      path.dirs.push_back(n);
  };
  std::optional<std::filesystem::path> own = programPluginDir();
  if (own) add(*own);
#if defined(SUBGRAPH_BUILD_TREE_DIR) && defined(SUBGRAPH_PLUGIN_BUILD_DIR)
  // A test binary in the build tree has no plugin directory beside it; it
  // finds the build's plugins here. An installed program never does: its
  // own directory exists (the install creates it), and it runs from
  // outside the build tree anyway.
  if ((!own || !isDirectory(*own)) && runsFromTheBuildTree()) add(SUBGRAPH_PLUGIN_BUILD_DIR);
#endif
  return path;
}

std::vector<std::filesystem::path> pluginSearchPath(std::optional<std::string> pluginPathEnv) {
  return resolvePluginSearchPath(std::move(pluginPathEnv)).dirs;
}

std::optional<std::string> backendListFromEnvironment() {
  const char* env = secure_getenv("SUBGRAPH_BACKEND");
  if (!env || !*env) return std::nullopt;
  return std::string(env);
}

bool fallbackFromEnvironment() {
  const char* env = secure_getenv("SUBGRAPH_BACKEND_FALLBACK");
  return env && std::string(env) == "1";
}

std::vector<std::string> BackendSelection::names() const {
  std::vector<std::string> out;
  for (const SelectedBackend& b : backends_) out.push_back(b.name);
  return out;
}

Status checkBackendList(std::string_view list) {
  std::vector<std::string> items = split(list, ',');
  if (items.size() == 1 && items[0] == "NONE") return Status::ok();
  std::set<std::string> seen;
  for (const std::string& item : items) {
    if (item.empty())
      return Status::invalid("backend list '" + std::string(list) + "' has an empty item");
    if (item == "NONE")
      return Status::invalid("NONE cannot be combined with other backends in '" +
                             std::string(list) + "'");
    if (!seen.insert(item).second)
      return Status::invalid("backend list '" + std::string(list) + "' names '" + item + "' twice");
  }
  return Status::ok();
}

namespace {

// The names a backend list may use: the built-in backends and the plugin
// files (<name>.so) on the search path, for "did you mean".
std::vector<std::string> knownBackendNames(const std::vector<std::filesystem::path>& dirs) {
  std::vector<std::string> names = partition::BackendRegistry::global().names();
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().extension() == ".so") names.push_back(entry.path().stem().string());
  }
  return names;
}

}  // namespace

StatusOr<BackendSelection> selectBackends(std::string_view list, const SelectOptions& options) {
  partition::registerBuiltinBackends();
  // The whole list is read before any plugin is loaded: a typo late in it
  // fails before an earlier plugin's side effects.
  SUBGRAPH_RETURN_IF_ERROR(checkBackendList(list));
  BackendSelection selection;
  selection.allowFallback_ = options.allowFallback;
  std::vector<std::string> items = split(list, ',');
  if (items.size() == 1 && items[0] == "NONE") {
    selection.none_ = true;
    return selection;
  }
  std::vector<std::filesystem::path> dirs =
      options.searchPath.empty() ? pluginSearchPath() : options.searchPath;
  // Where each selected name came from, for duplicate messages.
  std::vector<std::pair<std::string, std::string>> origins;
  for (const std::string& item : items) {
    std::shared_ptr<LoadedPlugin> plugin;
    std::string origin;
    Status problem = Status::ok();
    if (namesPluginFile(item)) {
      std::filesystem::path file = pluginFilePath(item);
      StatusOr<std::shared_ptr<LoadedPlugin>> loaded = loadPlugin(file);
      if (loaded.isOk())
        plugin = std::move(loaded).value();
      else
        problem = loaded.status();
      origin = file.string();
    } else if (partition::BackendRegistry::global().contains(item)) {
      origin = "built in";
    } else {
      std::filesystem::path found;
      for (const auto& dir : dirs) {
        std::error_code ec;
        if (std::filesystem::exists(dir / (item + ".so"), ec)) {
          found = dir / (item + ".so");
          break;
        }
      }
      if (found.empty()) {
        problem = Status::error(
            StatusCode::kNotFound,
            "unknown backend '" + item + "'" + didYouMean(item, knownBackendNames(dirs)) +
                ": not built in (" + joined(partition::BackendRegistry::global().names()) +
                ") and no " + item + ".so in the plugin search path (" + joinedPaths(dirs) + ")");
      } else {
        StatusOr<std::shared_ptr<LoadedPlugin>> loaded = loadPlugin(found);
        if (loaded.isOk()) {
          plugin = std::move(loaded).value();
          if (plugin->name() != item)
            problem = Status::invalid("plugin " + found.string() + ": declares backend '" +
                                      plugin->name() + "', not '" + item + "'");
        } else {
          problem = loaded.status();
        }
      }
      origin = found.string();
    }
    std::string name = plugin ? plugin->name() : item;
    if (problem.isOk()) {
      if (plugin && partition::BackendRegistry::global().contains(name))
        problem = Status::invalid("plugin " + origin + ": duplicate backend name '" + name +
                                  "' (a built-in backend has it)");
      for (const auto& [seen, where] : origins)
        if (problem.isOk() && seen == name)
          problem = Status::invalid((plugin ? "plugin " + origin + ": " : std::string()) +
                                    "duplicate backend name '" + name +
                                    "' (already selected from " + where + ")");
    }
    if (!problem.isOk()) {
      if (!options.allowFallback) return problem;
      selection.warnings_.push_back(problem.message() + "; skipped (fallback allowed)");
      continue;
    }
    origins.emplace_back(name, origin);
    selection.backends_.push_back({name, std::move(plugin)});
  }
  return selection;
}

// Transforms, partitioning and transforms for the backends `active`;
// where a backend's part fails, `failed` names it.
StatusOr<partition::PartitionReport> BackendSelection::partitionFor(
    const std::vector<const SelectedBackend*>& active, Graph& graph,
    partition::PartitionOptions options, std::string& failed) const {
  auto transform = [&](int stage) -> Status {
    for (const SelectedBackend* b : active) {
      if (!b->plugin) continue;
      Status st = b->plugin->runTransforms(graph, stage);
      if (!st.isOk()) {
        failed = b->name;
        return st;
      }
    }
    return Status::ok();
  };
  SUBGRAPH_RETURN_IF_ERROR(transform(SG_TRANSFORM_PRE_PARTITION));
  std::vector<partition::SubgraphBackend> instances;
  for (const SelectedBackend* b : active) {
    if (b->plugin) {
      StatusOr<partition::SubgraphBackend> made = b->plugin->instantiateBackend(runOptions_);
      if (!made.isOk()) {
        failed = b->name;
        return made.status();
      }
      instances.push_back(std::move(made).value());
      continue;
    }
    StatusOr<partition::SubgraphBackend> made =
        partition::BackendRegistry::global().instantiate(b->name);
    if (!made.isOk()) return made.status();
    instances.push_back(std::move(made).value());
  }
  options.failedBackend = &failed;
  StatusOr<partition::PartitionReport> report =
      partition::partitionGraph(graph, std::span(instances), options);
  if (!report.isOk()) return report;
  SUBGRAPH_RETURN_IF_ERROR(transform(SG_TRANSFORM_POST_PARTITION));
  return report;
}

StatusOr<partition::PartitionReport> BackendSelection::partition(
    Graph& graph, const partition::PartitionOptions& options) const {
  std::vector<const SelectedBackend*> all;
  for (const SelectedBackend& b : backends_) all.push_back(&b);
  std::string failed;
  return partitionFor(all, graph, options, failed);
}

StatusOr<partition::PartitionReport> BackendSelection::partitionWithFallback(
    std::unique_ptr<Graph>& graph, std::vector<std::string>& warnings,
    const partition::PartitionOptions& options) const {
  if (!allowFallback_) return partition(*graph, options);
  std::vector<const SelectedBackend*> active;
  for (const SelectedBackend& b : backends_) active.push_back(&b);
  std::vector<std::string> dropped;
  while (true) {
    // A failed pass may leave the graph partly partitioned: each try
    // starts from a copy, and only the one that succeeds replaces it.
    std::unique_ptr<Graph> work = graph->clone();
    std::string failed;
    StatusOr<partition::PartitionReport> report = partitionFor(active, *work, options, failed);
    if (report.isOk()) {
      graph = std::move(work);
      for (std::string& line : dropped) report->skipped.push_back(std::move(line));
      return report;
    }
    auto culprit = std::find_if(active.begin(), active.end(), [&](const SelectedBackend* b) {
      return b->plugin && b->name == failed;
    });
    if (culprit == active.end()) return report.status();
    dropped.push_back(failed + ": failed while partitioning: " + report.status().message());
    warnings.push_back("backend '" + failed + "' failed while partitioning and is skipped " +
                       "(fallback allowed): " + report.status().message());
    active.erase(culprit);
  }
}

StatusOr<std::vector<std::shared_ptr<runtime::Backend>>> BackendSelection::runtimeBackends(
    int threads) const {
  PluginRunOptions options;
  options.threads = threads;
  return runtimeBackends(options);
}

StatusOr<std::vector<std::shared_ptr<runtime::Backend>>> BackendSelection::runtimeBackends(
    const PluginRunOptions& options) const {
  std::vector<std::shared_ptr<runtime::Backend>> out;
  std::vector<std::string> known = runtime::BackendRegistry::global().names();
  for (const SelectedBackend& b : backends_) {
    if (b.plugin) {
      if (!b.plugin->hasKernels()) continue;
      StatusOr<std::shared_ptr<runtime::Backend>> made = b.plugin->createRuntimeBackend(options);
      if (!made.isOk()) return made.status();
      out.push_back(std::move(made).value());
    } else if (std::find(known.begin(), known.end(), b.name) != known.end()) {
      StatusOr<std::shared_ptr<runtime::Backend>> made =
          runtime::BackendRegistry::global().create(b.name);
      if (!made.isOk()) return made.status();
      out.push_back(std::move(made).value());
    }
  }
  return out;
}

std::vector<FoundPlugin> discoverPlugins(const std::vector<std::filesystem::path>& searchPath) {
  std::vector<FoundPlugin> found;
  for (const auto& dir : searchPath) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.path().extension() == ".so") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      FoundPlugin f;
      f.path = file;
      StatusOr<std::shared_ptr<LoadedPlugin>> loaded = loadPlugin(file);
      if (loaded.isOk()) {
        f.plugin = std::move(loaded).value();
      } else {
        f.error = loaded.status().message();
        f.unavailable = loaded.status().code() == StatusCode::kUnsupported;
      }
      found.push_back(std::move(f));
    }
  }
  return found;
}

}  // namespace subgraph::plugins
