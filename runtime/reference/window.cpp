//===- runtime/reference/window.cpp - Sliding-window geometry -------------===//
//
// See runtime/reference/window.h. Output size per spatial axis, with
// effective kernel ek = (k - 1) * d + 1:
//   NOTSET/VALID: floor((i + pb + pe - ek) / s) + 1 (ceil with ceil_mode,
//                 dropping a last window that would start in the end pad);
//   SAME_*:       ceil(i / s), total pad max(0, (o - 1) * s + ek - i), the
//                 odd unit going to the end (UPPER) or the beginning (LOWER).
//
//===----------------------------------------------------------------------===//
#include "reference/window.h"

#include <algorithm>

#include "reference/kernel_util.h"

namespace subgraph::runtime::reference {

WindowAttrs WindowAttrs::read(const Node& node) {
  WindowAttrs a;
  a.autoPad = node.getString("auto_pad", "NOTSET");
  if (a.autoPad.empty()) a.autoPad = "NOTSET";
  if (a.autoPad != "NOTSET" && a.autoPad != "SAME_UPPER" && a.autoPad != "SAME_LOWER" &&
      a.autoPad != "VALID")
    throwNodeError(node, "unknown auto_pad '" + a.autoPad + "'");
  a.kernelShape = node.getInts("kernel_shape");
  a.strides = node.getInts("strides");
  a.dilations = node.getInts("dilations");
  a.pads = node.getInts("pads");
  a.ceilMode = node.getInt("ceil_mode", 0) != 0;
  for (int64_t v : a.kernelShape)
    if (v <= 0)
      throwNodeError(node, "kernel_shape must be positive, got " + dimsToString(a.kernelShape));
  for (int64_t v : a.strides)
    if (v <= 0) throwNodeError(node, "strides must be positive, got " + dimsToString(a.strides));
  for (int64_t v : a.dilations)
    if (v <= 0)
      throwNodeError(node, "dilations must be positive, got " + dimsToString(a.dilations));
  for (int64_t v : a.pads)
    if (v < 0) throwNodeError(node, "pads must not be negative, got " + dimsToString(a.pads));
  return a;
}

int64_t WindowGeometry::outSize() const {
  int64_t n = 1;
  for (int64_t d : outDims) n *= d;
  return n;
}

int64_t WindowGeometry::kernelSize() const {
  int64_t n = 1;
  for (int64_t d : kernel) n *= d;
  return n;
}

Status resolveWindow(const WindowAttrs& attrs, const std::vector<int64_t>& in,
                     const std::vector<int64_t>& kernel, WindowGeometry& g) {
  const size_t rank = in.size();
  auto check = [&](const std::vector<int64_t>& v, size_t want, const char* what) {
    return v.empty() || v.size() == want
               ? Status::ok()
               : Status::invalid(std::string(what) + " has " + std::to_string(v.size()) +
                                 " entries for " + std::to_string(rank) + " spatial dims");
  };
  if (kernel.size() != rank)
    return Status::invalid("kernel has " + std::to_string(kernel.size()) + " dims for " +
                           std::to_string(rank) + " spatial dims");
  SUBGRAPH_RETURN_IF_ERROR(check(attrs.strides, rank, "strides"));
  SUBGRAPH_RETURN_IF_ERROR(check(attrs.dilations, rank, "dilations"));
  SUBGRAPH_RETURN_IF_ERROR(check(attrs.pads, 2 * rank, "pads"));
  g.kernel = kernel;
  g.inDims = in;
  g.strides = attrs.strides.empty() ? std::vector<int64_t>(rank, 1) : attrs.strides;
  g.dilations = attrs.dilations.empty() ? std::vector<int64_t>(rank, 1) : attrs.dilations;
  g.padBegin.assign(rank, 0);
  g.padEnd.assign(rank, 0);
  g.outDims.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    int64_t ek = (kernel[i] - 1) * g.dilations[i] + 1;
    int64_t s = g.strides[i];
    if (attrs.autoPad == "SAME_UPPER" || attrs.autoPad == "SAME_LOWER") {
      int64_t o = (in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (o - 1) * s + ek - in[i]);
      int64_t small = total / 2, large = total - total / 2;
      g.padBegin[i] = attrs.autoPad == "SAME_UPPER" ? small : large;
      g.padEnd[i] = attrs.autoPad == "SAME_UPPER" ? large : small;
      g.outDims[i] = o;
      continue;
    }
    if (attrs.autoPad == "NOTSET" && !attrs.pads.empty()) {
      g.padBegin[i] = attrs.pads[i];
      g.padEnd[i] = attrs.pads[i + rank];
    }
    int64_t span = in[i] + g.padBegin[i] + g.padEnd[i] - ek;
    if (span < 0)
      return Status::invalid("window of " + std::to_string(ek) + " does not fit spatial dim " +
                             std::to_string(i) + " of size " + std::to_string(in[i]) +
                             " plus padding");
    int64_t o = attrs.ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
    if (attrs.ceilMode && (o - 1) * s >= in[i] + g.padBegin[i]) --o;
    g.outDims[i] = o;
  }
  return Status::ok();
}

}  // namespace subgraph::runtime::reference
