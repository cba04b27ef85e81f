//===- plugins/host/selection_adapters.cpp - A plugin's selectors --------===//
//
// Properties: a declarative pattern runs on the host's PatternSelector; a
// callback selector is wrapped as a SubgraphSelector. The partitioner's
// Decision cannot carry an error, so a failing plugin callback answers "no"
// and the property remembers the error, which SelectionStatus then returns:
// the partition fails with the plugin's message, naming the call and the
// node, instead of going on with a half-answered selector. A plugin's
// graph transforms run here too: they are part of selection.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "host_api.h"
#include "pattern_check.h"
#include "plugin_tables.h"
#include "subgraph/partition/fused_name.h"
#include "subgraph/plugins/crash_handler.h"

namespace subgraph::plugins {
namespace adapters {
namespace {

using partition::Decision;

// The first error a plugin callback reported during one partitioning run.
class ErrorSlot {
 public:
  void record(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.empty()) first_ = message;
  }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::string first_;
};

// A callback selector of a plugin, as MXNet's SubgraphSelector.
class PluginSelector final : public partition::SubgraphSelector {
 public:
  PluginSelector(std::shared_ptr<const LoadedPlugin> plugin, const SgPropertyDesc* desc,
                 void* handle, std::shared_ptr<ErrorSlot> errors)
      : plugin_(std::move(plugin)), desc_(desc), handle_(handle), errors_(std::move(errors)) {}
  ~PluginSelector() override { desc_->destroy_selector(desc_->user, handle_); }

  Decision Select(const Node& node) override {
    return ask("select", node, [&](int32_t* accept, SgMessage* m) {
      return desc_->select(handle_, host::toC(&node), accept, m);
    });
  }
  Decision SelectInput(const Node& node, const Node& producer) override {
    if (!desc_->select_input) return Decision::no();
    return ask("select_input", node, [&](int32_t* accept, SgMessage* m) {
      return desc_->select_input(handle_, host::toC(&node), host::toC(&producer), accept, m);
    });
  }
  Decision SelectOutput(const Node& node, const Node& consumer) override {
    if (!desc_->select_output) return Decision::no();
    return ask("select_output", node, [&](int32_t* accept, SgMessage* m) {
      return desc_->select_output(handle_, host::toC(&node), host::toC(&consumer), accept, m);
    });
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> all(candidates.begin(), candidates.end());
    if (!desc_->filter) return all;
    std::vector<const SgNode*> in;
    for (const Node* n : candidates) in.push_back(host::toC(n));
    std::vector<uint8_t> keep(in.size(), 1);
    SgMessage m;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), "filter",
                            candidates.empty() ? nullptr : &candidates.front()->name());
      st = desc_->filter(handle_, in.data(), in.size(), keep.data(), &m);
    }
    if (st != SG_OK) {
      errors_->record(prefix("filter") + host::messageOr(m, "failed"));
      return {};
    }
    std::vector<const Node*> out;
    for (size_t i = 0; i < all.size(); ++i)
      if (keep[i]) out.push_back(all[i]);
    return out;
  }
  // The partitioner's line already says "dropped by Filter of <property>";
  // this adds the plugin's reason, if it gives one.
  std::string FilterReason(const Node& node) const override {
    if (desc_->struct_size <= SG_PROPERTY_DESC_V2_SIZE || !desc_->filter_reason) return {};
    SgMessage m;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), "filter_reason", &node.name());
      st = desc_->filter_reason(handle_, host::toC(&node), &m);
    }
    if (st != SG_OK) {
      errors_->record(prefix("filter_reason") + host::messageOr(m, "failed"));
      return {};
    }
    return host::messageOr(m, "");
  }
  void Reset() override {
    if (!desc_->reset) return;
    SgMessage m;
    PluginCallScope scope(plugin_->name(), "reset", nullptr);
    if (desc_->reset(handle_, &m) != SG_OK)
      errors_->record(prefix("reset") + host::messageOr(m, "failed"));
  }

 private:
  std::string prefix(const char* slot) const {
    return "plugin '" + plugin_->name() + "' property '" + desc_->name + "' " + slot + ": ";
  }
  template <typename Call>
  Decision ask(const char* slot, const Node& node, Call&& call) {
    SgMessage m;
    int32_t accept = 0;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), slot, &node.name());
      st = call(&accept, &m);
    }
    if (st != SG_OK) {
      errors_->record("plugin '" + plugin_->name() + "' property '" + desc_->name + "' " + slot +
                      " on node '" + node.name() + "': " + host::messageOr(m, "failed"));
      return Decision::no("plugin error");
    }
    return accept ? Decision::yes() : Decision::no(std::move(m.text));
  }

  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgPropertyDesc* desc_;
  void* handle_;
  std::shared_ptr<ErrorSlot> errors_;
};

// A selector that only refuses, for a property whose create_selector
// failed (the error is already recorded).
class RefusingSelector final : public partition::SubgraphSelector {
 public:
  Decision Select(const Node&) override { return Decision::no("plugin selector unavailable"); }
  Decision SelectInput(const Node&, const Node&) override { return Decision::no(); }
  Decision SelectOutput(const Node&, const Node&) override { return Decision::no(); }
};

class PluginProperty final : public partition::SubgraphProperty {
 public:
  PluginProperty(std::shared_ptr<const LoadedPlugin> plugin, const SgPropertyDesc* desc)
      : plugin_(std::move(plugin)), desc_(desc), errors_(std::make_shared<ErrorSlot>()) {
    partition::PropertyOptions options;
    options.inferenceOnly = desc->inference_only != 0;
    options.minRegionSize = desc->min_region_size ? desc->min_region_size : 1;
    setOptions(options);
    if (desc->pattern) {
      StatusOr<partition::Pattern> p = buildPattern(*desc->pattern, plugin_);
      // Checked at load time; a failure here cannot happen, but keep it an
      // error rather than a crash.
      if (p.isOk())
        pattern_ = std::make_shared<const partition::Pattern>(std::move(p).value());
      else
        errors_->record(p.status().message());
    }
    // Checked at load time too.
    if (StatusOr<std::vector<std::string>> seeds = seedOpTypes(*desc); seeds.isOk())
      seeds_ = std::move(seeds).value();
    else
      errors_->record(seeds.status().message());
  }

  std::string name() const override { return desc_->name; }

  std::unique_ptr<partition::SubgraphSelector> CreateSubgraphSelector() const override {
    void* handle = nullptr;
    SgMessage m;
    PluginCallScope scope(plugin_->name(), "create_selector", nullptr);
    if (desc_->create_selector(desc_->user, &handle, &m) != SG_OK) {
      errors_->record("plugin '" + plugin_->name() + "' property '" + desc_->name +
                      "' create_selector: " + host::messageOr(m, "failed"));
      return std::make_unique<RefusingSelector>();
    }
    return std::make_unique<PluginSelector>(plugin_, desc_, handle, errors_);
  }

  std::unique_ptr<partition::SubgraphSelectorV2> CreateSubgraphSelectorV2() const override {
    if (desc_->pattern) {
      if (!pattern_) return partition::adaptSelector(std::make_unique<RefusingSelector>());
      return std::make_unique<partition::PatternSelector>(pattern_);
    }
    return SubgraphProperty::CreateSubgraphSelectorV2();
  }

  // A declarative pattern runs on the host's PatternSelector, which says a
  // reasonless no to every node but its anchor's ops; a selector says so
  // where it declares seed_op_types.
  std::vector<std::string> SeedOpTypes() const override {
    return pattern_ ? pattern_->nodes()[0].opTypes() : seeds_;
  }

  // A property without create_subgraph_node accepts every region as
  // defaultFusedNode() would, so the partitioner builds no body to ask it
  // and moves the members into the bodies after partitioning.
  bool FusesWithoutBody() const override { return !desc_->create_subgraph_node; }
  // The ABI has no per-property hooks (a plugin's transforms run before
  // and after all partitioning).
  bool HasPartitionHooks() const override { return false; }

  partition::SubgraphNodeResult CreateSubgraphNode(
      std::shared_ptr<Graph> subgraph, const partition::RegionInfo& region) const override {
    const Graph* body = subgraph.get();
    partition::FusedNode node = partition::defaultFusedNode(std::move(subgraph), region);
    if (!desc_->create_subgraph_node) return node;
    SgFusedNode fused;
    fused.node = &node;
    fused.defaultDomain = partition::fusedDomain(region.backend);
    fused.defaultOp = region.property;
    SgMessage m;
    int32_t accept = 1;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), "create_subgraph_node", nullptr);
      st =
          desc_->create_subgraph_node(desc_->user, host::toC(body), region.id, &fused, &accept, &m);
    }
    if (st != SG_OK) {
      errors_->record("plugin '" + plugin_->name() + "' property '" + desc_->name +
                      "' create_subgraph_node: " + host::messageOr(m, "failed"));
      return partition::SubgraphNodeResult::reject("plugin error");
    }
    if (!accept) return partition::SubgraphNodeResult::reject(m.text);
    return node;
  }

  Status SelectionStatus() const override {
    std::string e = errors_->first();
    return e.empty() ? Status::ok() : Status(StatusCode::kPluginFailure, e);
  }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgPropertyDesc* desc_;
  std::shared_ptr<ErrorSlot> errors_;
  std::shared_ptr<const partition::Pattern> pattern_;
  std::vector<std::string> seeds_;  // a selector's declared seed ops
};

}  // namespace
}  // namespace adapters

partition::SubgraphBackend LoadedPlugin::instantiateBackend() const {
  partition::SubgraphBackend backend;
  backend.name = info_.name;
  for (size_t i = 0; i < plugin_->num_properties; ++i)
    backend.properties.push_back(
        std::make_unique<adapters::PluginProperty>(shared_from_this(), plugin_->properties[i]));
  return backend;
}

StatusOr<partition::SubgraphBackend> LoadedPlugin::instantiateBackend(
    const PluginRunOptions& options) const {
  if (!adapters::hasV5Slots(*plugin_) || !plugin_->properties_for) return instantiateBackend();
  // Selection sees the session as kernels will: its precision and its
  // options, never a thread count.
  PluginRunOptions session = options;
  session.threads = 0;
  StatusOr<std::span<const SgPropertyDesc* const>> table =
      adapters::sessionTable(*this, "properties_for", plugin_->properties_for, session);
  if (!table.isOk()) return table.status();
  const size_t count = table->size();
  if (std::string why = adapters::checkPropertyTable(table->data(), count); !why.empty())
    return Status::invalid("plugin '" + info_.name + "' properties_for: " + why);
  partition::SubgraphBackend backend;
  backend.name = info_.name;
  for (size_t i = 0; i < count; ++i)
    backend.properties.push_back(
        std::make_unique<adapters::PluginProperty>(shared_from_this(), (*table)[i]));
  return backend;
}

Status LoadedPlugin::runTransforms(Graph& graph, int stage) const {
  for (size_t i = 0; i < plugin_->num_transforms; ++i) {
    const SgTransformDesc* t = plugin_->transforms[i];
    if (t->stage != stage) continue;
    SgMessage m;
    int32_t changed = 0;
    PluginCallScope scope(info_.name, "transform", nullptr);
    if (t->run(t->user, host::toMutableC(&graph), &changed, &m) != SG_OK)
      return Status(StatusCode::kPluginFailure, "plugin '" + info_.name + "' transform '" +
                                                    t->name + "': " + host::messageOr(m, "failed"));
  }
  return Status::ok();
}

}  // namespace subgraph::plugins
