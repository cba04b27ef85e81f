//===- plugins/onednn/kernels/index_program.cpp - Integer index math ------===//
//
// See index_program.h. Broadcasts are resolved per element through an
// offset table (the programs are small); the arithmetic is done on uint64
// so that overflow wraps as ONNX's integers do instead of being undefined.
//
//===----------------------------------------------------------------------===//
#include "index_program.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace subgraph::onednn {
namespace {

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// For each element of `out`, the offset of the element of `in` that
// broadcasts to it (right-aligned, numpy rules).
std::vector<int64_t> broadcastOffsets(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  if (in.size() > out.size()) throw std::invalid_argument("index: an input outranks its output");
  const size_t rank = out.size(), skip = rank - in.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = in.size(); i-- > 0;) {
    if (in[i] != out[i + skip] && in[i] != 1)
      throw std::invalid_argument("index: dims do not broadcast");
    strides[i + skip] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  std::vector<int64_t> offsets(static_cast<size_t>(count(out)));
  std::vector<int64_t> at(rank, 0);
  int64_t offset = 0;
  for (int64_t& o : offsets) {
    o = offset;
    for (size_t d = rank; d-- > 0;) {  // odometer step, last dim fastest
      offset += strides[d];
      if (++at[d] < out[d]) break;
      offset -= strides[d] * out[d];
      at[d] = 0;
    }
  }
  return offsets;
}

int64_t narrow(int64_t v, IndexType type) {
  switch (type) {
    case IndexType::kBool: return v != 0;
    case IndexType::kInt32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case IndexType::kInt64: return v;
  }
  return v;
}

int64_t apply(IndexOp op, int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case IndexOp::kEqual: return a == b;
    case IndexOp::kLess: return a < b;
    case IndexOp::kGreater: return a > b;
    case IndexOp::kAnd: return a != 0 && b != 0;
    case IndexOp::kOr: return a != 0 || b != 0;
    case IndexOp::kAdd: return static_cast<int64_t>(ua + ub);
    case IndexOp::kSub: return static_cast<int64_t>(ua - ub);
    case IndexOp::kMul: return static_cast<int64_t>(ua * ub);
    default: return 0;
  }
}

bool isBinary(IndexOp op) {
  switch (op) {
    case IndexOp::kEqual:
    case IndexOp::kLess:
    case IndexOp::kGreater:
    case IndexOp::kAnd:
    case IndexOp::kOr:
    case IndexOp::kAdd:
    case IndexOp::kSub:
    case IndexOp::kMul: return true;
    default: return false;
  }
}

size_t arity(IndexOp op) {
  if (isBinary(op)) return 2;
  if (op == IndexOp::kWhere) return 3;
  return op == IndexOp::kGatherElements ? 2 : 1;
}

// outer x length x inner around `axis` of `dims`.
struct AxisSplit {
  int64_t outer = 1, length = 1, inner = 1;
};
AxisSplit splitAt(const std::vector<int64_t>& dims, int64_t axis) {
  AxisSplit s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (static_cast<int64_t>(i) < axis) s.outer *= dims[i];
    if (static_cast<int64_t>(i) > axis) s.inner *= dims[i];
  }
  s.length = dims[static_cast<size_t>(axis)];
  return s;
}

void cumSum(const std::vector<int64_t>& x, const AxisSplit& s, const IndexStep& step,
            std::vector<int64_t>& y) {
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      uint64_t sum = 0;
      for (int64_t k = 0; k < s.length; ++k) {
        const int64_t j = step.reverse ? s.length - 1 - k : k;
        const size_t at = static_cast<size_t>((o * s.length + j) * s.inner + i);
        if (step.exclusive) {
          y[at] = static_cast<int64_t>(sum);
          sum += static_cast<uint64_t>(x[at]);
        } else {
          sum += static_cast<uint64_t>(x[at]);
          y[at] = static_cast<int64_t>(sum);
        }
      }
    }
  }
}

void gatherElements(const std::vector<int64_t>& data, const std::vector<int64_t>& dataDims,
                    const std::vector<int64_t>& indices, const std::vector<int64_t>& indexDims,
                    int64_t axis, std::vector<int64_t>& y) {
  const AxisSplit d = splitAt(dataDims, axis);
  std::vector<int64_t> at(indexDims.size(), 0);
  for (size_t e = 0; e < indices.size(); ++e) {
    int64_t index = indices[e];
    if (index < 0) index += d.length;
    if (index < 0 || index >= d.length)
      throw std::invalid_argument("GatherElements: index " + std::to_string(indices[e]) +
                                  " is out of range for axis " + std::to_string(axis) +
                                  " of size " + std::to_string(d.length));
    // The element's coordinates in the indices, with the axis replaced.
    int64_t offset = 0;
    for (size_t i = 0; i < at.size(); ++i)
      offset = offset * dataDims[i] + (static_cast<int64_t>(i) == axis ? index : at[i]);
    y[e] = data[static_cast<size_t>(offset)];
    for (size_t i = at.size(); i-- > 0;) {
      if (++at[i] < indexDims[i]) break;
      at[i] = 0;
    }
  }
}

template <typename T>
void readAs(const void* src, std::vector<int64_t>& dst) {
  const T* p = static_cast<const T*>(src);
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = static_cast<int64_t>(p[i]);
}

void read(const void* src, IndexType type, std::vector<int64_t>& dst) {
  switch (type) {
    case IndexType::kBool:
      readAs<uint8_t>(src, dst);
      for (int64_t& v : dst) v = v != 0;  // any nonzero byte is true
      return;
    case IndexType::kInt32: readAs<int32_t>(src, dst); return;
    case IndexType::kInt64: std::memcpy(dst.data(), src, dst.size() * sizeof(int64_t)); return;
  }
}

void write(const std::vector<int64_t>& src, IndexType type, void* dst) {
  switch (type) {
    case IndexType::kBool:
      for (size_t i = 0; i < src.size(); ++i) static_cast<uint8_t*>(dst)[i] = src[i] != 0;
      return;
    case IndexType::kInt32:
      for (size_t i = 0; i < src.size(); ++i)
        static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(src[i]);
      return;
    case IndexType::kInt64: std::memcpy(dst, src.data(), src.size() * sizeof(int64_t)); return;
  }
}

}  // namespace

int IndexProgram::addValue(std::vector<int64_t> dims, IndexType type) {
  for (int64_t d : dims)
    if (d < 0) throw std::invalid_argument("index: a value's dims are not static");
  dims_.push_back(std::move(dims));
  types_.push_back(type);
  constants_.emplace_back();
  return static_cast<int>(dims_.size()) - 1;
}

void IndexProgram::setConstant(int id, std::vector<int64_t> elements) {
  if (static_cast<int64_t>(elements.size()) != count(dims_[id]))
    throw std::invalid_argument("index: a constant's size does not match its dims");
  for (int64_t& v : elements) v = narrow(v, types_[id]);
  constants_[id] = std::move(elements);
}

void IndexProgram::addStep(IndexStep step) {
  if (step.inputs.size() != arity(step.op))
    throw std::invalid_argument("index: a step has the wrong number of inputs");
  const std::vector<int64_t>& out = dims_[step.output];
  if (step.op == IndexOp::kCumSum || step.op == IndexOp::kGatherElements) {
    const int64_t rank = static_cast<int64_t>(out.size());
    if (step.axis < 0) step.axis += rank;
    if (step.axis < 0 || step.axis >= rank) throw std::invalid_argument("index: axis out of range");
    const std::vector<int64_t>& data = dims_[step.inputs[0]];
    if (data.size() != out.size()) throw std::invalid_argument("index: ranks differ");
    if (step.op == IndexOp::kCumSum && data != out)
      throw std::invalid_argument("index: CumSum changes the dims");
    if (step.op == IndexOp::kGatherElements) {
      if (dims_[step.inputs[1]] != out)
        throw std::invalid_argument("index: GatherElements' output is not its indices' dims");
      for (size_t i = 0; i < out.size(); ++i)
        if (static_cast<int64_t>(i) != step.axis && out[i] > data[i])
          throw std::invalid_argument("index: GatherElements' indices outsize its data");
    }
  } else {
    for (int in : step.inputs) broadcastOffsets(dims_[in], out);  // throws unless it holds
  }
  steps_.push_back(std::move(step));
}

void IndexProgram::runStep(const IndexStep& step, std::vector<std::vector<int64_t>>& values) const {
  const std::vector<int64_t>& outDims = dims_[step.output];
  std::vector<int64_t>& y = values[step.output];
  y.assign(static_cast<size_t>(count(outDims)), 0);
  auto in = [&](size_t i) -> const std::vector<int64_t>& { return values[step.inputs[i]]; };
  auto dimsOf = [&](size_t i) -> const std::vector<int64_t>& { return dims_[step.inputs[i]]; };
  if (step.op == IndexOp::kCumSum) {
    cumSum(in(0), splitAt(outDims, step.axis), step, y);
  } else if (step.op == IndexOp::kGatherElements) {
    gatherElements(in(0), dimsOf(0), in(1), dimsOf(1), step.axis, y);
  } else if (isBinary(step.op)) {
    const auto a = broadcastOffsets(dimsOf(0), outDims), b = broadcastOffsets(dimsOf(1), outDims);
    for (size_t e = 0; e < y.size(); ++e) y[e] = apply(step.op, in(0)[a[e]], in(1)[b[e]]);
  } else if (step.op == IndexOp::kWhere) {
    const auto c = broadcastOffsets(dimsOf(0), outDims), a = broadcastOffsets(dimsOf(1), outDims),
               b = broadcastOffsets(dimsOf(2), outDims);
    for (size_t e = 0; e < y.size(); ++e) y[e] = in(0)[c[e]] != 0 ? in(1)[a[e]] : in(2)[b[e]];
  } else {  // Not, Cast, Expand: one input, broadcast to the output
    const auto a = broadcastOffsets(dimsOf(0), outDims);
    for (size_t e = 0; e < y.size(); ++e)
      y[e] = step.op == IndexOp::kNot ? in(0)[a[e]] == 0 : in(0)[a[e]];
  }
  for (int64_t& v : y) v = narrow(v, types_[step.output]);
}

void IndexProgram::run(std::span<const void* const> inputs, std::span<void* const> outputs) const {
  std::vector<std::vector<int64_t>> values(constants_);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    values[inputs_[i]].resize(static_cast<size_t>(count(dims_[inputs_[i]])));
    read(inputs[i], types_[inputs_[i]], values[inputs_[i]]);
  }
  for (const IndexStep& step : steps_) runStep(step, values);
  for (size_t i = 0; i < outputs_.size(); ++i)
    write(values[outputs_[i]], types_[outputs_[i]], outputs[i]);
}

}  // namespace subgraph::onednn
