//===- plugins/onednn/kernels/index_program.h - Integer index math -*- C++ -*-===//
//
// The small integer programs exporters leave beside the float compute:
// RoBERTa's position ids (Equal, Not, Cast, CumSum, Mul, Add on the token
// ids), token-type ids gathered from a buffer (GatherElements, Expand), a
// causal mask's comparisons. A few hundred elements each, so a program runs
// as plain loops on the calling thread, every value held as int64 and
// narrowed to its own type (bool, int32, int64) after each step, which
// gives ONNX's wrapping integer arithmetic exactly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace subgraph::onednn {

/// The steps an index program takes; ONNX's ops of those names.
enum class IndexOp {
  kEqual,
  kLess,
  kGreater,
  kNot,
  kAnd,
  kOr,
  kCast,
  kAdd,
  kSub,
  kMul,
  kWhere,
  kCumSum,
  kExpand,
  kGatherElements,
};

/// The element types a program's values have.
enum class IndexType { kBool, kInt32, kInt64 };

/// One step: `op` of the values `inputs` into value `output`. CumSum's
/// data is inputs[0] (its axis is `axis`, not an input); Expand reads
/// inputs[0] and takes the output's dims.
struct IndexStep {
  IndexOp op = IndexOp::kAdd;
  std::vector<int> inputs;
  int output = 0;
  int64_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
};

/// A program over values with static dims: some are its inputs, some
/// constants, the rest computed by its steps in order.
class IndexProgram {
 public:
  /// Adds a value of `dims` and `type`; returns its id.
  int addValue(std::vector<int64_t> dims, IndexType type);
  /// Makes value `id` a constant holding `elements` (one per element).
  void setConstant(int id, std::vector<int64_t> elements);
  /// Appends a step; throws std::invalid_argument when its dims do not fit
  /// the op (a broadcast that does not hold, an axis out of range).
  void addStep(IndexStep step);
  /// Declares value `id` the next program input (read from the caller).
  void addInput(int id) { inputs_.push_back(id); }
  /// Declares value `id` the next program output (written to the caller).
  void addOutput(int id) { outputs_.push_back(id); }

  /// The dims of program input `i`, which a run's input must have.
  const std::vector<int64_t>& inputDims(size_t i) const { return dims_[inputs_[i]]; }
  /// The dims of program output `i`.
  const std::vector<int64_t>& outputDims(size_t i) const { return dims_[outputs_[i]]; }
  /// The type of program output `i`.
  IndexType outputType(size_t i) const { return types_[outputs_[i]]; }

  /// Runs the program: `inputs[i]` holds program input i in its type,
  /// `outputs[i]` receives output i in its. Throws std::invalid_argument
  /// for a GatherElements index out of range.
  void run(std::span<const void* const> inputs, std::span<void* const> outputs) const;

 private:
  void runStep(const IndexStep& step, std::vector<std::vector<int64_t>>& values) const;

  std::vector<std::vector<int64_t>> dims_;
  std::vector<IndexType> types_;
  std::vector<std::vector<int64_t>> constants_;
  std::vector<IndexStep> steps_;
  std::vector<int> inputs_, outputs_;
};

}  // namespace subgraph::onednn
