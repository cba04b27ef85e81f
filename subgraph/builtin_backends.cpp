//===- subgraph/builtin_backends.cpp - Backends every build has -----------===//
//
// In-process backends that need no plugin, selectable by name from the CLI
// and tests: nothing but registrations, one pattern each. They also serve as
// the reference workload of the partition benchmark and the resnet50
// acceptance check (53 Conv+BatchNormalization regions).
//
//===----------------------------------------------------------------------===//
#include <mutex>

#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/pattern_selector.h"

namespace subgraph::partition {
namespace {

// Folding BatchNormalization into a convolution needs its running
// statistics to be constants, which holds only for inference.
PropertyOptions inferenceOptions() {
  PropertyOptions options;
  options.inferenceOnly = true;
  return options;
}

std::unique_ptr<SubgraphProperty> convBnProperty() {
  return std::make_unique<PatternProperty>(
      "conv_bn", Pattern::chain("conv_bn", {"Conv", "BatchNormalization"}), inferenceOptions());
}

std::unique_ptr<SubgraphProperty> convBnReluProperty() {
  return std::make_unique<PatternProperty>(
      "conv_bn_relu",
      Pattern::chain("conv_bn_relu", {"Conv", "BatchNormalization", OpMatcher("Relu").optional()}),
      inferenceOptions());
}

std::unique_ptr<SubgraphProperty> convAddReluProperty() {
  // The residual is the Add's other input, from anywhere outside.
  PatternBuilder builder("conv_add_relu");
  size_t conv = builder.add("Conv");
  size_t add = builder.add("Add");
  size_t relu = builder.add("Relu");
  builder.connect(conv, add).connect(add, relu, 0);
  return std::make_unique<PatternProperty>("conv_add_relu", builder.build().value());
}

}  // namespace

void registerBuiltinBackends() {
  static std::once_flag once;
  std::call_once(once, [] {
    BackendRegistry& registry = BackendRegistry::global();
    throwIfError(registry.registerProperty("convbn", convBnProperty));
    throwIfError(registry.registerProperty("convbnrelu", convBnReluProperty));
    throwIfError(registry.registerProperty("convaddrelu", convAddReluProperty));
  });
}

}  // namespace subgraph::partition
