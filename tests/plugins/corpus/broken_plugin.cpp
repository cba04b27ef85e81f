//===- tests/plugins/corpus/broken_plugin.cpp - The broken-plugin corpus ---===//
//
// One source, compiled once per failure category with -DBROKEN_<CASE>, into
// plugins that break the ABI in exactly one way each. They are written
// against the raw C ABI, not the SDK, because the SDK would not let an
// author make most of these mistakes. plugin_loader_test.cpp loads each and
// expects its one-line error; none may crash the host.
//
//===----------------------------------------------------------------------===//
#include <stdexcept>

#include "subgraph/plugin_abi.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

SgStatus selectNothing(void*, const SgNode*, int32_t* accept, SgMessage*) {
  *accept = 0;
  return SG_OK;
}
SgStatus createSelector(void*, void** selector, SgMessage*) {
  static int dummy = 0;
  *selector = &dummy;
  return SG_OK;
}
void destroySelector(void*, void*) {}
SgStatus createKernel(void*, const SgNode*, const SgKernelContext*, void** k, SgMessage*) {
  static int dummy = 0;
  *k = &dummy;
  return SG_OK;
}
void destroyKernel(void*, void*) {}
SgStatus runKernel(void*, const SgTensor*, size_t, const SgTensor*, size_t, SgMessage*) {
  return SG_OK;
}
SgStatus runTransform(void*, SgGraph*, int32_t* changed, SgMessage*) {
  *changed = 0;
  return SG_OK;
}
size_t layoutBytes(void*, SgDataType, int32_t, const int64_t*) { return 0; }
SgStatus runCopy(void*, const SgTensor*, const SgTensor*, SgMessage*) { return SG_OK; }
void* allocate(void*, size_t, size_t) { return nullptr; }
void deallocate(void*, void*) {}
// Since version 3: a device's queues and events, which do nothing.
SgStatus makeHandle(void*, void** handle, SgMessage*) {
  static int dummy = 0;
  *handle = &dummy;
  return SG_OK;
}
void dropHandle(void*, void*) {}
SgStatus onHandle(void*, void*, SgMessage*) { return SG_OK; }
SgStatus onTwoHandles(void*, void*, void*, SgMessage*) { return SG_OK; }
SgStatus copyOnQueue(void*, void*, const SgTensor*, const SgTensor*, SgMessage*) { return SG_OK; }

SgPropertyDesc makeProperty(const char* name) {
  SgPropertyDesc p{};
  p.abi_version = SG_PLUGIN_ABI_VERSION;
  p.struct_size = sizeof(SgPropertyDesc);
  p.name = name;
  p.create_selector = &createSelector;
  p.destroy_selector = &destroySelector;
  p.select = &selectNothing;
  return p;
}

SgKernelDesc makeKernel(const char* op) {
  SgKernelDesc k{};
  k.abi_version = SG_PLUGIN_ABI_VERSION;
  k.struct_size = sizeof(SgKernelDesc);
  k.op_type = op;
  k.create = &createKernel;
  k.destroy = &destroyKernel;
  k.run = &runKernel;
  return k;
}

SgPatternNode patternNodes[1] = {
    {SG_PLUGIN_ABI_VERSION, sizeof(SgPatternNode), "Conv", 0, 0, nullptr, nullptr}};
SgPatternEdge patternEdges[1] = {{0, 5, -1, 0}};  // node 5 does not exist
SgPatternDesc pattern = {SG_PLUGIN_ABI_VERSION, sizeof(SgPatternDesc), "broken", 1, patternNodes, 1,
                         patternEdges};

SgPropertyDesc property = makeProperty("broken_property");
const SgPropertyDesc* properties[1] = {&property};
SgKernelDesc kernels[2] = {makeKernel("subgraph.broken.x"), makeKernel("subgraph.broken.x")};
const SgKernelDesc* kernelTable[2] = {&kernels[0], &kernels[1]};
SgTransformDesc transform = {SG_PLUGIN_ABI_VERSION, sizeof(SgTransformDesc), "t", 7, nullptr,
                             &runTransform};
const SgTransformDesc* transforms[1] = {&transform};
// A version-3 device without its queue and event slots.
SgDeviceDesc makeDevice(uint32_t version, uint32_t size) {
  SgDeviceDesc d{};
  d.abi_version = version;
  d.struct_size = size;
  d.kind = "cuda";
  d.allocate = &allocate;
  d.deallocate = &deallocate;
  return d;
}
SgDeviceDesc device = makeDevice(SG_PLUGIN_ABI_VERSION, sizeof(SgDeviceDesc));
// A device of another kind in a version-2 table, which cannot say how to
// reach its memory.
SgDeviceDesc deviceV2 = makeDevice(2, SG_DEVICE_DESC_V2_SIZE);
// A complete version-3 device.
SgDeviceDesc fullDevice = [] {
  SgDeviceDesc d = device;
  d.kind = "emu";
  d.queue_create = &makeHandle;
  d.queue_destroy = &dropHandle;
  d.queue_synchronize = &onHandle;
  d.event_create = &makeHandle;
  d.event_destroy = &dropHandle;
  d.event_record = &onTwoHandles;
  d.event_synchronize = &onHandle;
  d.queue_wait_event = &onTwoHandles;
  return d;
}();
SgCopyDesc makeDeviceCopy(int32_t direction) {
  SgCopyDesc c{};
  c.abi_version = SG_PLUGIN_ABI_VERSION;
  c.struct_size = sizeof(SgCopyDesc);
  c.run = &runCopy;
  c.direction = direction;
  c.run_on_queue = &copyOnQueue;
  return c;
}
SgCopyDesc deviceCopies[2] = {makeDeviceCopy(SG_COPY_HOST_TO_DEVICE),
                              makeDeviceCopy(SG_COPY_DEVICE_TO_HOST)};
const SgCopyDesc* deviceCopyTable[2] = {&deviceCopies[0], &deviceCopies[1]};
SgOpDef opDef = {SG_PLUGIN_ABI_VERSION,
                 sizeof(SgOpDef),
                 "broken",
                 nullptr,
                 nullptr,
                 0,
                 nullptr,
                 0,
                 nullptr,
                 0,
                 nullptr,
                 nullptr,
                 nullptr,
                 0};
const SgOpDef* opDefs[1] = {&opDef};

// Since version 2: a layout, one that is not listed, and copies.
SgLayoutDesc layout = {SG_PLUGIN_ABI_VERSION, sizeof(SgLayoutDesc), "blk", nullptr, &layoutBytes};
SgLayoutDesc unlisted = {SG_PLUGIN_ABI_VERSION, sizeof(SgLayoutDesc), "other", nullptr,
                         &layoutBytes};
const SgLayoutDesc* layouts[1] = {&layout};
SgCopyDesc makeCopy(const SgLayoutDesc* from, const SgLayoutDesc* to) {
  SgCopyDesc c{};
  c.abi_version = SG_PLUGIN_ABI_VERSION;
  c.struct_size = sizeof(SgCopyDesc);
  c.from = from;
  c.to = to;
  c.dtype = SG_DTYPE_FLOAT32;
  c.run = &runCopy;
  return c;
}
SgCopyDesc intoLayout = makeCopy(nullptr, &layout);
SgCopyDesc outOfLayout = makeCopy(&layout, nullptr);
const SgCopyDesc* copies[2] = {&intoLayout, &outOfLayout};

SgPlugin plugin = [] {
  SgPlugin p{};
  p.abi_version = SG_PLUGIN_ABI_VERSION;
  p.struct_size = sizeof(SgPlugin);
  p.name = "broken";
  p.version = "0";
  p.description = "a deliberately broken plugin";
  return p;
}();

#if defined(BROKEN_DEVICES_BAD_ID) || defined(BROKEN_DEVICES_NO_COPIES)
// Since version 6: a session's second device, with the wrong id (5, not 1)
// or with no copies of its own. The plugin loads; a session that places
// work on emu:1 is refused.
SgDeviceDesc secondDevice = [] {
  SgDeviceDesc d = fullDevice;
#if defined(BROKEN_DEVICES_BAD_ID)
  d.id = 5;
  d.num_copies = 2;
  d.copies = deviceCopyTable;
#else
  d.id = 1;
#endif
  return d;
}();
const SgDeviceDesc* sessionDevices[2] = {&fullDevice, &secondDevice};
SgStatus devicesFor(void*, const SgKernelContext*, size_t* n, const SgDeviceDesc* const** d,
                    SgMessage*) {
  *n = 2;
  *d = sessionDevices;
  return SG_OK;
}
#endif
#ifdef BROKEN_UNRESOLVED_SYMBOL
extern "C" int subgraph_test_symbol_nobody_defines(void);
#endif
#ifdef BROKEN_MISSING_DEPENDENCY
extern "C" int subgraph_test_absent_dependency(void);
#endif

}  // namespace

#ifndef BROKEN_NO_ENTRY
EXPORT SgStatus subgraph_plugin_entry(const SgHostApi* host, const SgPlugin** out,
                                      SgMessage* message) {
#if defined(BROKEN_ENTRY_FAILS)
  host->message_set(message, "no accelerator found");
  return SG_ERROR;
#elif defined(BROKEN_ENTRY_THROWS)
  (void)host;
  (void)message;
  (void)out;
  throw std::runtime_error("thrown across the C boundary");
#elif defined(BROKEN_NULL_TABLE)
  (void)host;
  (void)message;
  *out = nullptr;
  return SG_OK;
#else
  (void)host;
  (void)message;
#if defined(BROKEN_ABI_TOO_OLD)
  plugin.abi_version = 0;
#elif defined(BROKEN_ABI_TOO_NEW)
  plugin.abi_version = 99;
#elif defined(BROKEN_SHORT_STRUCT)
  plugin.struct_size = 16;
#elif defined(BROKEN_NO_NAME)
  plugin.name = nullptr;
#elif defined(BROKEN_BAD_NAME)
  plugin.name = "two words,comma";
#elif defined(BROKEN_NAME_NONE)
  plugin.name = "NONE";
#elif defined(BROKEN_BUILTIN_NAME)
  plugin.name = "convbn";
#elif defined(BROKEN_NULL_ARRAY)
  plugin.num_properties = 3;
#elif defined(BROKEN_PROPERTY_NO_SELECTOR)
  property.select = nullptr;
  plugin.num_properties = 1;
  plugin.properties = properties;
#elif defined(BROKEN_PROPERTY_TOO_NEW)
  property.abi_version = 7;
  plugin.num_properties = 1;
  plugin.properties = properties;
#elif defined(BROKEN_BAD_PATTERN)
  property.pattern = &pattern;
  plugin.num_properties = 1;
  plugin.properties = properties;
#elif defined(BROKEN_MXNET_OP_NAME) || defined(BROKEN_MISSPELLED_OP)
  // A pattern that can never match: MXNet's name for Conv, or a typo.
#if defined(BROKEN_MXNET_OP_NAME)
  patternNodes[0].op_types = "Convolution";
#else
  patternNodes[0].op_types = "Relu|Sigmiod";
#endif
  pattern.num_edges = 0;
  property.pattern = &pattern;
  plugin.num_properties = 1;
  plugin.properties = properties;
#elif defined(BROKEN_SEED_UNKNOWN_OP) || defined(BROKEN_SEED_EMPTY)
  // A selector whose declared seeds could never seed anything.
#if defined(BROKEN_SEED_UNKNOWN_OP)
  property.seed_op_types = "Conv|Rleu";
#else
  property.seed_op_types = "|";
#endif
  plugin.num_properties = 1;
  plugin.properties = properties;
#elif defined(BROKEN_SEED_ON_PATTERN)
  // A pattern seeds at its anchor; seeds of its own would contradict it.
  pattern.num_edges = 0;
  property.pattern = &pattern;
  property.seed_op_types = "Relu";
  plugin.num_properties = 1;
  plugin.properties = properties;
#elif defined(BROKEN_KERNEL_NO_RUN)
  kernels[0].run = nullptr;
  plugin.num_kernels = 1;
  plugin.kernels = kernelTable;
#elif defined(BROKEN_DUPLICATE_KERNEL)
  plugin.num_kernels = 2;
  plugin.kernels = kernelTable;
#elif defined(BROKEN_TRANSFORM_STAGE)
  plugin.num_transforms = 1;
  plugin.transforms = transforms;
#elif defined(BROKEN_DEVICE_KIND)
  plugin.device = &device;
#elif defined(BROKEN_DEVICE_V2_KIND)
  plugin.device = &deviceV2;
#elif defined(BROKEN_DEVICE_NO_COPY_UP)
  plugin.device = &fullDevice;
  plugin.num_copies = 1;  // only device to host
  plugin.copies = deviceCopyTable + 1;
#elif defined(BROKEN_DEVICE_KERNEL_NO_QUEUE)
  plugin.device = &fullDevice;
  plugin.num_copies = 2;
  plugin.copies = deviceCopyTable;
  plugin.num_kernels = 1;  // a kernel with run but no run_on_queue
  plugin.kernels = kernelTable;
#elif defined(BROKEN_DEVICES_BAD_ID) || defined(BROKEN_DEVICES_NO_COPIES)
  plugin.device = &fullDevice;
  plugin.num_copies = 2;
  plugin.copies = deviceCopyTable;
  plugin.devices_for = &devicesFor;
#elif defined(BROKEN_DEVICE_COPY_WITHOUT_DEVICE)
  plugin.num_copies = 2;  // copies across a device boundary with no device
  plugin.copies = deviceCopyTable;
#elif defined(BROKEN_OP_DEF)
  plugin.num_op_defs = 1;
  plugin.op_defs = opDefs;
#elif defined(BROKEN_LAYOUT_NO_COPY_OUT)
  plugin.num_layouts = 1;
  plugin.layouts = layouts;
  plugin.num_copies = 1;  // only the copy into the layout
  plugin.copies = copies;
#elif defined(BROKEN_LAYOUT_OLD_VERSION)
  layout.abi_version = 1;
  plugin.num_layouts = 1;
  plugin.layouts = layouts;
  plugin.num_copies = 2;
  plugin.copies = copies;
#elif defined(BROKEN_COPY_UNLISTED_LAYOUT)
  outOfLayout.from = &unlisted;
  plugin.num_layouts = 1;
  plugin.layouts = layouts;
  plugin.num_copies = 2;
  plugin.copies = copies;
#elif defined(BROKEN_UNRESOLVED_SYMBOL)
  plugin.version = subgraph_test_symbol_nobody_defines() ? "1" : "0";
#elif defined(BROKEN_MISSING_DEPENDENCY)
  plugin.version = subgraph_test_absent_dependency() ? "1" : "0";
#endif
  *out = &plugin;
  return SG_OK;
#endif
}
#endif

#ifdef BROKEN_NO_ENTRY
EXPORT int not_the_entry_point(void) { return 1; }
#endif
