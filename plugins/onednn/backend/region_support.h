//===- plugins/onednn/backend/region_support.h - Shared pieces of the families -*- C++ -*-===//
//
// Internal to the onednn backend. What every fusion family shares: the
// runtime Layout objects of the compute core's formats, the base class of
// the region kernels (thread policy, errors as one line), reading a fused
// region's body graph (its nodes, constants and input positions), turning
// ONNX activation nodes into Activations, and the selector predicates the
// families use.
//
// A family's kernel creator reads the body of a region its own property
// proposed. When the body is not what it can run (the pattern matched but a
// constant is not f32, a Clip bound is not a scalar, ...), it throws
// Unsupported; the creator turns that into kUnsupported, and the session
// runs the region's body on the reference backend instead: slower, never
// wrong.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "activation.h"
#include "subgraph/ir/graph.h"
#include "subgraph/partition/pattern_selector.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/runtime/kernel.h"
#include "tensor_format.h"

namespace subgraph::onednn {

/// The runtime Layout standing for `format`; null for plain.
const runtime::Layout* layoutOf(Format format);

/// True when the bf16 precision mode is on: $SUBGRAPH_ONEDNN_PRECISION=bf16,
/// or, when that is unset, $SUBGRAPH_PRECISION=bf16 (`run --precision bf16`).
bool bf16Mode();

/// False when $SUBGRAPH_ONEDNN_WINOGRAD is 0 or off: fp32 3x3 stride-1
/// convolutions then stay on oneDNN's direct algorithm (for bit-for-bit
/// comparisons with other direct implementations, or to measure the gain).
bool winogradAllowed();

/// The blocked format activations use in the current precision mode.
Format blockedFormat();

/// A region the family cannot run after all; the session falls back to
/// the reference backend for it.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A fused region's body graph, in the terms the families need.
class RegionBody {
 public:
  /// Reads `region`'s "body" attribute; throws Unsupported without one.
  explicit RegionBody(const Node& region);
  /// Body nodes in topological order.
  const std::vector<Node*>& nodes() const { return nodes_; }
  /// The only node of op `opType`, or null; throws Unsupported if several.
  const Node* find(std::string_view opType) const;
  /// The body's one node, for families whose regions are a single op with
  /// one output; otherwise throws Unsupported("a <family> region holds one
  /// <op>").
  const Node& single(std::string_view family, std::string_view op) const;
  /// Position of `value` among the body's inputs (= the region node's
  /// inputs); throws Unsupported if it is not a body input.
  size_t inputIndex(const Value* value) const;
  /// True if `value` is a body input.
  bool isInput(const Value* value) const;
  /// The body's number of outputs.
  size_t numOutputs() const { return graph_->outputs().size(); }

 private:
  std::shared_ptr<Graph> graph_;
  std::vector<Node*> nodes_;
};

/// The constant (initializer) data of `value`, or null.
const Tensor* constantOf(const Value* value);
/// The elements of an f32 constant; throws Unsupported otherwise.
std::vector<float> floatsOf(const Value* value);
/// The value of a one-element f32 constant, or nullopt.
std::optional<float> scalarOf(const Value* value);

/// The activation an ONNX node computes (Relu, LeakyRelu, Clip with
/// constant bounds, Sigmoid, HardSigmoid, HardSwish, Tanh), or nullopt.
std::optional<Activation> activationOf(const Node& node);

/// The op types activationOf() understands.
const std::vector<std::string>& activationOps();

/// Selector predicates shared by the families.
namespace predicates {
/// The node is one activationOf() can translate.
partition::NodePredicate isTranslatableActivation();
/// Both inputs of a binary op have the same f32 shape, every dim static or
/// the same symbol (no broadcasting), so one can be a `sum` post-op of the
/// other. Kernels check the actual dims per shape.
partition::NodePredicate sameShapes();
/// Some input is a one-element f32 constant (optionally equal to `value`
/// within 1e-6 relative).
partition::NodePredicate hasScalarConstant(std::optional<float> value = std::nullopt);
/// Every output but the first is unused (BatchNormalization,
/// LayerNormalization statistics).
partition::NodePredicate onlyFirstOutputUsed();
}  // namespace predicates

/// An inference BatchNormalization a convolution or deconvolution can fold
/// into its weights: constant scale, shift, mean and variance, statistics
/// outputs unused.
partition::OpMatcher foldableBatchNormMatcher();

/// The pattern `builder` describes; throws Error if it is malformed (a bug
/// in the family, caught by its tests).
partition::Pattern buildPattern(const partition::PatternBuilder& builder);

/// Base class of the region kernels: oneDNN brings its own (OpenMP) threads,
/// and errors become one line naming the region.
class RegionKernel : public runtime::Kernel {
 public:
  /// oneDNN runs on OpenMP: the session must not run other kernels beside.
  bool usesOwnThreads() const override { return true; }

 protected:
  /// Runs `body` with the OpenMP team sized to the session (every kernel
  /// resize() and run() goes through here), turning oneDNN's and the core's
  /// exceptions into a status.
  template <typename Context, typename Body>
  static Status guarded(Context& ctx, Body&& body) {
    try {
      // resize() creates the primitives, and oneDNN fixes a primitive's
      // thread count when it creates it (later runs spawn that many
      // OpenMP threads whatever the caller's setting), so both resize()
      // and run() size the team first.
      useSessionThreads();
      body();
      return Status::ok();
    } catch (const dnnl::error& e) {
      return ctx.fail(std::string("oneDNN cannot run it: ") + e.what());
    } catch (const std::exception& e) {
      return ctx.fail(e.what());
    }
  }

 private:
  /// Sizes the OpenMP team to the session's oneTBB arena (the thread
  /// policy in dnnl_context.h).
  static void useSessionThreads();
};

/// The region kernel of a family whose compute-core object `Core` reads one
/// activation (region input `input_`) and writes one, both in
/// `core_->spec().format`: pooling, resize, deconvolution. `Core` has
/// outputDims(dims), prepare(dims) -> scratch bytes and
/// execute(dims, src, dst, scratch). The family's constructor sets core_
/// and input_.
template <class Core>
class UnaryRegionKernel : public RegionKernel {
 public:
  const runtime::Layout* inputLayout(size_t i) const override {
    return i == input_ ? layoutOf(core_->spec().format) : nullptr;
  }
  const runtime::Layout* outputLayout(size_t) const override {
    return layoutOf(core_->spec().format);
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      const std::vector<int64_t>& in = ctx.inputDesc(input_).dims;
      runtime::TensorDesc out;
      out.dims = core_->outputDims(in);
      out.layout = layoutOf(core_->spec().format);
      ctx.requestScratch(core_->prepare(in));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      core_->execute(ctx.input(input_).dims(), ctx.input(input_).raw(), ctx.output(0).raw(),
                     ctx.scratch().data());
    });
  }

 protected:
  std::unique_ptr<Core> core_;
  size_t input_ = 0;
};

/// Wraps a family's kernel factory as a KernelCreator: Unsupported and
/// std::invalid_argument become kUnsupported (the reference runs the
/// region), anything else an error naming the region.
runtime::KernelCreator makeCreator(
    std::function<std::unique_ptr<runtime::Kernel>(const Node& region)> factory);

/// makeCreator for a family whose region kernel is constructed from the
/// region node alone, which is every family: one line per family instead
/// of the same lambda seven times.
template <class RegionKernel>
runtime::KernelCreator creatorOf() {
  return makeCreator([](const Node& region) -> std::unique_ptr<runtime::Kernel> {
    return std::make_unique<RegionKernel>(region);
  });
}

}  // namespace subgraph::onednn
