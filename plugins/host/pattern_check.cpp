//===- plugins/host/pattern_check.cpp - A plugin's patterns and seeds -----===//
//
// See pattern_check.h. Op names are checked where a plugin declares them:
// a pattern node or a seed list naming an op that no registry knows could
// never match, which would make a plugin silently fuse nothing.
//
//===----------------------------------------------------------------------===//
#include "pattern_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>
#include <utility>

#include "host_api.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/plugins/crash_handler.h"
#include "subgraph/support/did_you_mean.h"

namespace subgraph::plugins::adapters {
namespace {

using partition::Decision;

std::vector<std::string> splitOps(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t bar = s.find('|', start);
    if (bar == std::string::npos) bar = s.size();
    if (bar > start) out.push_back(s.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

// What an MXNet selector calls the ops that ONNX names otherwise.
std::string_view mxnetEquivalent(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"Convolution", "Conv"},
      {"Deconvolution", "ConvTranspose"},
      {"FullyConnected", "Gemm or MatMul"},
      {"BatchNorm", "BatchNormalization"},
      {"LayerNorm", "LayerNormalization"},
      {"Activation", "Relu, Sigmoid or Tanh"},
      {"LeakyReLU", "LeakyRelu"},
      {"Pooling", "MaxPool or AveragePool"},
      {"elemwise_add", "Add"},
      {"broadcast_add", "Add"},
      {"elemwise_mul", "Mul"},
      {"SoftmaxOutput", "Softmax"},
      {"softmax", "Softmax"},
      {"SliceChannel", "Split"},
      {"Reshape", "Reshape"},
  };
  for (const auto& [mxnet, onnx] : kNames)
    if (mxnet == name) return onnx;
  return {};
}

// "" when `op` names an op the registry knows (a plain name is an ONNX op; a
// dotted one, a plugin-defined op, is not checked here), else why not, with
// the MXNet equivalent or the nearest ONNX names.
std::string unknownOp(std::string_view op) {
  if (op.find('.') != std::string_view::npos || OpRegistry::global().lookup("", op)) return {};
  std::string why = "'" + std::string(op) + "', which is not an ONNX op";
  if (std::string_view onnx = mxnetEquivalent(op); !onnx.empty())
    return why + " (MXNet's name; ONNX calls it " + std::string(onnx) + ")";
  std::vector<std::string> near;
  for (const OpSchema* schema : OpRegistry::global().schemas())
    if (schema->domain.empty() && editDistance(op, schema->name) <= 2) near.push_back(schema->name);
  if (!near.empty()) why += " (did you mean " + fmt::format("{}", fmt::join(near, " or ")) + "?)";
  return why;
}

}  // namespace

StatusOr<partition::Pattern> buildPattern(const SgPatternDesc& desc,
                                          std::shared_ptr<const LoadedPlugin> plugin) {
  if (desc.abi_version < SG_PLUGIN_ABI_MIN_VERSION || desc.abi_version > SG_PLUGIN_ABI_VERSION ||
      desc.struct_size < sizeof(SgPatternDesc))
    return Status::invalid("pattern has plugin ABI version " + std::to_string(desc.abi_version) +
                           " or a short struct_size; this subgraph's is " +
                           std::to_string(SG_PLUGIN_ABI_VERSION));
  if (desc.num_nodes == 0 || !desc.nodes) return Status::invalid("pattern has no nodes");
  if (desc.num_edges && !desc.edges) return Status::invalid("pattern has a null edge array");
  partition::PatternBuilder builder(desc.name ? desc.name : "pattern");
  for (size_t i = 0; i < desc.num_nodes; ++i) {
    const SgPatternNode& n = desc.nodes[i];
    if (n.struct_size < sizeof(SgPatternNode) || !n.op_types || !*n.op_types)
      return Status::invalid("pattern node " + std::to_string(i) + " has no op types");
    std::string ops = n.op_types;
    if (ops != "*")
      for (const std::string& op : splitOps(ops))
        if (std::string why = unknownOp(op); !why.empty())
          return Status::invalid("pattern node " + std::to_string(i) + " names op " + why +
                                 ", so it can never match");
    partition::OpMatcher m = ops == "*" ? partition::OpMatcher::anyOp()
                             : ops.find('|') != std::string::npos
                                 ? partition::OpMatcher::anyOf(splitOps(ops))
                                 : partition::OpMatcher(ops);
    if (n.flags & SG_PATTERN_OPTIONAL) m.optional();
    if (n.flags & SG_PATTERN_ONE_USE) m.where(partition::predicates::hasOneUse());
    if (n.flags & SG_PATTERN_STATIC_SHAPES) m.where(partition::predicates::staticShapes());
    if (n.flags & SG_PATTERN_NO_ZERO_DIMS) m.where(partition::predicates::noZeroSizeDims());
    if (n.flags & SG_PATTERN_USES_INSIDE) m.usesStayInside();
    if (n.flags & SG_PATTERN_ONLY_FEEDS_NEXT) m.onlyFeedsNext();
    for (uint32_t bit = 0; bit < 32; ++bit)
      if (n.constant_inputs & (1u << bit)) m.where(partition::predicates::inputIsConstant(bit));
    if (n.predicate && plugin) {
      auto fn = n.predicate;
      void* user = n.predicate_user;
      m.where([plugin, fn, user](const Node& node) -> Decision {
        SgMessage msg;
        int32_t accept = 0;
        PluginCallScope scope(plugin->name(), "pattern predicate", &node.name());
        if (fn(user, host::toC(&node), &accept, &msg) != SG_OK)
          return Decision::no("plugin '" + plugin->name() +
                              "' predicate failed: " + host::messageOr(msg, "no message"));
        return accept ? Decision::yes() : Decision::no(std::move(msg.text));
      });
    }
    builder.add(std::move(m));
  }
  for (size_t e = 0; e < desc.num_edges; ++e) {
    const SgPatternEdge& edge = desc.edges[e];
    if (edge.producer >= desc.num_nodes || edge.consumer >= desc.num_nodes)
      return Status::invalid("pattern edge " + std::to_string(e) + " names a missing node");
    builder.connect(edge.producer, edge.consumer, edge.input, edge.output);
  }
  return builder.build();
}

StatusOr<std::vector<std::string>> seedOpTypes(const SgPropertyDesc& desc) {
  if (desc.struct_size <= SG_PROPERTY_DESC_V4_SIZE || !desc.seed_op_types)
    return std::vector<std::string>{};
  if (desc.pattern)
    return Status::invalid(
        "sets seed_op_types, which only a selector property takes "
        "(a pattern's seeds are its anchor's ops)");
  std::vector<std::string> ops = splitOps(desc.seed_op_types);
  if (ops.empty())
    return Status::invalid(
        "has an empty seed_op_types, so nothing could seed it "
        "(NULL offers every node)");
  if (ops.size() == 1 && ops[0] == "*") return std::vector<std::string>{};
  for (const std::string& op : ops)
    if (std::string why = unknownOp(op); !why.empty())
      return Status::invalid("seed_op_types names op " + why + ", so it can never seed a region");
  return ops;
}

}  // namespace subgraph::plugins::adapters
