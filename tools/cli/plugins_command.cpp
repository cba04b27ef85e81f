//===- tools/cli/plugins_command.cpp - `subgraph plugins` -----------------===//
//
// Lists the backend plugins on the search path and what each registers:
//
//   subgraph plugins [--path DIR]... [--json]
//
// The search path is the directories of $SUBGRAPH_PLUGIN_PATH, then the
// program's own plugin directory (<prefix>/lib/subgraph/plugins); --path
// replaces it. Relative directories are resolved against the working
// directory, and each one dropped (not a directory) is a warning line.
// A plugin whose file name is not <its backend name>.so is flagged: a name
// would not find it. Each `*.so` is loaded to read its name, version, ABI
// version, properties, op definitions, kernels and transforms; a file that
// does not load is listed with its one-line reason, and the command then
// exits 1 so scripts notice a broken installation; a plugin that is only
// unavailable here (SG_UNAVAILABLE: a GPU plugin on a machine without a
// GPU) is listed with its reason but does not count as broken. The built-in
// (in-process) backends are listed too, since the same names select them.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"

#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::cli {
namespace {

struct PluginsCommandOptions {
  std::vector<std::string> paths;
  bool json = false;
};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

// A plugin is found by name as <dir>/<name>.so, so a file named otherwise
// is reachable by its path only: by name, SUBGRAPH_BACKEND=<name> finds no
// file and SUBGRAPH_BACKEND=<file stem> refuses the mismatch.
bool fileNameMatches(const plugins::FoundPlugin& f) {
  return f.path.filename() == f.plugin->name() + ".so";
}

std::string fileNameMismatch(const plugins::FoundPlugin& f) {
  return fmt::format(
      "file name {} differs from the backend name '{}' it declares, so no name selects it "
      "(select it by path, or rename it {}.so)",
      f.path.filename().string(), f.plugin->name(), f.plugin->name());
}

// One line per declared option (ABI 5): what `--plugin-option
// <plugin>.<name>=` takes, its default and what it does.
void printOptions(const plugins::PluginInfo& i) {
  if (i.abiVersion < 5) return;
  if (i.options.empty()) {
    std::cout << "  options:    none\n";
    return;
  }
  std::cout << "  options:\n";
  for (const plugins::PluginOption& o : i.options) {
    std::string values =
        o.values.empty() ? "any value" : fmt::format("{}", fmt::join(o.values, "|"));
    std::cout << fmt::format("    {}.{}={}{}: {}\n", i.name, o.name, values,
                             o.defaultValue.empty() ? "" : " (default " + o.defaultValue + ")",
                             o.doc);
  }
}

void runPlugins(const PluginsCommandOptions& options) {
  partition::registerBuiltinBackends();
  // --path follows SUBGRAPH_PLUGIN_PATH's rule: relative directories are
  // resolved against the working directory, and what is dropped is said.
  plugins::PluginSearchPath path = options.paths.empty()
                                       ? plugins::resolvePluginSearchPath()
                                       : plugins::resolvePluginDirs(options.paths, "--path");
  for (const std::string& line : path.dropped) spdlog::warn("{}", oneLine(line));
  const std::vector<std::filesystem::path>& dirs = path.dirs;
  std::vector<plugins::FoundPlugin> found = plugins::discoverPlugins(dirs);
  std::vector<std::string> builtin = partition::BackendRegistry::global().names();
  size_t failures = 0;

  if (options.json) {
    nlohmann::ordered_json json;
    json["abi_version"] = SG_PLUGIN_ABI_VERSION;
    json["search_path"] = nlohmann::ordered_json::array();
    for (const auto& d : dirs) json["search_path"].push_back(d.string());
    json["builtin"] = builtin;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const plugins::FoundPlugin& f : found) {
      nlohmann::ordered_json entry;
      entry["path"] = f.path.string();
      if (!f.plugin) {
        entry[f.unavailable ? "unavailable" : "error"] = f.error;
        if (!f.unavailable) ++failures;
      } else {
        const plugins::PluginInfo& i = f.plugin->info();
        entry["name"] = i.name;
        entry["file_name_matches"] = fileNameMatches(f);
        entry["version"] = i.version;
        entry["abi_version"] = i.abiVersion;
        entry["description"] = i.description;
        entry["properties"] = i.properties;
        entry["ops"] = i.ops;
        entry["kernels"] = i.kernels;
        entry["transforms"] = i.transforms;
        entry["device"] = i.device;
        entry["layouts"] = i.layouts;
        entry["copies"] = i.copies;
        nlohmann::ordered_json declared = nlohmann::ordered_json::array();
        for (const plugins::PluginOption& o : i.options)
          declared.push_back({{"name", o.name},
                              {"values", o.values},
                              {"default", o.defaultValue},
                              {"doc", o.doc}});
        entry["options"] = std::move(declared);
        entry["session_properties"] = i.sessionProperties;
      }
      list.push_back(std::move(entry));
    }
    json["plugins"] = std::move(list);
    std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << fmt::format("plugin ABI version {}; search path: ", SG_PLUGIN_ABI_VERSION);
    for (size_t i = 0; i < dirs.size(); ++i) std::cout << (i ? ":" : "") << dirs[i].string();
    std::cout << "\nbuilt-in backends: " << joined(builtin) << "\n";
    if (found.empty()) std::cout << "no plugins found\n";
    for (const plugins::FoundPlugin& f : found) {
      if (!f.plugin && f.unavailable) {
        // Installed correctly but unusable here (a GPU plugin without a
        // GPU): listed, not counted as a broken installation.
        std::cout << fmt::format("\n{}: {}\n", f.path.string(), f.error);
        continue;
      }
      if (!f.plugin) {
        std::cout << fmt::format("\n{}: cannot be loaded: {}\n", f.path.string(), f.error);
        ++failures;
        continue;
      }
      const plugins::PluginInfo& i = f.plugin->info();
      std::cout << fmt::format("\n{} {} (plugin ABI {}): {}\n", i.name, i.version, i.abiVersion,
                               i.description)
                << fmt::format("  path:       {}\n", i.path);
      if (!fileNameMatches(f)) std::cout << fmt::format("  warning:    {}\n", fileNameMismatch(f));
      std::cout << fmt::format("  properties: {}\n", joined(i.properties))
                << fmt::format("  ops:        {}\n", joined(i.ops))
                << fmt::format("  kernels:    {}\n", joined(i.kernels))
                << fmt::format("  transforms: {}\n", joined(i.transforms))
                << fmt::format("  device:     {}\n", i.device);
      // Layouts exist since ABI 2; most plugins have none, so the lines
      // appear only where there is something to say.
      if (!i.layouts.empty())
        std::cout << fmt::format("  layouts:    {}\n", joined(i.layouts))
                  << fmt::format("  copies:     {}\n", joined(i.copies));
      printOptions(i);
    }
  }
  std::cout.flush();
  if (failures)
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("{} of {} plugin files on the search path cannot be loaded", failures,
                            found.size()));
}

const CommandRegistration kPlugins("plugins", [](CLI::App& app) {
  auto options = std::make_shared<PluginsCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plugins",
      "List the backend plugins on the search path: name, version, ABI version, properties, ops, "
      "kernels");
  cmd->add_option("--path", options->paths,
                  "Search this directory (absolute or relative) instead of $SUBGRAPH_PLUGIN_PATH "
                  "and the plugin dir")
      ->type_name("DIR");
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->callback([options] { runPlugins(*options); });
});

}  // namespace
}  // namespace subgraph::cli
