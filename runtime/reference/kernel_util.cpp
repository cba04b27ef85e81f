//===- runtime/reference/kernel_util.cpp - Shared reference-kernel helpers -===//
//
// See runtime/reference/kernel_util.h.
//
//===----------------------------------------------------------------------===//
#include "reference/kernel_util.h"

#include "engine/program.h"

#include <algorithm>

namespace subgraph::runtime::reference {

bool typeInSet(DataType dtype, unsigned bits) {
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat16:
    case DataType::kBFloat16: return (bits & kFloatTypes) != 0;
    case DataType::kInt8:
    case DataType::kInt16: return (bits & kSignedInts) != 0;
    case DataType::kInt32:
    case DataType::kInt64: return (bits & (kSignedInts | kIndexTypes)) != 0;
    case DataType::kUInt8:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64: return (bits & kUnsignedInts) != 0;
    case DataType::kBool: return (bits & kBoolType) != 0;
    default: return false;
  }
}

Status unsupportedType(const Node* node, DataType dtype) {
  return Status::error(StatusCode::kUnsupported, nodeErrorPrefix(node) + "element type " +
                                                     std::string(dataTypeName(dtype)) +
                                                     " is not supported");
}

uint64_t kernelWorkLimit() { return engine::limitsBeingBuilt().work.kernelWork; }

Status checkKernelWork(const Node* node, CheckedInt steps, uint64_t limit,
                       const std::string& what) {
  if (limit == 0 || (steps.ok() && static_cast<uint64_t>(steps.value()) <= limit))
    return Status::ok();
  const std::string count =
      steps.ok() ? std::to_string(steps.value()) + " steps" : "more than 2^63 steps";
  return Status::error(StatusCode::kLimitExceeded, nodeErrorPrefix(node) + what + " takes " +
                                                       count + ", over the kernel work limit of " +
                                                       std::to_string(limit));
}

bool broadcastDims(std::span<const std::vector<int64_t>* const> shapes, std::vector<int64_t>& out) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  out.assign(rank, 1);
  for (const auto* s : shapes) {
    size_t pad = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i];
      int64_t& o = out[pad + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      return false;
    }
  }
  return true;
}

bool normalizeAxis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

std::vector<int64_t> readInts(const TensorView& v) {
  std::vector<int64_t> out(static_cast<size_t>(v.numElements()));
  visitType<kAllTypes>(v.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = v.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(load(p[i]));
  });
  return out;
}

std::vector<double> readDoubles(const TensorView& v) {
  std::vector<double> out(static_cast<size_t>(v.numElements()));
  visitType<kAllTypes>(v.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = v.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(load(p[i]));
  });
  return out;
}

int64_t opsetOf(const Node& node) {
  if (!node.graph()) return 1000;
  const auto& opsets = node.graph()->opsetImports();
  for (const char* domain : {"", "ai.onnx"})
    if (auto it = opsets.find(domain); it != opsets.end()) return it->second;
  return 1000;
}

std::string dimsToString(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

void throwNodeError(const Node& node, const std::string& message) {
  throw Error(StatusCode::kInvalidArgument, nodeErrorPrefix(&node) + message);
}

BroadcastLoop::BroadcastLoop(std::span<const int64_t> outDims,
                             std::span<const std::vector<int64_t>* const> inputDims)
    : numInputs_(inputDims.size()) {
  const size_t rank = outDims.size();
  for (int64_t d : outDims)
    if (d == 0) {
      numRows_ = 0;
      inner_ = 0;
      return;
    }
  // Per kept dim (out size > 1): size and each input's stride (0 when the
  // input repeats along it).
  struct Dim {
    int64_t size;
    int64_t stride[kMaxInputs];
  };
  std::vector<Dim> dims;
  std::vector<int64_t> running(numInputs_, 1);
  std::vector<Dim> reversed;
  for (size_t i = rank; i-- > 0;) {
    Dim d{outDims[i], {0, 0, 0, 0}};
    for (size_t k = 0; k < numInputs_; ++k) {
      const std::vector<int64_t>& in = *inputDims[k];
      size_t pad = rank - in.size();
      int64_t size = i >= pad ? in[i - pad] : 1;
      d.stride[k] = size == 1 ? 0 : running[k];
      running[k] *= size;
    }
    if (d.size != 1) reversed.push_back(d);
  }
  // Merge an outer dim into the inner group when every input continues
  // contiguously (or keeps repeating) across the boundary.
  for (const Dim& d : reversed) {
    if (!dims.empty()) {
      Dim& g = dims.back();
      bool merge = true;
      for (size_t k = 0; k < numInputs_ && merge; ++k) merge = d.stride[k] == g.stride[k] * g.size;
      if (merge) {
        g.size *= d.size;
        continue;
      }
    }
    dims.push_back(d);
  }
  if (dims.empty()) return;  // A single element.
  inner_ = dims.front().size;
  for (size_t k = 0; k < numInputs_; ++k) steps_[k] = dims.front().stride[k];
  outerStrides_.assign(numInputs_, {});
  for (size_t j = dims.size(); j-- > 1;) {
    outerDims_.push_back(dims[j].size);
    for (size_t k = 0; k < numInputs_; ++k) outerStrides_[k].push_back(dims[j].stride[k]);
    numRows_ *= dims[j].size;
  }
}

void BroadcastLoop::rowOffsets(int64_t row, int64_t* offs) const {
  for (size_t k = 0; k < numInputs_; ++k) offs[k] = 0;
  for (size_t j = outerDims_.size(); j-- > 0;) {
    int64_t idx = row % outerDims_[j];
    row /= outerDims_[j];
    for (size_t k = 0; k < numInputs_; ++k) offs[k] += idx * outerStrides_[k][j];
  }
}

}  // namespace subgraph::runtime::reference
