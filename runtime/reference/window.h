//===- runtime/reference/window.h - Sliding-window geometry -----*- C++ -*-===//
//
// Internal to the reference backend: the attribute handling and output-size
// arithmetic shared by Conv, ConvTranspose and the pooling ops (kernel_shape,
// strides, dilations, pads, auto_pad, ceil_mode), following the ONNX spec
// formulas so every window op agrees on padding.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/support/status.h"

namespace subgraph::runtime::reference {

/// Window attributes of one node, read once at kernel creation.
struct WindowAttrs {
  std::string autoPad = "NOTSET";    ///< NOTSET, SAME_UPPER, SAME_LOWER, VALID.
  std::vector<int64_t> kernelShape;  ///< Empty: taken from the weights.
  std::vector<int64_t> strides;      ///< Empty: all 1.
  std::vector<int64_t> dilations;    ///< Empty: all 1.
  std::vector<int64_t> pads;         ///< Empty: all 0; else begins then ends.
  bool ceilMode = false;

  /// Reads the attributes; throws `Error` naming the node for an unknown
  /// auto_pad or a non-positive stride, dilation or kernel size.
  static WindowAttrs read(const Node& node);
};

/// Resolved geometry for concrete input dims.
struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> padBegin, padEnd;
  std::vector<int64_t> inDims, outDims;  ///< Spatial dims only.

  int64_t outSize() const;
  int64_t kernelSize() const;
};

/// Resolves `attrs` for spatial input dims `in` and kernel `kernel` (from
/// the attribute or the weights). Fails with a message (no node prefix)
/// when ranks disagree or the window does not fit.
Status resolveWindow(const WindowAttrs& attrs, const std::vector<int64_t>& in,
                     const std::vector<int64_t>& kernel, WindowGeometry& out);

/// The bytes of a scratch buffer of `factors` multiplied together (element
/// counts, then the element size), or an error naming `what` when the
/// product passes int64: model-given kernels and output sizes reach it
/// before the memory plan can refuse them.
StatusOr<size_t> scratchBytes(std::initializer_list<int64_t> factors,
                              std::initializer_list<const std::vector<int64_t>*> dims,
                              const char* what);

}  // namespace subgraph::runtime::reference
