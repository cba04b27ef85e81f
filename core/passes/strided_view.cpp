//===- core/passes/strided_view.cpp - Data movement as strides ------------===//
//
// See strided_view.h. reshaped() follows numpy's no-copy reshape: the old
// and new dims are grouped into runs of equal element count; a run of old
// dims may be merged or split only when it is contiguous in memory.
//
//===----------------------------------------------------------------------===//
#include "strided_view.h"

#include <algorithm>

namespace subgraph::passes_detail {
namespace {

// The dims of size other than 1, with their strides.
void withoutOnes(const StridedView& v, std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  for (size_t i = 0; i < v.dims.size(); ++i)
    if (v.dims[i] != 1) {
      dims.push_back(v.dims[i]);
      strides.push_back(v.strides[i]);
    }
}

// Element count, or -1 when a dim is negative or the count overflows.
int64_t countOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d != 0 && n > INT64_MAX / d)) return -1;
    n *= d;
  }
  return n;
}

}  // namespace

StridedView StridedView::contiguous(std::vector<int64_t> dims) {
  StridedView v;
  v.strides.assign(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) v.strides[i - 1] = v.strides[i] * dims[i];
  v.dims = std::move(dims);
  return v;
}

std::optional<StridedView> StridedView::reshaped(const std::vector<int64_t>& newDims) const {
  const int64_t count = countOf(dims);
  if (count <= 0 || count != countOf(newDims)) return std::nullopt;
  std::vector<int64_t> od, os;
  withoutOnes(*this, od, os);
  std::vector<int64_t> nd, ns;
  for (int64_t d : newDims)
    if (d != 1) nd.push_back(d);
  ns.assign(nd.size(), 1);
  size_t oi = 0, ni = 0;
  while (oi < od.size() && ni < nd.size()) {
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = od[oi], np = nd[ni];
    while (op != np) {
      if (np < op)
        np *= nd[nj++];
      else
        op *= od[oj++];
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (os[k] != od[k + 1] * os[k + 1]) return std::nullopt;  // would copy
    ns[nj - 1] = os[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) ns[k - 1] = ns[k] * nd[k];
    oi = oj;
    ni = nj;
  }
  StridedView out;
  out.dims = newDims;
  out.strides.assign(newDims.size(), 0);
  for (size_t i = 0, k = 0; i < newDims.size(); ++i) out.strides[i] = newDims[i] == 1 ? 0 : ns[k++];
  return out;
}

std::optional<StridedView> StridedView::permuted(const std::vector<int64_t>& perm) const {
  if (perm.size() != dims.size()) return std::nullopt;
  std::vector<bool> seen(dims.size(), false);
  StridedView out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(dims.size()) || seen[static_cast<size_t>(p)])
      return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
    out.dims.push_back(dims[static_cast<size_t>(p)]);
    out.strides.push_back(strides[static_cast<size_t>(p)]);
  }
  return out;
}

bool StridedView::sameAs(const StridedView& other) const {
  if (dims != other.dims) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != 1 && strides[i] != other.strides[i]) return false;
  return true;
}

}  // namespace subgraph::passes_detail
