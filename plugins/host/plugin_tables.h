//===- plugins/host/plugin_tables.h - Reading a plugin's C tables --------===//
//
// Internal to subgraph::plugins: what every adapter reads from a plugin's
// C tables (which slots a table's ABI version has, the kernel context, the
// plugin's layouts) and the load-time checks of those tables. The adapters
// build on it, one file per concern, with no include between them except
// downward: pattern_check.h <- selection_adapters.cpp for selection;
// device_queue.h <- kernel_adapters.cpp for kernels, copies and backends.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host_api.h"
#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/crash_handler.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/tensor_view.h"

namespace subgraph::plugins::adapters {

/// True if `k` declares version 2 or later and is large enough for the
/// since-2 slots (layouts and scratch); a version-1 table has neither.
inline bool hasV2Slots(const SgKernelDesc& k) {
  return k.abi_version >= 2 && k.struct_size >= SG_KERNEL_DESC_V2_SIZE;
}
/// True if `k` has the since-3 slot run_on_queue (it may still be null).
inline bool hasV3Slots(const SgKernelDesc& k) {
  return k.abi_version >= 3 && k.struct_size >= SG_KERNEL_DESC_V3_SIZE;
}
/// True if the copy table `c` has the since-3 slots: direction and
/// run_on_queue.
inline bool hasV3Slots(const SgCopyDesc& c) {
  return c.abi_version >= 3 && c.struct_size >= SG_COPY_DESC_V3_SIZE;
}
/// True if `k` (a kernel or copy table) has the since-5 concurrent_requests
/// field and sets it, for a kernel or copy with its own threads.
template <typename Desc>
inline bool concurrentRequests(const Desc& k) {
  return k.abi_version >= 5 && k.struct_size >= sizeof(Desc) && k.concurrent_requests != 0;
}
/// The same for the plugin table (its layouts and copies).
inline bool hasV2Slots(const SgPlugin& p) {
  return p.abi_version >= 2 && p.struct_size >= SG_PLUGIN_V4_SIZE;
}
/// True if the plugin table has the since-5 slots: options, properties_for.
inline bool hasV5Slots(const SgPlugin& p) {
  return p.abi_version >= 5 && p.struct_size >= SG_PLUGIN_V5_SIZE;
}
/// True if the plugin table has the since-6 slot: devices_for.
inline bool hasV6Slots(const SgPlugin& p) {
  return p.abi_version >= 6 && p.struct_size >= sizeof(SgPlugin);
}
/// True if the device table has the since-6 slots: its own copies.
inline bool hasV6Slots(const SgDeviceDesc& d) {
  return d.abi_version >= 6 && d.struct_size >= sizeof(SgDeviceDesc);
}

/// What every kernel creator of one runtime backend (and, since ABI 5,
/// properties_for) passes in its SgKernelContext: the session's threads,
/// precision, and its options for one plugin, without the plugin's prefix.
/// The C view points into this object.
struct KernelContextData {
  int threads = 0;
  int deviceIndex = 0;
  std::string precision;
  std::vector<std::string> names, values;
  std::vector<const char*> namePtrs, valuePtrs;

  KernelContextData(const PluginRunOptions& options, const std::string& plugin, int device = 0) {
    threads = options.threads;
    deviceIndex = device;
    precision = options.precision;
    for (const auto& [key, value] : options.options)
      if (key.size() > plugin.size() + 1 && key.compare(0, plugin.size(), plugin) == 0 &&
          key[plugin.size()] == '.') {
        names.push_back(key.substr(plugin.size() + 1));
        values.push_back(value);
      }
    for (size_t i = 0; i < names.size(); ++i) {
      namePtrs.push_back(names[i].c_str());
      valuePtrs.push_back(values[i].c_str());
    }
  }

  /// The C view; valid while this object is.
  SgKernelContext toC() const {
    SgKernelContext c{};
    c.abi_version = SG_PLUGIN_ABI_VERSION;
    c.struct_size = sizeof(SgKernelContext);
    c.num_threads = threads;
    c.precision = precision.c_str();
    c.num_options = names.size();
    c.option_names = namePtrs.data();
    c.option_values = valuePtrs.data();
    c.device_index = deviceIndex;
    return c;
  }
};

/// A per-session table slot of `plugin` (SgPlugin::properties_for,
/// devices_for) called with the session's context: its entries, or the
/// plugin's failure in one line naming `slot`. The plugin keeps the table.
template <typename T>
StatusOr<std::span<const T* const>> sessionTable(const LoadedPlugin& plugin, const char* slot,
                                                 SgStatus (*fn)(void*, const SgKernelContext*,
                                                                size_t*, const T* const**,
                                                                SgMessage*),
                                                 const PluginRunOptions& options) {
  KernelContextData data(options, plugin.name());
  SgKernelContext session = data.toC();
  size_t count = 0;
  const T* const* table = nullptr;
  SgMessage m;
  SgStatus st;
  {
    PluginCallScope scope(plugin.name(), slot, nullptr);
    st = fn(plugin.table().user, &session, &count, &table, &m);
  }
  const std::string who = "plugin '" + plugin.name() + "' " + slot + ": ";
  if (st != SG_OK) return Status(StatusCode::kPluginFailure, who + host::messageOr(m, "failed"));
  if (count && !table) return Status(StatusCode::kPluginFailure, who + "a count with a null table");
  return std::span<const T* const>(table, count);
}

/// `st` as a plugin's failure (StatusCode::kPluginFailure), its message
/// kept: what a plugin's call reports is neither the model's fault nor the
/// caller's, and front ends say so (the Python package raises Fail).
inline Status pluginFailure(Status st) {
  return st.isOk() ? st : Status(StatusCode::kPluginFailure, st.message());
}

/// "" if `count` property descriptions in `table` are usable (each
/// checked as at load time, names unique), else why not.
std::string checkPropertyTable(const SgPropertyDesc* const* table, size_t count);

/// "" if the plugin's option table (ABI 5) is well formed: valid unique
/// names, no empty value in a list. Else why not.
std::string checkOptionTable(const SgPlugin& p);

/// The options a plugin declares, as `subgraph plugins` lists them.
std::vector<PluginOption> describeOptions(const SgPlugin& p);

/// "" if `d`'s layout can hold it, else why not. A layout that cannot hold
/// a tensor sizes it as 0 bytes; only an empty tensor may take none.
inline std::string cannotHold(const runtime::TensorDesc& d) {
  if (d.isPlain() || d.numElements() == 0 || d.byteSize() > 0) return {};
  return "layout " + std::string(d.layout->name()) + " cannot hold " + d.toString();
}

/// A runtime tensor as the ABI's SgTensor: logical dims, and the bytes its
/// layout (plain or the plugin's) takes. Valid while `v` is.
inline SgTensor toTensor(const runtime::TensorView& v) {
  SgTensor t{};
  t.dtype = static_cast<SgDataType>(v.desc().dtype);
  t.rank = static_cast<int32_t>(v.desc().dims.size());
  t.dims = v.desc().dims.data();
  t.data = v.raw();
  t.bytes = v.desc().byteSize();
  return t;
}

/// One of a plugin's own memory layouts (SgLayoutDesc) as a runtime
/// Layout: sized by the plugin, named "<plugin>.<layout>" in messages.
class PluginLayout final : public runtime::Layout {
 public:
  /// `owner` owns this layout object, so it outlives it.
  PluginLayout(const LoadedPlugin& owner, const SgLayoutDesc* desc)
      : owner_(&owner), desc_(desc), name_(owner.name() + "." + desc->name) {}
  std::string_view name() const override { return name_; }
  size_t byteSize(DataType dtype, std::span<const int64_t> dims) const override {
    return desc_->byte_size(desc_->user, static_cast<SgDataType>(dtype),
                            static_cast<int32_t>(dims.size()), dims.data());
  }
  const SgLayoutDesc* desc() const { return desc_; }
  /// The plugin the layout belongs to (which has its copies).
  const LoadedPlugin& owner() const { return *owner_; }

 private:
  const LoadedPlugin* owner_;
  const SgLayoutDesc* desc_;
  std::string name_;
};

}  // namespace subgraph::plugins::adapters
