//===- subgraph/plugins/plugin_loader.h - Loading backend plugins -*- C++ -*-===//
//
// The host side of the plugin boundary (subgraph/plugin_abi.h). A plugin is
// a shared library loaded with Boost.DLL (RTLD_NOW | RTLD_LOCAL, always by
// absolute path); its tables are checked once at load time and then adapted
// to the in-process APIs:
//  * each property becomes a partition::SubgraphProperty (a declarative
//    pattern runs on the host's own PatternSelector);
//  * op definitions are registered in the global OpRegistry;
//  * kernel creators become a runtime::Provider of a runtime::Backend named
//    after the plugin, on the plugin's device allocator;
//  * transforms run before and after partitioning (BackendSelection).
// Everything adapted holds a shared_ptr to the LoadedPlugin, so the library
// stays mapped while any selector or kernel of it exists and is unloaded
// (SgPlugin::release, then dlclose) when the last one goes.
//
// Backend selection (`SUBGRAPH_BACKEND`, `--backend`): a comma-separated
// priority list of plugin files, backend names, or NONE. One rule, also for
// `subgraph check-plugin`:
//  * an item containing a '/' or ending in ".so" is a plugin file, absolute
//    or relative to the working directory (`./x.so`, `x.so`, `lib/x.so`);
//  * anything else is a name: a backend registered in-process (the
//    built-ins convbn, convbnrelu, convaddrelu), or `<dir>/<name>.so` for
//    the first directory of the search path that has it.
// The search path is the directories of SUBGRAPH_PLUGIN_PATH (relative
// ones resolved against the working directory; an entry that is not a
// directory is dropped, and resolvePluginSearchPath() says why), then the
// program's own plugin directory, `<program dir>/../lib/subgraph/plugins`
// (the installed layout, and the build tree's). A program running from the
// build tree without a plugin directory beside it (a test binary) searches
// the build tree's instead; an installed program never does. A bare name
// is never handed to the system loader, and the working directory is
// searched only where SUBGRAPH_PLUGIN_PATH names it.
//
// Errors are one line naming the plugin's path and the reason. A plugin
// that cannot be used fails the selection unless the caller opts into
// fallback, which skips it with a warning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/support/status.h"

struct SgPlugin;
struct SgLayoutDesc;
struct SgDeviceDesc;

namespace subgraph::plugins {

/// One option a plugin declares (ABI 5), as `subgraph plugins` lists it.
struct PluginOption {
  std::string name;                 ///< Without the plugin's prefix.
  std::vector<std::string> values;  ///< The values it takes; empty: any.
  std::string defaultValue;         ///< What the plugin does without it.
  std::string doc;                  ///< One line.
};

/// What a plugin registers, as `subgraph plugins` lists it.
struct PluginInfo {
  std::string name;                     ///< Backend name.
  std::string version;                  ///< The plugin's own version string.
  std::string description;              ///< One line.
  std::string path;                     ///< Absolute path of the library.
  uint32_t abiVersion = 0;              ///< The plugin ABI version it was built against.
  std::vector<std::string> properties;  ///< In pass order.
  std::vector<std::string> ops;         ///< Qualified op types it defines.
  std::vector<std::string> kernels;     ///< Qualified op types it has kernels for.
  std::vector<std::string> transforms;  ///< "name (pre)" / "name (post)".
  std::vector<std::string> layouts;     ///< Its own memory layouts (ABI 2).
  std::vector<std::string> copies;      ///< "plain -> c4 (f32)", one per copy.
  /// "host memory", "cpu (own allocator)", or since ABI 3 a device with
  /// memory of its own: "emu:0 (emulated on ...)".
  std::string device;
  /// The options it declares (ABI 5); empty for an older plugin, whose
  /// options are passed through unchecked.
  std::vector<PluginOption> options;
  /// True if its properties depend on the session (ABI 5 properties_for).
  bool sessionProperties = false;
};

/// What a session tells the plugins' kernels (SgKernelContext): passed
/// through the ABI, never through environment variables.
struct PluginRunOptions {
  /// Session threads (0: one per core); kernels with own pools use no more.
  int threads = 0;
  /// "fp32", "tf32", "fp16", "bf16", or "" for each plugin's default.
  std::string precision;
  /// Options by "<plugin>.<name>"; each plugin sees its own, by <name>.
  std::map<std::string, std::string> options;
  /// The device the session's work goes to, "<kind>:<index>" ("emu:1"):
  /// a plugin whose device is of that kind places its kernels, memory and
  /// queue on its device <index> (ABI 6 devices_for). Empty, or another
  /// kind: each plugin's first device.
  std::string device;
};

/// One loaded plugin library. Create with loadPlugin().
class LoadedPlugin : public std::enable_shared_from_this<LoadedPlugin> {
 public:
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  /// What the plugin registers.
  const PluginInfo& info() const { return info_; }
  /// The backend name.
  const std::string& name() const { return info_.name; }
  /// Fresh partition properties, in pass order.
  partition::SubgraphBackend instantiateBackend() const;
  /// The properties for a session of this precision and these options
  /// (ABI 5 properties_for; other plugins: instantiateBackend()), so the
  /// regions planned are the ones its kernels, made with the same
  /// options, run. Check the options first (checkOptions).
  StatusOr<partition::SubgraphBackend> instantiateBackend(const PluginRunOptions& options) const;
  /// Checks the options of `options` meant for this plugin ("<name>.*")
  /// against what it declares (ABI 5): an unknown name or a value not in
  /// the option's list is an error naming the known ones, with a "did you
  /// mean". An older plugin declares none and takes any.
  Status checkOptions(const PluginRunOptions& options) const;
  /// True if the plugin has kernel creators.
  bool hasKernels() const;
  /// A runtime backend running the plugin's kernels, for `threads` session
  /// threads (0: one per core). Throws Error if the plugin's device cannot
  /// make a queue.
  std::shared_ptr<runtime::Backend> createRuntimeBackend(int threads) const;
  /// The same with the session's precision and options. A plugin with a
  /// device of its own (ABI 3) gets a backend on that device with a queue
  /// of its own; that fails if the plugin cannot make the queue.
  StatusOr<std::shared_ptr<runtime::Backend>> createRuntimeBackend(
      const PluginRunOptions& options) const;
  /// Runs the plugin's transforms of `stage` (SG_TRANSFORM_*) on `graph`.
  Status runTransforms(Graph& graph, int stage) const;
  /// The devices a session with `options` may use (ABI 6 devices_for),
  /// checked; a plugin without it has its one device; none without a
  /// device of its own.
  StatusOr<std::vector<const SgDeviceDesc*>> devices(const PluginRunOptions& options) const;
  /// The index of the device `options.device` names among devices(), 0
  /// where it names another kind; kInvalidArgument past the last.
  StatusOr<int> deviceIndex(const PluginRunOptions& options) const;

  /// Internal: the plugin's table. Valid while this object lives.
  const SgPlugin& table() const { return *plugin_; }
  /// Internal: the runtime Layout standing for one of the plugin's
  /// layouts (ABI 2), or null if `desc` is not one of them. Runtime
  /// tensor descs point to these, so they live as long as this object.
  const runtime::Layout* layoutFor(const SgLayoutDesc* desc) const;

 private:
  friend StatusOr<std::shared_ptr<LoadedPlugin>> loadPlugin(const std::filesystem::path& path);
  struct Library;
  LoadedPlugin() = default;

  std::unique_ptr<Library> library_;
  const SgPlugin* plugin_ = nullptr;
  PluginInfo info_;
  std::vector<std::unique_ptr<runtime::Layout>> layouts_;
};

/// Loads the plugin at absolute `path`, checks its file, ABI version and
/// tables, and registers its op definitions. Errors are one line:
/// "plugin <path>: <reason>". On error the library is unloaded again.
StatusOr<std::shared_ptr<LoadedPlugin>> loadPlugin(const std::filesystem::path& path);

/// The plugin search path and what was left out of it.
struct PluginSearchPath {
  /// Absolute, existing directories, in search order, without duplicates.
  std::vector<std::filesystem::path> dirs;
  /// One line per entry left out, naming it and why, e.g.
  /// "SUBGRAPH_PLUGIN_PATH entry 'x' (/home/u/x): no such directory; ignored".
  std::vector<std::string> dropped;
};

/// The directories searched for plugins by name, in order (see the file
/// comment); `pluginPathEnv` is SUBGRAPH_PLUGIN_PATH's value (nullopt:
/// read it with secure_getenv).
PluginSearchPath resolvePluginSearchPath(std::optional<std::string> pluginPathEnv = std::nullopt);
/// resolvePluginSearchPath(pluginPathEnv).dirs.
std::vector<std::filesystem::path> pluginSearchPath(
    std::optional<std::string> pluginPathEnv = std::nullopt);
/// `entries` as directories: relative ones against the working directory,
/// empty ones skipped, those that are not directories dropped with a line
/// naming `source` (e.g. "--path").
PluginSearchPath resolvePluginDirs(const std::vector<std::string>& entries,
                                   std::string_view source);

/// True if a backend-list item names a plugin file rather than a backend:
/// it contains a '/' or ends in ".so".
bool namesPluginFile(std::string_view item);
/// A plugin file's absolute, normalised path (relative to the working
/// directory).
std::filesystem::path pluginFilePath(std::string_view item);

/// One selected backend: in-process, or a loaded plugin.
struct SelectedBackend {
  std::string name;                      ///< The backend name.
  std::shared_ptr<LoadedPlugin> plugin;  ///< Null for an in-process backend.
};

/// How selectBackends resolves a list.
struct SelectOptions {
  /// Skip unusable plugins with a warning instead of failing.
  bool allowFallback = false;
  /// Directories searched for names; empty means pluginSearchPath().
  std::vector<std::filesystem::path> searchPath;
};

/// The backends a list names, in priority order.
/// kUsage, naming `entry` (the option as the user wrote it) and the chosen
/// backends with a "did you mean", when `backend` is not among `chosen`.
Status checkOptionBackend(const std::string& entry, const std::string& backend,
                          const std::vector<std::string>& chosen);

class BackendSelection {
 public:
  /// Backends in priority order; empty for NONE.
  const std::vector<SelectedBackend>& backends() const { return backends_; }
  /// Their names.
  std::vector<std::string> names() const;
  /// True if the list was NONE (partitioning disabled).
  bool none() const { return none_; }
  /// One line per plugin skipped under fallback.
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// Sets the session every later partition() plans for: its precision and
  /// plugin options reach the plugins' selection (ABI 5), as they reach
  /// their kernels through runtimeBackends(options). Fails, changing
  /// nothing, on an option for a backend not selected, or one a plugin
  /// does not declare or whose value it does not take.
  Status setRunOptions(const PluginRunOptions& options);
  /// What setRunOptions() set.
  const PluginRunOptions& runOptions() const { return runOptions_; }

  /// Runs the plugins' pre-partition transforms, partitions `graph` for the
  /// backends, then runs their post-partition transforms.
  StatusOr<partition::PartitionReport> partition(
      Graph& graph, const partition::PartitionOptions& options = {}) const;
  /// True if the list was resolved with SelectOptions::allowFallback.
  bool allowFallback() const { return allowFallback_; }

  /// partition(), surviving a failing plugin where the selection allows
  /// fallback (otherwise exactly partition(), in place): where a plugin's
  /// transforms, selectors or hooks fail, that backend is dropped, its
  /// failure added to `warnings` and to the report's `skipped`, and the
  /// graph partitioned again from a copy taken before, so a broken plugin
  /// costs its regions, not the run. `graph` is replaced by the copy that
  /// succeeded. A failure that is no plugin's (a cycle in the input, a
  /// built-in backend) still fails. A plugin that crashes the process is
  /// not survived (plugins/host/crash_handler.h).
  StatusOr<partition::PartitionReport> partitionWithFallback(
      std::unique_ptr<Graph>& graph, std::vector<std::string>& warnings,
      const partition::PartitionOptions& options = {}) const;
  /// Runtime backends: each plugin with kernels, then each in-process name
  /// that is also a registered runtime backend.
  StatusOr<std::vector<std::shared_ptr<runtime::Backend>>> runtimeBackends(int threads) const;
  /// The same, passing the session's precision and plugin options.
  StatusOr<std::vector<std::shared_ptr<runtime::Backend>>> runtimeBackends(
      const PluginRunOptions& options) const;

 private:
  friend StatusOr<BackendSelection> selectBackends(std::string_view, const SelectOptions&);
  StatusOr<partition::PartitionReport> partitionFor(
      const std::vector<const SelectedBackend*>& active, Graph& graph,
      partition::PartitionOptions options, std::string& failed) const;

  std::vector<SelectedBackend> backends_;
  std::vector<std::string> warnings_;
  PluginRunOptions runOptions_;
  bool none_ = false;
  bool allowFallback_ = false;
};

/// Checks the form of a backend list without loading anything: no empty
/// item, NONE alone, no item twice. selectBackends() checks it too; a
/// front end calls it first to tell a mistyped list (a usage error) from
/// a plugin that cannot be used.
Status checkBackendList(std::string_view list);

/// Resolves a comma-separated list of names and plugin files (or NONE).
/// An unknown name or a missing plugin file fails with kNotFound.
/// Fails with one line on an unknown name, an unusable
/// plugin (unless allowFallback) or a duplicate backend name.
StatusOr<BackendSelection> selectBackends(std::string_view list, const SelectOptions& options = {});

/// SUBGRAPH_BACKEND, read with secure_getenv; nullopt if unset or empty.
std::optional<std::string> backendListFromEnvironment();
/// True if SUBGRAPH_BACKEND_FALLBACK is "1" (secure_getenv).
bool fallbackFromEnvironment();

/// A plugin file found on the search path, loaded or not.
struct FoundPlugin {
  std::filesystem::path path;
  std::shared_ptr<LoadedPlugin> plugin;  ///< Null if it failed to load.
  std::string error;                     ///< Why it failed; empty if loaded.
  /// True if the plugin refused to load because it cannot run on this
  /// machine (SG_UNAVAILABLE, e.g. no GPU): not a broken installation.
  bool unavailable = false;
};

/// Every `*.so` in `searchPath` (first directory first, sorted by name
/// within one), each loaded to read what it registers.
std::vector<FoundPlugin> discoverPlugins(const std::vector<std::filesystem::path>& searchPath);

}  // namespace subgraph::plugins
