//===- tests/plugins/corpus/raw_abi_plugin.cpp - Plugins on the raw C ABI -===//
//
// Plugins that load fine but exercise one rule of the versioned ABI, written
// against plugin_abi.h directly because the SDK always fills in the newest
// version. Compiled once per case:
//  * RAW_V1_COMPAT, backend `v1_compat`: a plugin as a version-1 build made
//    it. Its tables declare version 1 and version 1's struct sizes, and the
//    bytes past them (where version 2 keeps layouts, copies and the scratch
//    slots) hold garbage, which a host of version 2 must never read. One
//    property (Relu) and its kernel, which negates a Relu's input's
//    negative part: relu(x).
//  * RAW_FOREIGN_LAYOUT, backend `foreign_layout`: a version-2 plugin with
//    one layout, whose kernel asks for input 0 in a layout that is not in
//    the plugin's list; the host must refuse the kernel, not size a buffer
//    with a pointer it does not know.
//  * RAW_LAYOUT_RELAY, backend `layout_relay`: the same plugin with a
//    correct kernel, reading and writing its layout "listed" (byte for
//    byte plain, copied as is). A value passed from another plugin's
//    layout to it has no direct copy, so the host goes through plain.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>

#include "subgraph/plugin_abi.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

#if defined(RAW_V1_COMPAT)
constexpr const char* kName = "v1_compat";
constexpr const char* kOp = "subgraph.v1_compat.relu";
#elif defined(RAW_FOREIGN_LAYOUT)
constexpr const char* kName = "foreign_layout";
constexpr const char* kOp = "subgraph.foreign_layout.relu";
#else
constexpr const char* kName = "layout_relay";
constexpr const char* kOp = "subgraph.layout_relay.relu";
#endif

SgStatus createKernel(void*, const SgNode*, const SgKernelContext*, void** k, SgMessage*) {
  static int dummy = 0;
  *k = &dummy;
  return SG_OK;
}
void destroyKernel(void*, void*) {}

// y = max(x, 0) on float32.
SgStatus runRelu(void*, const SgTensor* in, size_t, const SgTensor* out, size_t, SgMessage*) {
  const auto* x = static_cast<const float*>(in[0].data);
  auto* y = static_cast<float*>(out[0].data);
  for (size_t i = 0; i < out[0].bytes / sizeof(float); ++i) y[i] = std::max(x[i], 0.0f);
  return SG_OK;
}

SgPatternNode reluNode = {
    SG_PLUGIN_ABI_VERSION, sizeof(SgPatternNode), "Relu", 0, 0, nullptr, nullptr};
SgPatternDesc reluPattern = {
    SG_PLUGIN_ABI_VERSION, sizeof(SgPatternDesc), "relu", 1, &reluNode, 0, nullptr};
SgPropertyDesc property = [] {
  SgPropertyDesc p{};
  p.abi_version = SG_PLUGIN_ABI_VERSION;
  p.struct_size = sizeof(SgPropertyDesc);
#if defined(RAW_V1_COMPAT)
  // Built before filter_reason existed: the struct ends before it, and the
  // bytes there are garbage the host must not call.
  p.struct_size = SG_PROPERTY_DESC_V2_SIZE;
  std::memset(reinterpret_cast<char*>(&p) + SG_PROPERTY_DESC_V2_SIZE, 0x5a,
              sizeof p - SG_PROPERTY_DESC_V2_SIZE);
#endif
  p.name = "relu";
  p.pattern = &reluPattern;
  return p;
}();
const SgPropertyDesc* properties[1] = {&property};

#if !defined(RAW_V1_COMPAT)
size_t layoutBytes(void*, SgDataType, int32_t rank, const int64_t* dims) {
  size_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= static_cast<size_t>(dims[i]);
  return n * sizeof(float);
}
SgStatus copyAsIs(void*, const SgTensor* src, const SgTensor* dst, SgMessage*) {
  std::memcpy(dst->data, src->data, dst->bytes);
  return SG_OK;
}
SgLayoutDesc listed = {SG_PLUGIN_ABI_VERSION, sizeof(SgLayoutDesc), "listed", nullptr,
                       &layoutBytes};
SgLayoutDesc unlisted = {SG_PLUGIN_ABI_VERSION, sizeof(SgLayoutDesc), "unlisted", nullptr,
                         &layoutBytes};
const SgLayoutDesc* layouts[1] = {&listed};
// Copies as a version-2 plugin writes them: version 2's size, so the host
// must not read the since-3 fields past it.
SgCopyDesc v2Copy(const SgLayoutDesc* from, const SgLayoutDesc* to) {
  SgCopyDesc c{};
  c.abi_version = 2;
  c.struct_size = SG_COPY_DESC_V2_SIZE;
  c.from = from;
  c.to = to;
  c.dtype = SG_DTYPE_UNDEFINED;
  c.run = &copyAsIs;
  c.direction = 77;  // beyond struct_size: never read
  return c;
}
SgCopyDesc copyIn = v2Copy(nullptr, &listed);
SgCopyDesc copyOut = v2Copy(&listed, nullptr);
const SgCopyDesc* copies[2] = {&copyIn, &copyOut};
#if defined(RAW_FOREIGN_LAYOUT)
constexpr bool kForeign = true;
#else
constexpr bool kForeign = false;
#endif
// The layout of the kernel's input (and, in the relay, output).
const SgLayoutDesc* kernelLayout(void*, size_t) { return kForeign ? &unlisted : &listed; }
#endif

SgKernelDesc kernel = [] {
  SgKernelDesc k{};
  k.op_type = kOp;
  k.create = &createKernel;
  k.destroy = &destroyKernel;
  k.run = &runRelu;
#if defined(RAW_V1_COMPAT)
  k.abi_version = 1;
  k.struct_size = SG_KERNEL_DESC_V1_SIZE;
  // Past version 1's end: garbage a version-2 host must not call.
  std::memset(reinterpret_cast<char*>(&k) + SG_KERNEL_DESC_V1_SIZE, 0x5a,
              sizeof(SgKernelDesc) - SG_KERNEL_DESC_V1_SIZE);
#else
  k.abi_version = SG_PLUGIN_ABI_VERSION;
  k.struct_size = sizeof(SgKernelDesc);
  k.input_layout = &kernelLayout;
  if (!kForeign) k.output_layout = &kernelLayout;
#endif
  return k;
}();
const SgKernelDesc* kernels[1] = {&kernel};

SgPlugin plugin = [] {
  SgPlugin p{};
  p.name = kName;
  p.version = "1.0.0";
  p.description = "a plugin on the raw C ABI";
  p.num_properties = 1;
  p.properties = properties;
  p.num_kernels = 1;
  p.kernels = kernels;
#if defined(RAW_V1_COMPAT)
  p.abi_version = 1;
  p.struct_size = SG_PLUGIN_V1_SIZE;
  std::memset(reinterpret_cast<char*>(&p) + SG_PLUGIN_V1_SIZE, 0x5a,
              sizeof(SgPlugin) - SG_PLUGIN_V1_SIZE);
#else
  p.abi_version = SG_PLUGIN_ABI_VERSION;
  p.struct_size = sizeof(SgPlugin);
  p.num_layouts = 1;
  p.layouts = layouts;
  p.num_copies = 2;
  p.copies = copies;
#endif
  return p;
}();

}  // namespace

EXPORT SgStatus subgraph_plugin_entry(const SgHostApi*, const SgPlugin** out, SgMessage*) {
  *out = &plugin;
  return SG_OK;
}
