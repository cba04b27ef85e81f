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
#include <initializer_list>
#include <limits>
#include <string>

#include "reference/kernel_util.h"
#include "subgraph/support/checked_int.h"

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

namespace {

// Model-given sizes meet here (kernel 2^62, dilation 2^62, pads near
// INT64_MAX): the formulas run in 128 bits, and a result past int64 is an
// error, not a wrapped size.
__extension__ typedef __int128 Wide;

bool fitsInt64(Wide v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

Status resolveAxis(const WindowAttrs& attrs, size_t i, size_t rank, WindowGeometry& g) {
  const Wide in = g.inDims[i], s = g.strides[i];
  const Wide ek = (Wide{g.kernel[i]} - 1) * g.dilations[i] + 1;
  if (!fitsInt64(ek) || s < 1)
    return Status::invalid("the window of kernel " + std::to_string(g.kernel[i]) +
                           " with dilation " + std::to_string(g.dilations[i]) + " and stride " +
                           std::to_string(g.strides[i]) + " on spatial dim " + std::to_string(i) +
                           " does not fit in int64");
  if (attrs.autoPad == "SAME_UPPER" || attrs.autoPad == "SAME_LOWER") {
    const Wide o = (in + s - 1) / s;
    const Wide total = std::max<Wide>(0, (o - 1) * s + ek - in);
    const Wide small = total / 2, large = total - total / 2;
    if (!fitsInt64(total)) return Status::invalid("SAME padding overflows int64");
    g.padBegin[i] = static_cast<int64_t>(attrs.autoPad == "SAME_UPPER" ? small : large);
    g.padEnd[i] = static_cast<int64_t>(attrs.autoPad == "SAME_UPPER" ? large : small);
    g.outDims[i] = static_cast<int64_t>(o);
    return Status::ok();
  }
  if (attrs.autoPad == "NOTSET" && !attrs.pads.empty()) {
    g.padBegin[i] = attrs.pads[i];
    g.padEnd[i] = attrs.pads[i + rank];
  }
  const Wide span = in + g.padBegin[i] + g.padEnd[i] - ek;
  if (span < 0)
    return Status::invalid("window of " + std::to_string(static_cast<int64_t>(ek)) +
                           " does not fit spatial dim " + std::to_string(i) + " of size " +
                           std::to_string(g.inDims[i]) + " plus padding");
  Wide o = attrs.ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
  if (attrs.ceilMode && (o - 1) * s >= in + g.padBegin[i]) --o;
  if (!fitsInt64(span) || !fitsInt64(o))
    return Status::invalid("the padded spatial dim " + std::to_string(i) + " overflows int64");
  g.outDims[i] = static_cast<int64_t>(o);
  return Status::ok();
}

}  // namespace

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
  for (size_t i = 0; i < rank; ++i) SUBGRAPH_RETURN_IF_ERROR(resolveAxis(attrs, i, rank, g));
  return Status::ok();
}

StatusOr<size_t> scratchBytes(std::initializer_list<int64_t> factors,
                              std::initializer_list<const std::vector<int64_t>*> dims,
                              const char* what) {
  CheckedInt bytes = 1;
  for (int64_t f : factors) bytes = bytes * f;
  for (const std::vector<int64_t>* d : dims)
    for (int64_t v : *d) bytes = bytes * v;
  if (!bytes.ok() || bytes.value() < 0)
    return Status(StatusCode::kLimitExceeded,
                  std::string(what) + " would need more than 2^63 bytes of scratch");
  return static_cast<size_t>(bytes.value());
}

}  // namespace subgraph::runtime::reference
