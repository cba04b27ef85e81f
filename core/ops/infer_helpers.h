//===- core/ops/infer_helpers.h - Shared pieces of per-op inference -*- C++ -*-===//
//
// Small helpers the infer_*.cpp and verify_*.cpp files share: axis
// normalization, reading integer lists that ONNX passes either as an input
// (newer opsets) or an attribute (older ones), and dim arithmetic that keeps
// symbolic dims where the result is known. Private to core/ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/types.h"
#include "subgraph/support/checked_int.h"
#include "subgraph/support/status.h"

namespace subgraph::ops {

/// "Conv node 'conv1'": how messages name a node.
std::string nodeLabel(const Node& node);
/// Status::invalid("<op> node '<name>': <message>"), for verify functions.
Status nodeError(const Node& node, const std::string& message);

/// Maps `axis` from [-rank, rank) to [0, rank) (with `inclusive`, from
/// [-rank, rank] to [0, rank], as Flatten needs); an axis out of range
/// fails naming the node and `what`.
StatusOr<int64_t> normalizeAxis(const InferenceContext& ctx, int64_t axis, int64_t rank,
                                std::string_view what, bool inclusive = false);
/// Normalizes a list of axes and rejects duplicates.
StatusOr<std::vector<int64_t>> normalizeAxes(const InferenceContext& ctx,
                                             const std::vector<int64_t>& axes, int64_t rank,
                                             std::string_view what, bool inclusive = false);

/// The integer elements of input `i` when they are all known (constant data,
/// or a tracked shape value with only known elements).
std::optional<std::vector<int64_t>> constantInts(const InferenceContext& ctx, size_t i);

/// An integer list that an op takes as input `input` in new opsets and as
/// attribute `attr` in old ones.
struct IntListArg {
  enum class State {
    kAbsent,   ///< Neither the input nor the attribute is given.
    kUnknown,  ///< Given as an input whose values are not known statically.
    kKnown,    ///< Known: `values` holds them.
  };
  State state = State::kAbsent;
  std::vector<int64_t> values;
};
IntListArg intListArg(const InferenceContext& ctx, size_t input, std::string_view attr);

/// a * b, or nullopt if it overflows int64 (dims from a hostile file can be
/// huge).
std::optional<int64_t> checkedMul(int64_t a, int64_t b);

/// Checked int64 size arithmetic (subgraph/support/checked_int.h), shared
/// with the runtime's kernels.
using ::subgraph::CheckedInt;

/// Product of dims: static if all are static, else unknown (a single
/// non-static dim times static 1s is that dim).
Dim dimProduct(std::span<const Dim> dims);
/// The shape of input `i` if its rank is known.
const Shape* inputShape(const InferenceContext& ctx, size_t i);
/// A shape of `rank` unknown dims.
Shape unknownShape(size_t rank);

/// Conv's inference with X, W and the optional bias at the given input
/// positions and the given output element type (QLinearConv, ConvInteger).
Status inferConvLike(InferenceContext& ctx, size_t xInput, size_t wInput,
                     std::optional<size_t> bInput, DataType dtype);
/// MatMul's inference with A and B at the given input positions and the
/// given output element type (QLinearMatMul, MatMulInteger).
Status inferMatMulLike(InferenceContext& ctx, size_t aInput, size_t bInput, DataType dtype);

/// Human list "[1, 2, 3]" for messages.
std::string intsToString(const std::vector<int64_t>& v);

}  // namespace subgraph::ops
