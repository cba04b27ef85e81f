//===- plugins/onednn/backend/region_support.h - Shared pieces of the families -*- C++ -*-===//
//
// Internal to the onednn plugin. What every fusion family shares: the
// plugin's layouts (oneDNN's blocked formats, registered with the host
// through the plugin SDK), the base class of the region kernels (thread
// policy, errors as one line), reading a fused region's body graph (its
// nodes, constants and input positions), turning ONNX activation nodes into
// Activations, and the pattern predicates the families use.
//
// A family's kernel creator reads the body of a region its own property
// proposed. When the body is not what it can run (the pattern matched but a
// constant is not f32, a Clip bound is not a scalar, ...), it throws
// Unsupported; the SDK turns that into SG_UNSUPPORTED, and the host's
// session runs the region's body on the reference backend instead: slower,
// never wrong.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/plugin.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "activation.h"
#include "tensor_format.h"

namespace subgraph::onednn {

namespace sdk = subgraph::sdk;

/// The plugin's layouts for the compute core's formats; the entry point
/// registers them (addLayout) and hands them here once, before any kernel
/// is made.
void setLayouts(const sdk::Layout* blocked16, const sdk::Layout* nhwcBf16);

/// The plugin Layout standing for `format`; null for plain.
const sdk::Layout* layoutOf(Format format);

/// True when the bf16 precision mode is on: the session's plugin option
/// `onednn.precision=bf16`, or, when that is unset, its precision bf16
/// (`run --precision bf16`), both from the kernel context.
bool bf16Mode(const sdk::KernelContext& context);

/// False when the session's plugin option `winograd` is off: fp32 3x3
/// stride-1 convolutions then stay on oneDNN's direct algorithm (for
/// bit-for-bit comparisons with other direct implementations, or to
/// measure the gain).
bool winogradAllowed(const sdk::KernelContext& context);

/// The blocked format of `region`'s activations in the current precision
/// mode: bf16 channels-last in the bf16 mode, except for a region whose
/// result is re-quantized (requantizer), which keeps f32 nChw16c.
Format blockedFormat(const sdk::NodeView& region, const sdk::KernelContext& context);

/// The quantizer that reads `value`, directly or through ops (and regions
/// of ops) that only move or select values, or nullopt.
std::optional<std::string> requantizer(const sdk::ValueView& value);

/// A region the family cannot run after all; the session falls back to
/// the reference backend for it.
using Unsupported = sdk::Unsupported;

/// A fused region's body graph, in the terms the families need.
class RegionBody {
 public:
  /// Reads `region`'s body; throws Unsupported without one.
  explicit RegionBody(const sdk::NodeView& region);
  /// Body nodes in topological order.
  const std::vector<sdk::NodeView>& nodes() const { return nodes_; }
  /// The only node of op `opType`, or nullopt; throws Unsupported if
  /// several.
  std::optional<sdk::NodeView> find(std::string_view opType) const;
  /// The body's one node, for families whose regions are a single op with
  /// one output; otherwise throws Unsupported("a <family> region holds one
  /// <op>").
  const sdk::NodeView& single(std::string_view family, std::string_view op) const;
  /// Position of `value` among the body's inputs (= the region node's
  /// inputs); throws Unsupported if it is not a body input.
  size_t inputIndex(const sdk::ValueView& value) const;
  /// True if `value` is a body input.
  bool isInput(const sdk::ValueView& value) const;
  /// The body's number of outputs.
  size_t numOutputs() const { return numOutputs_; }

 private:
  std::vector<sdk::NodeView> nodes_;
  std::vector<sdk::ValueView> inputs_;
  size_t numOutputs_ = 0;
};

/// True if `value` is present and a constant (an initializer).
bool isConstant(const sdk::ValueView& value);
/// The elements of an f32 constant; throws Unsupported otherwise.
std::vector<float> floatsOf(const sdk::ValueView& value);
/// The value of a one-element f32 constant, or nullopt.
std::optional<float> scalarOf(const sdk::ValueView& value);
/// Number of distinct nodes reading `value` (0 for an absent value).
size_t numUses(const sdk::ValueView& value);

/// The activation an ONNX node computes (Relu, LeakyRelu, Clip with
/// constant bounds, Sigmoid, HardSigmoid, HardSwish, Tanh, and Max or Min
/// of x and a one-element f32 constant), or nullopt.
std::optional<Activation> activationOf(const sdk::NodeView& node);

/// The op types activationOf() understands, as a pattern's "A|B|..." list.
std::string activationOps();

/// Pattern predicates shared by the families.
namespace predicates {
/// A node condition for sdk::OpPattern::where.
using Predicate = std::function<sdk::Decision(const sdk::NodeView&)>;
/// The node is one activationOf() can translate.
Predicate isTranslatableActivation();
/// Both inputs of a binary op have the same f32 shape, every dim static or
/// the same symbol (no broadcasting), so one can be a `sum` post-op of the
/// other. Kernels check the actual dims per shape.
Predicate sameShapes();
/// Some input is a one-element f32 constant (optionally equal to `value`
/// within 1e-6 relative).
Predicate hasScalarConstant(std::optional<float> value = std::nullopt);
/// Every output but the first is unused (BatchNormalization,
/// LayerNormalization statistics).
Predicate onlyFirstOutputUsed();
/// Output 0 has rank `rank`.
Predicate outputRank(size_t rank);
/// Output 0 has one of `ranks` (in increasing order, for the message).
Predicate outputRankIn(std::vector<size_t> ranks);
/// String attribute `name` (or its schema default) equals `value`.
Predicate attrEquals(std::string name, std::string value);
/// Input 0 is f32 of known rank and attribute `axis` (default -1) names
/// its last axis; otherwise no, saying `reason`.
Predicate onlyLastAxis(std::string reason);
/// No DynamicQuantizeLinear or QuantizeLinear reads the node's first
/// output, directly or through ops that only move or select values
/// (Concat, Relu, MaxPool, reshapes, ...), and no region fused earlier holds
/// one. A re-quantized value must round
/// exactly as the reference computes it: a one-ulp difference moves it to
/// another quantization level, and such moves compound layer by layer.
/// `what` names the family's arithmetic in the reason.
Predicate resultNotRequantized(std::string what);
}  // namespace predicates

/// A convolution-like node `op` (Conv, ConvTranspose) whose weights, and
/// bias if any, are constants, with explicit pads and an output of one of
/// `ranks` (4: 2-D; 3: 1-D, which the kernels run as 2-D with H = 1).
sdk::OpPattern convLikePattern(const char* op, std::vector<size_t> ranks = {4});

/// A conv's strides, dilations and pads as 2-D ones (ONNX order: top, left,
/// bottom, right). A 1-D conv (`oneD`) gets H = 1: stride 1, dilation 1 and
/// no pads on H. Throws Unsupported when their lengths do not match.
struct ConvGeometry {
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0};
};
ConvGeometry convGeometryOf(const sdk::NodeView& conv, bool oneD);

/// [N, C, L] as [N, C, 1, L] (the same bytes, for the 2-D kernels); other
/// ranks unchanged.
std::vector<int64_t> as2d(std::span<const int64_t> dims);

/// An inference BatchNormalization a convolution or deconvolution can fold
/// into its weights: constant scale, shift, mean and variance, statistics
/// outputs unused.
sdk::OpPattern foldableBatchNormPattern();

/// A pattern step that is an activation activationOf() can translate (an
/// eltwise post-op of the op before it).
sdk::OpPattern activationPattern();

/// The number of elements of a tensor of `dims`, as a double (a work
/// estimate, not a size).
double elementsOf(std::span<const int64_t> dims);

/// Base class of the region kernels: oneDNN brings its own (OpenMP)
/// threads, sized per run from the session's (KernelContext::numThreads)
/// and the run's work.
class RegionKernel : public sdk::Kernel {
 public:
  explicit RegionKernel(const sdk::KernelContext& context) : threads_(context.numThreads) {}

  /// Multiply-adds that one run on inputs of `dims` does, or for a
  /// memory-bound op their equivalent (kMacsPerElement per input element,
  /// the default). Families that compute more per element override it.
  virtual double workOf(std::span<const std::span<const int64_t>> dims) const;

  /// The OpenMP team for a run of `work` multiply-adds: the session's
  /// threads, fewer when a share would be under kMacsPerThread.
  int teamFor(double work) const;

  /// Work one thread must have before another one is woken for it: waking
  /// and joining an OpenMP team costs about as much as this on one core,
  /// and on a region of a few microseconds (an LSTM's weight concat, a
  /// speech model's 4-frame conv) the team is most of the run.
  static constexpr double kMacsPerThread = 1 << 20;
  /// The default work of one input element (memory-bound ops).
  static constexpr double kMacsPerElement = 16;

 protected:
  /// Runs `body` with the OpenMP team sized for a run on `inputs` (every
  /// kernel resize, scratchBytes and run goes through here), turning
  /// oneDNN's exceptions into an sdk::Error that says so.
  template <typename Body>
  decltype(auto) guarded(const std::vector<sdk::Shape>& inputs, Body&& body) const {
    return guardedWith(teamForInputs(inputs), std::forward<Body>(body));
  }
  template <typename Body>
  decltype(auto) guarded(std::span<const sdk::Tensor> inputs, Body&& body) const {
    return guardedWith(teamForInputs(inputs), std::forward<Body>(body));
  }

 private:
  template <typename Body>
  decltype(auto) guardedWith(int team, Body&& body) const {
    // oneDNN fixes a primitive's thread count when it creates it (later
    // runs spawn that many OpenMP threads whatever the caller's setting),
    // and primitives are created when a shape is first prepared; the team
    // is a function of the shape, so creation and runs agree.
    useThreads(team);
    try {
      return body();
    } catch (const dnnl::error& e) {
      throw sdk::Error(std::string("oneDNN cannot run it: ") + e.what());
    } catch (const std::invalid_argument& e) {
      throw sdk::Error(e.what(), SG_INVALID_ARGUMENT);
    }
  }

  // The team for a run on `inputs` (shapes or tensors): their dims are
  // gathered in a per-thread buffer, not a new vector per run.
  template <typename Inputs>
  int teamForInputs(const Inputs& inputs) const {
    thread_local std::vector<std::span<const int64_t>> dims;
    dims.clear();
    for (const auto& in : inputs) dims.push_back(dimsOf(in));
    return teamFor(workOf(dims));
  }
  static std::span<const int64_t> dimsOf(const sdk::Shape& s) { return s.dims; }
  static std::span<const int64_t> dimsOf(const sdk::Tensor& t) { return t.dims(); }

  static void useThreads(int team);
  int threads_;
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
  using RegionKernel::RegionKernel;
  const sdk::Layout* inputLayout(size_t i) const override {
    return i == input_ ? layoutOf(core_->spec().format) : nullptr;
  }
  const sdk::Layout* outputLayout(size_t) const override { return layoutOf(core_->spec().format); }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{
          {sdk::DataType::kFloat32, core_->outputDims(inputs[input_].dims)}};
    });
  }
  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return core_->prepare(inputs[input_].dims); });
  }
  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      core_->execute(inputs[input_].dims(), inputs[input_].raw(), outputs[0].raw(), scratch.data());
    });
  }

 protected:
  std::unique_ptr<Core> core_;
  size_t input_ = 0;
};

/// The kernel creator of a family whose region kernel is constructed from
/// the region node and the session's context. What the kernel cannot run
/// (Unsupported, std::invalid_argument from the compute core, oneDNN
/// refusing a primitive) declines the region, and the host runs its body on
/// the reference backend; anything else is an error naming the region.
template <class Kernel>
sdk::KernelCreator creatorOf() {
  return [](const sdk::NodeView& region,
            const sdk::KernelContext& context) -> std::unique_ptr<sdk::Kernel> {
    try {
      return std::make_unique<Kernel>(region, context);
    } catch (const std::invalid_argument& e) {
      throw Unsupported(e.what());
    } catch (const dnnl::error& e) {
      throw Unsupported(std::string("oneDNN: ") + e.what());
    }
  };
}

/// A family: its properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
struct Family {
  std::vector<std::unique_ptr<sdk::SubgraphProperty>> properties;
  sdk::KernelCreator creator;
};

}  // namespace subgraph::onednn
