/*===- subgraph/plugin_abi.h - The versioned C ABI of backend plugins -----===*
 *
 * A backend plugin is a shared library that talks to subgraph only through
 * this header: plain C types, no C++ exceptions, no STL. It follows ONNX
 * Runtime's plugin execution-provider API rather than MXNet's lib_api.h:
 *
 *  * The plugin exports exactly one symbol, SUBGRAPH_PLUGIN_ENTRY_SYMBOL
 *    ("subgraph_plugin_entry"), of type SgPluginEntryFn. Everything else is
 *    reached through the two tables exchanged there: the host's SgHostApi
 *    (how the plugin reads graphs, reports errors and edits graphs) and the
 *    plugin's SgPlugin (what the plugin registers).
 *  * Every struct starts with `abi_version` and `struct_size`: the version of
 *    this header the producer was compiled against and sizeof() there.
 *    Structs and function tables only ever grow at the end; a field or slot
 *    added in version N is marked "since N", and the reader checks the
 *    producer's version (and size) before touching it. The static_asserts at
 *    the end freeze the offsets of every released version.
 *  * The host checks versions at load time: a plugin whose abi_version lies
 *    outside [SG_PLUGIN_ABI_MIN_VERSION, SG_PLUGIN_ABI_VERSION] is refused,
 *    with both versions in the message. The host never calls a slot newer
 *    than the plugin's version; a plugin can check host->abi_version the same
 *    way before calling a newer host slot.
 *  * Errors are status codes (SgStatus) plus one line of text written into
 *    an SgMessage with SgHostApi::message_set. A callback must never let an
 *    exception escape; the C++ SDK (subgraph/sdk/plugin.h) guarantees that.
 *  * Ownership: everything a plugin hands out (names, tables, arrays) stays
 *    valid until the host calls SgPlugin::release, right before unloading.
 *    Everything the host hands in (node views, strings, tensors) is valid
 *    only for the duration of the call that received it, except node views
 *    given to SgKernelDesc::create, which live as long as the kernel.
 *
 * Versions:
 *  1  The first release: properties (declarative patterns or selector
 *     callbacks), op definitions, graph transforms, kernel creators, a
 *     device allocator.
 *  2  Layouts and scratch memory: a plugin names memory layouts of its own
 *     (SgLayoutDesc, e.g. oneDNN's nChw16c) and the copies between them and
 *     plain row-major (SgCopyDesc); a kernel says which layout it reads and
 *     writes each value in (SgKernelDesc::input_layout, output_layout), so
 *     a value passed between two of the plugin's regions stays in its
 *     layout and the host converts it only where it leaves the plugin. A
 *     kernel may also ask for planned scratch memory (scratch_size,
 *     run_with_scratch). The host tells symbolic dims apart
 *     (value_dim_symbol). Version 1 plugins load unchanged: the host reads
 *     these slots only from tables that declare version 2 and are large
 *     enough to hold them.
 *  3  Devices: a plugin's SgDeviceDesc may name memory the host cannot
 *     read (kind "cuda", "emu", ...), with work queues (create, destroy,
 *     synchronize) and events (record, synchronize, make a queue wait on
 *     one without blocking the host, time between two). Copies say their
 *     direction (host to device, device to host, on the device) and run
 *     asynchronously on a queue, changing layout if they like
 *     (SgCopyDesc::direction, run_on_queue); a kernel of such a device is
 *     told the queue it runs on and gets device pointers
 *     (SgKernelDesc::run_on_queue). The kernel context carries the
 *     session's precision and its options for the plugin, so nothing
 *     reaches a plugin through environment variables. Versions 1 and 2
 *     load unchanged; their offsets are frozen below.
 *  4  Fusion families as one pattern: a pattern node may be "only feeds
 *     next" (SG_PATTERN_ONLY_FEEDS_NEXT), so one pattern with optional
 *     steps replaces one property per variant. Grown within version 4: a
 *     selector property may name the op types that can seed its regions
 *     (SgPropertyDesc::seed_op_types), so that a pass over it costs those
 *     nodes rather than the whole graph. It is a promise about `select`,
 *     so a host that predates it, offering every node, forms the same
 *     regions.
 *  5  Options and sessions: a plugin declares its options (SgOptionDesc:
 *     name, the values it takes, default, one line of doc), so the host
 *     refuses an unknown name or value with a "did you mean" before any
 *     session exists, and `subgraph plugins` lists them. A plugin whose
 *     selection depends on the session's precision or options gives the
 *     host a property table per session (SgPlugin::properties_for), so
 *     the regions planned are the regions that run. Versions 1 to 4 load
 *     unchanged: their options are passed through unchecked, and their
 *     one property table serves every session. Concurrent requests: a
 *     kernel or copy with its own threads may say that two requests can
 *     run it at once (concurrent_requests); older ones run alone. A
 *     device may record a queue's work and launch it again
 *     (queue_begin_capture, queue_end_capture, graph_launch,
 *     graph_destroy: CUDA graphs), so that a run on the device costs one
 *     launch rather than one submission per step.
 *  6  Several devices of one plugin: a plugin may give a session more
 *     than one device of its kind (SgPlugin::devices_for; emu:0, emu:1,
 *     cuda:0..n), each with its own allocator, queues, events and plain
 *     copies (SgDeviceDesc::copies). A pipeline stage placed on device k
 *     gets backends on that device, and its kernels are told which one
 *     (SgKernelContext::device_index). Versions 1 to 5 load unchanged and
 *     have one device.
 *
 *===----------------------------------------------------------------------===*/
#ifndef SUBGRAPH_PLUGIN_ABI_H
#define SUBGRAPH_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. */
#define SG_PLUGIN_ABI_VERSION 6u
/** The oldest plugin ABI version this host still loads. */
#define SG_PLUGIN_ABI_MIN_VERSION 1u
/** The one symbol a plugin exports. */
#define SUBGRAPH_PLUGIN_ENTRY_SYMBOL "subgraph_plugin_entry"

/*----------------------------------------------------------------------------
 * Status codes and messages
 *--------------------------------------------------------------------------*/

/** A callback's result. Anything other than SG_OK comes with a message. */
typedef int32_t SgStatus;
#define SG_OK 0
/** Generic failure. */
#define SG_ERROR 1
/** The plugin does not handle this (a kernel creator declining a node). */
#define SG_UNSUPPORTED 2
/** An argument or a graph was not what the callee accepts. */
#define SG_INVALID_ARGUMENT 3
/** Out of memory. */
#define SG_OUT_OF_MEMORY 4
/** The plugin works but cannot run on this machine (e.g. a GPU backend
 *  without a GPU). From the entry point: the host lists the plugin as
 *  unavailable, with the message, instead of as broken. Older hosts treat
 *  it as any other failure. */
#define SG_UNAVAILABLE 5

/** Host-owned text sink for an error or a reason; written with message_set. */
typedef struct SgMessage SgMessage;
/** Host-owned description of the fused node a property asks for; the host
 *  fills defaults (op `<property>` in domain `subgraph.<backend>`, named
 *  `<backend>_<property>_<id>`, the region as graph attribute "body"), and
 *  the plugin may change them with the fused_node_* slots. */
typedef struct SgFusedNode SgFusedNode;

/*----------------------------------------------------------------------------
 * Read-only graph views (host-owned, opaque)
 *--------------------------------------------------------------------------*/

/** A node of a graph being partitioned, transformed or compiled. */
typedef struct SgNode SgNode;
/** A value (tensor) of a graph: a node output, a graph input or a constant. */
typedef struct SgValue SgValue;
/** A graph: the model, or the body of a fused region. */
typedef struct SgGraph SgGraph;

/** Element types; the numbers are ONNX TensorProto's. */
typedef int32_t SgDataType;
#define SG_DTYPE_UNDEFINED 0
#define SG_DTYPE_FLOAT32 1
#define SG_DTYPE_UINT8 2
#define SG_DTYPE_INT8 3
#define SG_DTYPE_UINT16 4
#define SG_DTYPE_INT16 5
#define SG_DTYPE_INT32 6
#define SG_DTYPE_INT64 7
#define SG_DTYPE_STRING 8
#define SG_DTYPE_BOOL 9
#define SG_DTYPE_FLOAT16 10
#define SG_DTYPE_FLOAT64 11
#define SG_DTYPE_UINT32 12
#define SG_DTYPE_UINT64 13
#define SG_DTYPE_BFLOAT16 16

/** Attribute kinds. */
typedef int32_t SgAttrKind;
#define SG_ATTR_NONE 0 /* absent */
#define SG_ATTR_INT 1
#define SG_ATTR_FLOAT 2
#define SG_ATTR_STRING 3
#define SG_ATTR_INTS 4
#define SG_ATTR_FLOATS 5
#define SG_ATTR_STRINGS 6
#define SG_ATTR_TENSOR 7
#define SG_ATTR_GRAPH 8
#define SG_ATTR_GRAPHS 9

/** An attribute a plugin sets on a node it asks for (fused node, transform
 *  replacement). Only the fields of `kind` are read. Plain data, no version:
 *  it is only ever passed inside versioned structs or calls. */
typedef struct SgAttrValue {
  const char* name;
  SgAttrKind kind;     /* SG_ATTR_INT .. SG_ATTR_FLOATS */
  int64_t i;           /* SG_ATTR_INT */
  double f;            /* SG_ATTR_FLOAT */
  const char* s;       /* SG_ATTR_STRING */
  const int64_t* ints; /* SG_ATTR_INTS, `count` elements */
  const float* floats; /* SG_ATTR_FLOATS, `count` elements */
  size_t count;
} SgAttrValue;

/** A run-time tensor: a dense row-major buffer in the device's memory, or,
 *  where the kernel or copy asked for one of its plugin's layouts (since 2),
 *  a buffer in that layout. `dims` are always the logical (plain) dims;
 *  `bytes` is what the layout's byte_size gave for them. */
typedef struct SgTensor {
  SgDataType dtype;
  int32_t rank;
  const int64_t* dims; /* `rank` dims */
  void* data;          /* read-only for inputs */
  size_t bytes;
} SgTensor;

/** Output dims a kernel computes in resize(): the host provides room for
 *  SG_MAX_RANK dims per output. */
#define SG_MAX_RANK 16
typedef struct SgTensorShape {
  SgDataType dtype;
  int32_t rank;
  int64_t dims[SG_MAX_RANK];
} SgTensorShape;

/*----------------------------------------------------------------------------
 * The host's table (what a plugin may call)
 *--------------------------------------------------------------------------*/

/** Functions the host offers. Valid from the entry call until release. */
typedef struct SgHostApi {
  uint32_t abi_version; /* the host's SG_PLUGIN_ABI_VERSION */
  uint32_t struct_size;

  /* --- since 1: messages --- */
  /** Replaces the text of `message` (one line; truncated to 4 KiB). */
  void (*message_set)(SgMessage* message, const char* text);
  /** The current text of `message` (valid until it is next set). */
  const char* (*message_get)(const SgMessage* message);

  /* --- since 1: nodes --- */
  const char* (*node_op_type)(const SgNode* node); /* "Conv" */
  const char* (*node_domain)(const SgNode* node);  /* "" for ONNX */
  const char* (*node_name)(const SgNode* node);    /* may be "" */
  size_t (*node_num_inputs)(const SgNode* node);
  /** Input i, or NULL for an omitted optional input. */
  const SgValue* (*node_input)(const SgNode* node, size_t i);
  size_t (*node_num_outputs)(const SgNode* node);
  const SgValue* (*node_output)(const SgNode* node, size_t i);
  /** Attributes set on the node (schema defaults are not listed). */
  size_t (*node_num_attrs)(const SgNode* node);
  const char* (*node_attr_name)(const SgNode* node, size_t i);
  /** Kind of attribute `name`, SG_ATTR_NONE if absent and without a default. */
  SgAttrKind (*node_attr_kind)(const SgNode* node, const char* name);
  /** Attribute (or schema default) getters; return 0 if absent or of
   *  another kind, leaving the outputs untouched. Arrays stay valid as long
   *  as the node view does. */
  int32_t (*node_attr_int)(const SgNode* node, const char* name, int64_t* out);
  int32_t (*node_attr_float)(const SgNode* node, const char* name, float* out);
  int32_t (*node_attr_string)(const SgNode* node, const char* name, const char** out);
  int32_t (*node_attr_ints)(const SgNode* node, const char* name, const int64_t** data,
                            size_t* count);
  int32_t (*node_attr_floats)(const SgNode* node, const char* name, const float** data,
                              size_t* count);
  /** A graph attribute, e.g. "body" of a fused region node. */
  const SgGraph* (*node_attr_graph)(const SgNode* node, const char* name);

  /* --- since 1: values --- */
  const char* (*value_name)(const SgValue* value);
  SgDataType (*value_dtype)(const SgValue* value);
  /** Rank, or -1 if unknown. */
  int32_t (*value_rank)(const SgValue* value);
  /** Dim i, or -1 if symbolic or unknown. */
  int64_t (*value_dim)(const SgValue* value, int32_t i);
  /** 1 if the value is a constant (an initializer that is not a graph input). */
  int32_t (*value_is_constant)(const SgValue* value);
  /** A constant's dense row-major data and size; NULL if not a constant. */
  const void* (*value_constant_data)(const SgValue* value, size_t* bytes);
  /** The node computing the value; NULL for graph inputs and constants. */
  const SgNode* (*value_producer)(const SgValue* value);
  /** Distinct reading nodes, in use order. */
  size_t (*value_num_consumers)(const SgValue* value);
  const SgNode* (*value_consumer)(const SgValue* value, size_t i);
  /** 1 if the value is an output of its graph. */
  int32_t (*value_is_graph_output)(const SgValue* value);

  /* --- since 1: graphs --- */
  /** Nodes in topological order. */
  size_t (*graph_num_nodes)(const SgGraph* graph);
  const SgNode* (*graph_node)(const SgGraph* graph, size_t i);
  size_t (*graph_num_inputs)(const SgGraph* graph);
  const SgValue* (*graph_input)(const SgGraph* graph, size_t i);
  size_t (*graph_num_outputs)(const SgGraph* graph);
  const SgValue* (*graph_output)(const SgGraph* graph, size_t i);

  /* --- since 1: fused nodes (only inside create_subgraph_node) --- */
  /** Sets the fused node's op; NULL keeps a part's default. */
  void (*fused_node_set_op)(SgFusedNode* node, const char* domain, const char* op_type);
  /** Sets the fused node's name. */
  void (*fused_node_set_name)(SgFusedNode* node, const char* name);
  /** Adds (or replaces) an attribute; the host copies it. */
  void (*fused_node_add_attr)(SgFusedNode* node, const SgAttrValue* attr);

  /* --- since 1: graph edits (only inside SgTransformDesc::run) --- */
  /** Replaces `node` by a new node of op `domain`.`op_type` reading
   *  `inputs` (NULL entries are omitted optional inputs) and defining the
   *  old node's outputs, with `attrs`. The new node is verified against its
   *  schema; on failure the graph is unchanged and `message` says why. */
  SgStatus (*graph_replace_node)(SgGraph* graph, const SgNode* node, const char* domain,
                                 const char* op_type, const SgValue* const* inputs,
                                 size_t num_inputs, const SgAttrValue* attrs, size_t num_attrs,
                                 SgMessage* message);
  /** Removes nodes whose outputs nobody reads, and unread constants. */
  SgStatus (*graph_remove_dead_nodes)(SgGraph* graph, SgMessage* message);

  /* --- since 2: values --- */
  /** The name of dim i when it is symbolic (an exported model's batch
   *  "N": equal names are equal sizes at run time), "" when it is static,
   *  NULL when it is unknown or i is out of range. */
  const char* (*value_dim_symbol)(const SgValue* value, int32_t i);
} SgHostApi;

/*----------------------------------------------------------------------------
 * What a plugin registers
 *--------------------------------------------------------------------------*/

/** Pattern-node predicate flags (SgPatternNode::flags). */
#define SG_PATTERN_OPTIONAL 1u      /* matched when present, skipped otherwise */
#define SG_PATTERN_ONE_USE 2u       /* every output read once, no graph output */
#define SG_PATTERN_STATIC_SHAPES 4u /* all inputs and outputs fully static */
#define SG_PATTERN_NO_ZERO_DIMS 8u  /* no static dim of size 0 */
/* Every reader of every output is in the match, and none is a graph output
 * (a value read twice inside a DAG pattern still matches). A host older
 * than this flag ignores it and may fuse more. */
#define SG_PATTERN_USES_INSIDE 16u
/* Since 4. When another matched node reads it through a pattern edge, its
 * outputs are read only by the matched nodes its pattern edges lead to,
 * and none is a graph output; when it ends the match, anything may read
 * them. A fusion family with optional steps (Conv -> [BN] -> [Add] ->
 * [act]) marks its steps so: only the variant's last node may have other
 * readers. Plugins that set it declare version 4, which older hosts
 * refuse rather than ignore the flag and fuse too much. */
#define SG_PATTERN_ONLY_FEEDS_NEXT 32u

/** One node of a declarative pattern (the host's PatternBuilder). */
typedef struct SgPatternNode {
  uint32_t abi_version;
  uint32_t struct_size;
  /** Op types: "Conv", "Relu|Clip", "domain.Op", or "*" for any op. */
  const char* op_types;
  uint32_t flags;
  /** Bit i set: input i must be present and constant (i < 32). */
  uint32_t constant_inputs;
  /** Optional extra predicate; *accept = 0 rejects, with a reason in message. */
  void* predicate_user;
  SgStatus (*predicate)(void* user, const SgNode* node, int32_t* accept, SgMessage* message);
} SgPatternNode;

/** An edge of a pattern: output `output` of pattern node `producer` is input
 *  `input` (or any input, if -1) of pattern node `consumer`. */
typedef struct SgPatternEdge {
  uint32_t producer;
  uint32_t consumer;
  int32_t input;
  uint32_t output;
} SgPatternEdge;

/** A declarative pattern: node 0 is the anchor; every other node is
 *  connected to an earlier one. The host matches it with its own
 *  PatternSelector (backtracking, maximal optional matches). */
typedef struct SgPatternDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* name;
  size_t num_nodes;
  const SgPatternNode* nodes;
  size_t num_edges;
  const SgPatternEdge* edges;
} SgPatternDesc;

/** A subgraph property: one fusion rule (MXNet's SubgraphProperty). Either
 *  `pattern` is set (declarative), or `create_selector` and the selector
 *  slots are (callback selector, MXNet's SubgraphSelector semantics). */
typedef struct SgPropertyDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* name;
  /** PropertyOptions: skip when partitioning for training. */
  int32_t inference_only;
  /** PropertyOptions: smaller regions are not fused (0 means 1). */
  uint32_t min_region_size;
  const SgPatternDesc* pattern;

  void* user;
  /** A fresh selector for one partitioning pass. */
  SgStatus (*create_selector)(void* user, void** selector, SgMessage* message);
  void (*destroy_selector)(void* user, void* selector);
  /** Each answers *accept (1 or 0); a 0 may carry a reason in `message`;
   *  a status other than SG_OK is an error (text in `message`). */
  SgStatus (*select)(void* selector, const SgNode* node, int32_t* accept, SgMessage* message);
  SgStatus (*select_input)(void* selector, const SgNode* node, const SgNode* producer,
                           int32_t* accept, SgMessage* message);
  SgStatus (*select_output)(void* selector, const SgNode* node, const SgNode* consumer,
                            int32_t* accept, SgMessage* message);
  /** keep[i] = 0 drops candidates[i] (topological order); NULL keeps all. */
  SgStatus (*filter)(void* selector, const SgNode* const* candidates, size_t count, uint8_t* keep,
                     SgMessage* message);
  /** Forget per-region state; called before every use. NULL: nothing. */
  SgStatus (*reset)(void* selector, SgMessage* message);
  /** Decide on a region whose body is `body`: *accept = 0 rejects it (reason
   *  in `message`); `fused` may be changed with the fused_node_* slots.
   *  NULL accepts every region with the defaults. */
  SgStatus (*create_subgraph_node)(void* user, const SgGraph* body, int32_t region_id,
                                   SgFusedNode* fused, int32_t* accept, SgMessage* message);
  /** Grown within version 2 (read only when struct_size is larger than
   *  SG_PROPERTY_DESC_V2_SIZE): why the last `filter` call dropped `node`,
   *  set in `reason` (left empty: no reason). NULL: the report says only
   *  that the plugin's Filter dropped it. */
  SgStatus (*filter_reason)(void* selector, const SgNode* node, SgMessage* reason);
  /** Grown within version 4 (read only when struct_size is larger than
   *  SG_PROPERTY_DESC_V4_SIZE), for selector properties: the op types of
   *  the nodes that can seed a region, written as a pattern node's
   *  ("Conv", "MatMul|Gemm", "domain.Op"). The plugin promises that
   *  `select` says no, without a reason, to every node of another op type;
   *  the host then offers `select` only nodes of these types. NULL or
   *  "*": every node. A pattern property's seeds are its anchor's ops,
   *  and it must leave this NULL. */
  const char* seed_op_types;
} SgPropertyDesc;

/** One operand of an op definition. */
typedef struct SgOperandDef {
  const char* name;
  /** 0 required, 1 optional, 2 variadic (last operand only). */
  int32_t arity;
} SgOperandDef;

/** An attribute of an op definition, with its default (ignored if
 *  `required`). */
typedef struct SgAttrDef {
  SgAttrValue value; /* name, kind and default */
  int32_t required;
} SgAttrDef;

/** A backend-specific op (the host's OpSchemaBuilder). Inference is the
 *  host's: reuse a registered op's (`infer_from`, e.g. "Conv"), or give
 *  output i the type of input 0 (`infer_from` NULL). */
typedef struct SgOpDef {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* domain; /* e.g. "example.max_splat" */
  const char* name;   /* e.g. "MaxSplat" */
  const char* doc;
  size_t num_inputs;
  const SgOperandDef* inputs;
  size_t num_outputs;
  const SgOperandDef* outputs;
  size_t num_attrs;
  const SgAttrDef* attrs;
  /** Copy every attribute (and default) of this registered op first. */
  const char* attributes_from;
  const char* infer_from;
  /** 1 if elementwise (output element i depends on input element i). */
  int32_t data_parallel;
} SgOpDef;

/** When a transform runs. */
#define SG_TRANSFORM_PRE_PARTITION 0
#define SG_TRANSFORM_POST_PARTITION 1

/** A graph transform (Glow's transformPreLowering/PostLowering). */
typedef struct SgTransformDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* name;
  int32_t stage; /* SG_TRANSFORM_* */
  void* user;
  /** Edits `graph` with the host's graph_* edit slots; *changed = 1 if so. */
  SgStatus (*run)(void* user, SgGraph* graph, int32_t* changed, SgMessage* message);
} SgTransformDesc;

/** A memory layout of a plugin's own (since 2); defined below. */
typedef struct SgLayoutDesc SgLayoutDesc;

/** sizeof() of the structs that grew since version 1, as version 1 had
 *  them: the smallest struct_size the host accepts for each. */
#define SG_HOST_API_V1_SIZE 320u
#define SG_KERNEL_DESC_V1_SIZE 72u
#define SG_PLUGIN_V1_SIZE 120u
/** sizeof() of the structs that grew in version 3, as version 2 had them. */
#define SG_KERNEL_DESC_V2_SIZE 104u
#define SG_KERNEL_CONTEXT_V2_SIZE 12u
#define SG_COPY_DESC_V2_SIZE 48u
#define SG_DEVICE_DESC_V2_SIZE 40u
/** sizeof() of the structs that grew in version 5, as versions 3 and 4
 *  had them. */
#define SG_KERNEL_DESC_V3_SIZE 112u
#define SG_COPY_DESC_V3_SIZE 64u
#define SG_DEVICE_DESC_V3_SIZE 128u
/** sizeof() of the structs that grew in version 6, as version 5 had them. */
#define SG_KERNEL_CONTEXT_V5_SIZE 48u
#define SG_DEVICE_DESC_V5_SIZE 160u
#define SG_PLUGIN_V5_SIZE 176u
/** sizeof(SgPlugin) in versions 2 to 4. */
#define SG_PLUGIN_V4_SIZE 152u
/** SgPropertyDesc as versions 1 and 2 first had it, before filter_reason:
 *  the smallest struct_size the host accepts. */
#define SG_PROPERTY_DESC_V2_SIZE 104u
/** SgPropertyDesc as version 4 first had it, before seed_op_types. */
#define SG_PROPERTY_DESC_V4_SIZE 112u

/** What a kernel creator learns about the session it serves. */
typedef struct SgKernelContext {
  uint32_t abi_version;
  uint32_t struct_size;
  /** Worker threads the session was given (0: one per core); a kernel with
   *  its own pool should use no more. */
  int32_t num_threads;

  /* --- since 3 --- */
  /** The precision the session asks for: "fp32", "tf32", "fp16", "bf16",
   *  or "" for the plugin's default (exact float32 where it can). */
  const char* precision;
  /** Options the session was given for this plugin (`--plugin-option
   *  <plugin>.<name>=<value>`), the plugin's prefix removed: option i is
   *  option_names[i] = option_values[i]. Valid during create only. */
  size_t num_options;
  const char* const* option_names;
  const char* const* option_values;

  /* --- since 6 (read only when struct_size is larger than
   *     SG_KERNEL_CONTEXT_V5_SIZE) --- */
  /** Which of the session's devices (SgPlugin::devices_for) the kernel,
   *  or the session's properties, are for; 0 is SgPlugin::device. */
  int32_t device_index;
} SgKernelContext;

/** A kernel creator for one op type (MNN's onCreate). Kernels are shared by
 *  concurrent requests: run must be thread-safe. */
typedef struct SgKernelDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  /** Qualified op type: "Conv", or "<domain>.<op>" (e.g. a fused region
   *  op "subgraph.example_convbn.conv_bn"). */
  const char* op_type;
  /** 1 if run uses a thread pool of its own (OpenMP, oneDNN): the session
   *  then never runs it concurrently with other kernels. */
  int32_t uses_own_threads;
  void* user;
  /** Makes a kernel for `node` (for a fused region, read its "body" graph:
   *  op types, attributes, constant weights). SG_UNSUPPORTED declines, and
   *  the host falls back to its default executor for regions. */
  SgStatus (*create)(void* user, const SgNode* node, const SgKernelContext* context, void** kernel,
                     SgMessage* message);
  void (*destroy)(void* user, void* kernel);
  /** Once per session before the first run (prepack weights, make
   *  primitives). NULL: nothing. */
  SgStatus (*session_prologue)(void* kernel, SgMessage* message);
  /** Output types from input types. NULL, or SG_UNSUPPORTED, means: use
   *  the node's static output types. */
  SgStatus (*resize)(void* kernel, const SgTensorShape* inputs, size_t num_inputs,
                     SgTensorShape* outputs, size_t num_outputs, SgMessage* message);
  /** Computes outputs (dense row-major, e.g. float32 NCHW) from inputs. */
  SgStatus (*run)(void* kernel, const SgTensor* inputs, size_t num_inputs, const SgTensor* outputs,
                  size_t num_outputs, SgMessage* message);

  /* --- since 2: layouts and scratch; each slot may be NULL --- */
  /** The layout `kernel` reads input i in: one of its plugin's `layouts`,
   *  or NULL for plain row-major. Asked once per input right after create;
   *  the host inserts the plugin's copy where a value arrives in another
   *  layout. NULL slot: every input plain. */
  const SgLayoutDesc* (*input_layout)(void* kernel, size_t i);
  /** The layout `kernel` writes output i in (NULL: plain). NULL slot:
   *  every output plain. */
  const SgLayoutDesc* (*output_layout)(void* kernel, size_t i);
  /** Bytes of scratch memory run_with_scratch needs for these inputs;
   *  asked after resize, once per input signature. The host plans it like
   *  any other buffer, live only while the kernel runs. */
  SgStatus (*scratch_size)(void* kernel, const SgTensorShape* inputs, size_t num_inputs,
                           size_t* bytes, SgMessage* message);
  /** Like run, with the scratch memory scratch_size asked for (64-byte
   *  aligned; NULL when 0 bytes). When set, the host calls it instead of
   *  run. */
  SgStatus (*run_with_scratch)(void* kernel, const SgTensor* inputs, size_t num_inputs,
                               const SgTensor* outputs, size_t num_outputs, void* scratch,
                               size_t scratch_bytes, SgMessage* message);

  /* --- since 3: devices --- */
  /** For a plugin whose device is not host memory (SgDeviceDesc::kind not
   *  "cpu"; required there, ignored elsewhere): submits the kernel's work
   *  to `queue`, one of the device's queues, and returns without waiting.
   *  Tensors and scratch are device memory; their descriptions (dims) are
   *  valid only during the call, the memory until the work completes. An
   *  error found while the work runs is reported by the next
   *  queue_synchronize or event_synchronize of that queue. */
  SgStatus (*run_on_queue)(void* kernel, void* queue, const SgTensor* inputs, size_t num_inputs,
                           const SgTensor* outputs, size_t num_outputs, void* scratch,
                           size_t scratch_bytes, SgMessage* message);

  /* --- since 5 (read only when struct_size is larger than
   *     SG_KERNEL_DESC_V3_SIZE) --- */
  /** For a kernel with uses_own_threads: 1 if two requests of a session may
   *  run it at the same time, each on its own threads (at most the
   *  session's count), so that only a request's own steps are ordered
   *  around it; 0 (and every older plugin): the session runs it alone,
   *  across all requests. */
  int32_t concurrent_requests;
} SgKernelDesc;

/** A memory layout of the plugin's own (since 2), e.g. channels blocked by
 *  16. The host never interprets such a buffer: it sizes it with
 *  byte_size, hands it only to the plugin's kernels and copies, and
 *  compares layouts by address (two plugins' "nChw16c" are different
 *  layouts). Every layout needs a copy from plain and one to plain (for
 *  the same element types), so a value can enter and leave the plugin. */
struct SgLayoutDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  /** Short name for messages and profiles, unique within the plugin
   *  (letters, digits, '_', '-', '.'). */
  const char* name;
  void* user;
  /** Bytes a tensor of `dtype` with logical dims `dims` (`rank` of them)
   *  occupies in this layout; 0 if the layout cannot hold it. */
  size_t (*byte_size)(void* user, SgDataType dtype, int32_t rank, const int64_t* dims);
};

/** Copy directions (SgCopyDesc::direction, since 3). */
#define SG_COPY_ON_HOST 0        /* host memory to host memory (version 2) */
#define SG_COPY_HOST_TO_DEVICE 1 /* host memory to the plugin's device */
#define SG_COPY_DEVICE_TO_HOST 2
#define SG_COPY_ON_DEVICE 3

/** A copy between two layouts of the plugin (since 2): `from` and `to` are
 *  entries of the plugin's `layouts` or NULL for plain row-major. On the
 *  host (SG_COPY_ON_HOST) not both are NULL (plain-to-plain copies are the
 *  host's); across the device boundary (since 3) both may be, and a device
 *  plugin must offer plain copies in both directions. */
typedef struct SgCopyDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  const SgLayoutDesc* from;
  const SgLayoutDesc* to;
  /** The element type it copies; SG_DTYPE_UNDEFINED: any. */
  SgDataType dtype;
  /** 1 if run uses a thread pool of its own (as SgKernelDesc's). */
  int32_t uses_own_threads;
  void* user;
  /** Writes `dst` (layout `to`) from `src` (layout `from`); same dtype and
   *  logical dims. Thread-safe, like a kernel's run. */
  SgStatus (*run)(void* user, const SgTensor* src, const SgTensor* dst, SgMessage* message);

  /* --- since 3 --- */
  /** SG_COPY_*: which memories `src` and `dst` are in. */
  int32_t direction;
  /** For a direction other than SG_COPY_ON_HOST (required there; `run` is
   *  then never called): submits the copy to `queue` and returns without
   *  waiting, like SgKernelDesc::run_on_queue. Host memory it reads or
   *  writes stays valid until the copy completes. A host source is complete
   *  when the copy is submitted (it may be read then); a host destination
   *  may still be read by earlier work of the same queue (a copy up from a
   *  buffer, then a copy down into it), so the copy writes it only in its
   *  turn in the queue. */
  SgStatus (*run_on_queue)(void* user, void* queue, const SgTensor* src, const SgTensor* dst,
                           SgMessage* message);

  /* --- since 5 (read only when struct_size is larger than
   *     SG_COPY_DESC_V3_SIZE) --- */
  /** As SgKernelDesc::concurrent_requests, for a copy with uses_own_threads. */
  int32_t concurrent_requests;
} SgCopyDesc;

/** SgDeviceDesc::flags (since 3). */
/* The host may read and write the device's memory directly (unified or
 * host memory); copies are still the plugin's. */
#define SG_DEVICE_HOST_ACCESSIBLE 1u

/** The device the plugin's kernels run on, with its allocator. Before
 *  version 3 only host memory (kind "cpu"). Since 3, any other kind is a
 *  device whose memory the host never dereferences: values reach it only
 *  through the plugin's copies, and its kernels run on its queues. */
typedef struct SgDeviceDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* kind; /* "cpu", or since 3 e.g. "cuda" (letters, digits, '_') */
  void* user;
  /** NULL on failure; `alignment` is a power of two. */
  void* (*allocate)(void* user, size_t bytes, size_t alignment);
  void (*deallocate)(void* user, void* ptr);

  /* --- since 3; every slot required for a kind other than "cpu" unless
   *     marked optional --- */
  /** Which device of its kind (0 for the first GPU). */
  int32_t id;
  uint32_t flags; /* SG_DEVICE_* */
  /** One line for `subgraph plugins`, e.g. "NVIDIA H100 80GB HBM3"; may
   *  be NULL. */
  const char* description;
  /** A new work queue (a CUDA stream): work submitted to one queue runs in
   *  submission order. */
  SgStatus (*queue_create)(void* user, void** queue, SgMessage* message);
  void (*queue_destroy)(void* user, void* queue);
  /** Blocks the host until everything submitted to `queue` has completed;
   *  reports the first error of that work (once). */
  SgStatus (*queue_synchronize)(void* user, void* queue, SgMessage* message);
  SgStatus (*event_create)(void* user, void** event, SgMessage* message);
  void (*event_destroy)(void* user, void* event);
  /** Marks the point of `queue` that everything submitted so far reaches. */
  SgStatus (*event_record)(void* user, void* event, void* queue, SgMessage* message);
  /** Blocks the host until the recorded point is reached; reports an error
   *  of the queue's work before it. */
  SgStatus (*event_synchronize)(void* user, void* event, SgMessage* message);
  /** Work submitted to `queue` after this call starts only once `event`'s
   *  point is reached; the host does not block. */
  SgStatus (*queue_wait_event)(void* user, void* queue, void* event, SgMessage* message);
  /** Optional: device milliseconds between two reached events (profiles);
   *  NULL, or a status other than SG_OK, and the host times the submission. */
  SgStatus (*event_elapsed_ms)(void* user, void* start, void* end, double* ms, SgMessage* message);

  /* --- since 5 (read only when struct_size is larger than
   *     SG_DEVICE_DESC_V3_SIZE); optional: all four, or none --- */
  /** Work submitted to `queue` from now until queue_end_capture is
   *  recorded, not run (CUDA stream capture): kernels and copies submit as
   *  usual. The host submits nothing else to the queue meanwhile, and
   *  records only work whose memory is the device's. */
  SgStatus (*queue_begin_capture)(void* user, void* queue, SgMessage* message);
  /** Ends the recording: *graph is the recorded work, which graph_launch
   *  runs again, at the same device addresses, any number of times. */
  SgStatus (*queue_end_capture)(void* user, void* queue, void** graph, SgMessage* message);
  /** Submits the recorded work of `graph` to `queue` (cudaGraphLaunch):
   *  it runs in order after what the queue holds, without blocking the
   *  host. */
  SgStatus (*graph_launch)(void* user, void* graph, void* queue, SgMessage* message);
  /** Frees a graph; the host launches it no more. */
  void (*graph_destroy)(void* user, void* graph);

  /* --- since 6 (read only when struct_size is larger than
   *     SG_DEVICE_DESC_V5_SIZE) --- */
  /** This device's copies across its boundary, as SgPlugin::copies (plain
   *  both ways at least). Required for a device of devices_for other than
   *  SgPlugin::device; 0 and NULL: the plugin's copies serve it. */
  size_t num_copies;
  const SgCopyDesc* const* copies;
} SgDeviceDesc;

/** One option of a plugin (since 5): a session sets it with
 *  `--plugin-option <plugin>.<name>=<value>` (Python: plugin_options), and
 *  the plugin reads it from SgKernelContext's options, in kernels and in
 *  properties_for. */
typedef struct SgOptionDesc {
  uint32_t abi_version;
  uint32_t struct_size;
  /** Letters, digits and '_'; unique within the plugin. */
  const char* name;
  /** The values it takes, '|'-separated ("fp32|bf16"); NULL or "": any
   *  value (the plugin checks it where it reads it). */
  const char* values;
  /** What the plugin does when the option is not given, for
   *  `subgraph plugins` ("fp32", "the session's precision"); may be NULL. */
  const char* default_value;
  /** One line. */
  const char* doc;
} SgOptionDesc;

/** Everything a plugin registers; returned by the entry point. */
typedef struct SgPlugin {
  uint32_t abi_version; /* the plugin's SG_PLUGIN_ABI_VERSION */
  uint32_t struct_size;
  /** Backend name, e.g. "example_convbn": a valid identifier, unique. */
  const char* name;
  /** The plugin's own version, e.g. "1.0.0". */
  const char* version;
  const char* description;

  size_t num_properties;
  const SgPropertyDesc* const* properties; /* in pass order */
  size_t num_op_defs;
  const SgOpDef* const* op_defs;
  size_t num_transforms;
  const SgTransformDesc* const* transforms;
  size_t num_kernels;
  const SgKernelDesc* const* kernels;
  /** NULL: host CPU memory. */
  const SgDeviceDesc* device;

  void* user;
  /** Called once before the library is unloaded; frees the plugin's state. */
  void (*release)(void* user);

  /* --- since 2 --- */
  /** The plugin's own memory layouts, and the copies between them and
   *  plain row-major. */
  size_t num_layouts;
  const SgLayoutDesc* const* layouts;
  size_t num_copies;
  const SgCopyDesc* const* copies;

  /* --- since 5 (read only when struct_size is larger than
   *     SG_PLUGIN_V4_SIZE) --- */
  /** The options it takes; the host refuses any other name, and any value
   *  not in an option's `values`. */
  size_t num_options;
  const SgOptionDesc* const* options;
  /** Optional: the property table for a session, whose precision and
   *  (checked) options are in `session` (num_threads is 0 and means
   *  nothing here). The host calls it before each partitioning and uses
   *  the table instead of `properties`; it must stay valid until release
   *  (memoize one table per distinct session). NULL: `properties` serves
   *  every session. The host checks the table as it checks `properties`. */
  SgStatus (*properties_for)(void* user, const SgKernelContext* session, size_t* num_properties,
                             const SgPropertyDesc* const** properties, SgMessage* message);

  /* --- since 6 (read only when struct_size is larger than
   *     SG_PLUGIN_V5_SIZE) --- */
  /** Optional: the devices a session with these options may place work on
   *  (several GPUs; an emulator's device count option), every one of
   *  `device`'s kind, with ids 0, 1, ... in order; (*devices)[0] is the
   *  device `device` describes. (*devices)[k] is `emu:k`; a stage placed
   *  there gets its queues and memory from it, and its kernels are created
   *  with device_index k. The list must stay valid until release
   *  (memoize one list per distinct session). NULL: `device` is the
   *  plugin's only device. */
  SgStatus (*devices_for)(void* user, const SgKernelContext* session, size_t* num_devices,
                          const SgDeviceDesc* const** devices, SgMessage* message);
} SgPlugin;

/** The entry point: checks the host (host->abi_version) and fills *plugin.
 *  On failure returns non-SG_OK with the reason in `message`. */
typedef SgStatus (*SgPluginEntryFn)(const SgHostApi* host, const SgPlugin** plugin,
                                    SgMessage* message);

#ifdef __cplusplus
} /* extern "C" */
#endif

/*----------------------------------------------------------------------------
 * Frozen layouts: a change here breaks every released plugin.
 *--------------------------------------------------------------------------*/
#ifdef __cplusplus
#define SG_ABI_STATIC_ASSERT static_assert
#else
#define SG_ABI_STATIC_ASSERT _Static_assert
#endif
#define SG_ABI_FROZEN(type, field, offset) \
  SG_ABI_STATIC_ASSERT(offsetof(type, field) == (offset), #type "." #field " moved")

#if UINTPTR_MAX == 0xffffffffffffffffu /* LP64 layouts */
/* End of version 1. */
SG_ABI_FROZEN(SgHostApi, message_set, 8);
SG_ABI_FROZEN(SgHostApi, node_op_type, 24);
SG_ABI_FROZEN(SgHostApi, node_attr_graph, 144);
SG_ABI_FROZEN(SgHostApi, value_name, 152);
SG_ABI_FROZEN(SgHostApi, value_is_graph_output, 224);
SG_ABI_FROZEN(SgHostApi, graph_num_nodes, 232);
SG_ABI_FROZEN(SgHostApi, graph_output, 272);
SG_ABI_FROZEN(SgHostApi, fused_node_set_op, 280);
SG_ABI_FROZEN(SgHostApi, fused_node_add_attr, 296);
SG_ABI_FROZEN(SgHostApi, graph_replace_node, 304);
SG_ABI_FROZEN(SgHostApi, graph_remove_dead_nodes, 312);
SG_ABI_FROZEN(SgHostApi, value_dim_symbol, SG_HOST_API_V1_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgHostApi) == 328, "SgHostApi v2 size");
SG_ABI_FROZEN(SgPatternNode, predicate, 32);
SG_ABI_STATIC_ASSERT(sizeof(SgPatternNode) == 40, "SgPatternNode v1 size");
SG_ABI_STATIC_ASSERT(sizeof(SgPatternEdge) == 16, "SgPatternEdge v1 size");
SG_ABI_FROZEN(SgPatternDesc, edges, 40);
SG_ABI_STATIC_ASSERT(sizeof(SgPatternDesc) == 48, "SgPatternDesc v1 size");
SG_ABI_FROZEN(SgPropertyDesc, pattern, 24);
SG_ABI_FROZEN(SgPropertyDesc, create_selector, 40);
SG_ABI_FROZEN(SgPropertyDesc, create_subgraph_node, 96);
SG_ABI_FROZEN(SgPropertyDesc, filter_reason, SG_PROPERTY_DESC_V2_SIZE);
SG_ABI_STATIC_ASSERT(SG_PROPERTY_DESC_V2_SIZE == 104, "SgPropertyDesc v1 size");
SG_ABI_STATIC_ASSERT(sizeof(SgAttrValue) == 64, "SgAttrValue v1 size");
SG_ABI_STATIC_ASSERT(sizeof(SgOperandDef) == 16, "SgOperandDef v1 size");
SG_ABI_STATIC_ASSERT(sizeof(SgAttrDef) == 72, "SgAttrDef v1 size");
SG_ABI_FROZEN(SgOpDef, attrs, 72);
SG_ABI_FROZEN(SgOpDef, data_parallel, 96);
SG_ABI_STATIC_ASSERT(sizeof(SgOpDef) == 104, "SgOpDef v1 size");
SG_ABI_FROZEN(SgTransformDesc, run, 32);
SG_ABI_STATIC_ASSERT(sizeof(SgTransformDesc) == 40, "SgTransformDesc v1 size");
SG_ABI_FROZEN(SgKernelContext, num_threads, 8);
SG_ABI_STATIC_ASSERT(SG_KERNEL_CONTEXT_V2_SIZE == 12, "SgKernelContext v1 size");
SG_ABI_FROZEN(SgKernelDesc, create, 32);
SG_ABI_FROZEN(SgKernelDesc, run, 64);

SG_ABI_FROZEN(SgDeviceDesc, deallocate, 32);
SG_ABI_STATIC_ASSERT(SG_DEVICE_DESC_V2_SIZE == 40, "SgDeviceDesc v1 size");
SG_ABI_FROZEN(SgPlugin, properties, 40);
SG_ABI_FROZEN(SgPlugin, device, 96);
SG_ABI_FROZEN(SgPlugin, release, 112);

SG_ABI_STATIC_ASSERT(sizeof(SgTensor) == 32, "SgTensor v1 size");
SG_ABI_STATIC_ASSERT(sizeof(SgTensorShape) == 136, "SgTensorShape v1 size");
/* End of version 2: v1 structs grew at their ends only. */
SG_ABI_FROZEN(SgKernelDesc, input_layout, SG_KERNEL_DESC_V1_SIZE);
SG_ABI_FROZEN(SgKernelDesc, run_with_scratch, 96);
SG_ABI_STATIC_ASSERT(SG_KERNEL_DESC_V2_SIZE == 104, "SgKernelDesc v2 size");
SG_ABI_FROZEN(SgLayoutDesc, byte_size, 24);
SG_ABI_STATIC_ASSERT(sizeof(SgLayoutDesc) == 32, "SgLayoutDesc v2 size");
SG_ABI_FROZEN(SgCopyDesc, run, 40);
SG_ABI_STATIC_ASSERT(SG_COPY_DESC_V2_SIZE == 48, "SgCopyDesc v2 size");
SG_ABI_FROZEN(SgPlugin, num_layouts, SG_PLUGIN_V1_SIZE);
SG_ABI_FROZEN(SgPlugin, copies, 144);
SG_ABI_FROZEN(SgPlugin, num_options, 152); /* the v2 struct ended at 152 */
/* Grown within version 2, at its end. */
SG_ABI_STATIC_ASSERT(SG_PROPERTY_DESC_V4_SIZE == 112, "SgPropertyDesc with filter_reason");
/* End of version 3: v2 structs grew at their ends only. */
SG_ABI_FROZEN(SgKernelContext, precision, 16);
SG_ABI_FROZEN(SgKernelContext, option_values, 40);
SG_ABI_STATIC_ASSERT(SG_KERNEL_CONTEXT_V5_SIZE == 48, "SgKernelContext v3 size");
SG_ABI_FROZEN(SgKernelDesc, run_on_queue, SG_KERNEL_DESC_V2_SIZE);
SG_ABI_STATIC_ASSERT(SG_KERNEL_DESC_V3_SIZE == 112, "SgKernelDesc v3 size");
SG_ABI_FROZEN(SgCopyDesc, direction, SG_COPY_DESC_V2_SIZE);
SG_ABI_FROZEN(SgCopyDesc, run_on_queue, 56);
SG_ABI_STATIC_ASSERT(SG_COPY_DESC_V3_SIZE == 64, "SgCopyDesc v3 size");
SG_ABI_FROZEN(SgDeviceDesc, id, SG_DEVICE_DESC_V2_SIZE);
SG_ABI_FROZEN(SgDeviceDesc, description, 48);
SG_ABI_FROZEN(SgDeviceDesc, queue_create, 56);
SG_ABI_FROZEN(SgDeviceDesc, event_elapsed_ms, 120);
SG_ABI_STATIC_ASSERT(SG_DEVICE_DESC_V3_SIZE == 128, "SgDeviceDesc v3 size");
/* Grown within version 4, at its end. */
SG_ABI_FROZEN(SgPropertyDesc, seed_op_types, SG_PROPERTY_DESC_V4_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgPropertyDesc) == 120, "SgPropertyDesc with seed_op_types");
/* End of version 4. */
SG_ABI_STATIC_ASSERT(SG_PLUGIN_V4_SIZE == 152, "SgPlugin v4 size");
/* Version 5. */
SG_ABI_FROZEN(SgPlugin, properties_for, 168);
SG_ABI_STATIC_ASSERT(SG_PLUGIN_V5_SIZE == 176, "SgPlugin v5 size");
SG_ABI_FROZEN(SgKernelDesc, concurrent_requests, SG_KERNEL_DESC_V3_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgKernelDesc) == 120, "SgKernelDesc v5 size");
SG_ABI_FROZEN(SgCopyDesc, concurrent_requests, SG_COPY_DESC_V3_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgCopyDesc) == 72, "SgCopyDesc v5 size");
SG_ABI_FROZEN(SgDeviceDesc, queue_begin_capture, SG_DEVICE_DESC_V3_SIZE);
SG_ABI_FROZEN(SgDeviceDesc, graph_destroy, 152);
SG_ABI_STATIC_ASSERT(SG_DEVICE_DESC_V5_SIZE == 160, "SgDeviceDesc v5 size");
SG_ABI_FROZEN(SgOptionDesc, doc, 32);
SG_ABI_STATIC_ASSERT(sizeof(SgOptionDesc) == 40, "SgOptionDesc v5 size");
/* Version 6. */
SG_ABI_FROZEN(SgKernelContext, device_index, SG_KERNEL_CONTEXT_V5_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgKernelContext) == 56, "SgKernelContext v6 size");
SG_ABI_FROZEN(SgDeviceDesc, num_copies, SG_DEVICE_DESC_V5_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgDeviceDesc) == 176, "SgDeviceDesc v6 size");
SG_ABI_FROZEN(SgPlugin, devices_for, SG_PLUGIN_V5_SIZE);
SG_ABI_STATIC_ASSERT(sizeof(SgPlugin) == 184, "SgPlugin v6 size");
#endif

#endif /* SUBGRAPH_PLUGIN_ABI_H */
