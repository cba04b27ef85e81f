//===- plugins/cudnn/region_plan.cpp - A fused region as a cuDNN graph plan ===//
//
// buildRegionPlan() walks the region body in topological order and keeps,
// per graph value, the plan tensor holding it. Each supported op appends
// cuDNN operations; anything else ends the walk with a reason, so the
// property rejects the region and the report says why (the partitioner then
// leaves the nodes to later seeds or to the reference backend).
//
// Invariants of a finished plan: every operation reads tensors defined
// before it; every runtime input and output tensor is non-virtual; all
// activations of one rank-4 region are channels-last.
//
//===----------------------------------------------------------------------===//
#include "region_plan.h"

#include "layout.h"
#include "subgraph/support/half.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <span>
#include <utility>

namespace subgraph::cudnn {
namespace {

using sdk::NodeView;
using sdk::ValueView;

/// Thrown inside the builder for an unsupported region; caught by
/// buildRegionPlan and turned into the reason.
struct Unplannable {
  std::string reason;
};

[[noreturn]] void unplannable(std::string reason) {
  throw Unplannable{"cudnn: " + std::move(reason)};
}

std::string describe(const NodeView& n) {
  std::string name = n.name();
  return n.opType() + (name.empty() ? "" : " '" + name + "'");
}

/// cuDNN's view of a value's dims: rank 4 as is, lower ranks padded with
/// leading 1s to rank 3 (cuDNN's graph tensors have rank >= 3).
std::vector<int64_t> cudnnDims(std::vector<int64_t> dims) {
  while (dims.size() < 3) dims.insert(dims.begin(), 1);
  return dims;
}

std::vector<float> floatData(const ValueView& v) {
  std::span<const float> d = v.constantData<float>();
  return {d.begin(), d.end()};
}

class PlanBuilder {
 public:
  PlanBuilder(std::vector<ValueView> inputs, std::vector<NodeView> nodes,
              std::vector<ValueView> outputs)
      : inputs_(std::move(inputs)), nodes_(std::move(nodes)), outputs_(std::move(outputs)) {}

  RegionPlan build() {
    const std::vector<ValueView>& inputs = inputs_;
    plan_.inputTensors.assign(inputs.size(), -1);
    for (size_t i = 0; i < inputs.size(); ++i) inputIndex_[inputs[i].handle()] = i;
    for (const NodeView& n : nodes_) {
      checkTypes(n);
      plan_.summary += (plan_.summary.empty() ? "" : "+") + n.opType();
      addNode(n);
    }
    if (plan_.ops.empty()) unplannable("the region has no operations");
    const std::vector<ValueView>& outputs = outputs_;
    for (size_t o = 0; o < outputs.size(); ++o) {
      auto it = tensorOf_.find(outputs[o].handle());
      if (it == tensorOf_.end() || plan_.tensors[it->second].role != TensorRole::kIntermediate)
        unplannable("region output '" + outputs[o].name() + "' is not computed by the region");
      plan_.tensors[it->second].role = TensorRole::kOutput;
      plan_.tensors[it->second].index = o;
      plan_.outputTensors.push_back(it->second);
    }
    for (size_t i = 0; i < plan_.inputTensors.size(); ++i)
      if (plan_.inputTensors[i] < 0)
        unplannable("region input '" + inputs[i].name() + "' is not read by a planned operation");
    return std::move(plan_);
  }

 private:
  // --- tensors ---

  int addTensor(std::vector<int64_t> dims, TensorRole role, size_t index, bool channelsLast) {
    PlanTensor t;
    t.uid = static_cast<int64_t>(plan_.tensors.size()) + 1;
    t.strides = channelsLast ? channelsLastStrides(dims) : packedStrides(dims);
    t.dims = std::move(dims);
    t.role = role;
    t.index = index;
    t.channelsLast = channelsLast;
    plan_.tensors.push_back(std::move(t));
    return static_cast<int>(plan_.tensors.size()) - 1;
  }

  int addConstant(std::vector<float> data, std::vector<int64_t> dims, bool channelsLast = false) {
    plan_.constants.push_back(std::move(data));
    return addTensor(std::move(dims), TensorRole::kConstant, plan_.constants.size() - 1,
                     channelsLast);
  }

  /// The tensor of a non-constant activation: produced in the region or a
  /// runtime input (made on first use).
  int activation(const ValueView& v, const NodeView& user) {
    if (!v) unplannable(describe(user) + " has an omitted input the plan needs");
    if (auto it = tensorOf_.find(v.handle()); it != tensorOf_.end()) return it->second;
    if (v.isConstant()) unplannable(describe(user) + " reads constant '" + v.name() + "' as data");
    auto in = inputIndex_.find(v.handle());
    if (in == inputIndex_.end())
      unplannable("value '" + v.name() + "' is neither computed in the region nor its input");
    std::vector<int64_t> dims = cudnnDims(v.dims());
    int t = addTensor(dims, TensorRole::kInput, in->second, dims.size() == 4);
    plan_.inputTensors[in->second] = t;
    tensorOf_[v.handle()] = t;
    return t;
  }

  /// A new tensor for output 0 of `n` (virtual until marked as a region
  /// output at the end).
  int define(const NodeView& n, size_t output = 0) {
    std::vector<int64_t> dims = cudnnDims(n.output(output).dims());
    bool channelsLast = dims.size() == 4;
    int t = addTensor(std::move(dims), TensorRole::kIntermediate, 0, channelsLast);
    tensorOf_[n.output(output).handle()] = t;
    return t;
  }

  /// A constant operand of a broadcasting binary op, padded to `rank`.
  int broadcastConstant(const ValueView& v, const std::vector<int64_t>& outDims,
                        const NodeView& user) {
    std::vector<int64_t> dims = v.dims();
    if (dims.size() > outDims.size())
      unplannable(describe(user) + ": constant '" + v.name() +
                  "' has a higher rank than the result");
    while (dims.size() < outDims.size()) dims.insert(dims.begin(), 1);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != 1 && dims[i] != outDims[i])
        unplannable(describe(user) + ": constant '" + v.name() + "' does not broadcast");
    return addConstant(floatData(v), std::move(dims));
  }

  // --- nodes ---

  void checkTypes(const NodeView& n) {
    for (size_t i = 0; i < n.numInputs(); ++i) {
      ValueView v = n.input(i);
      if (!v) continue;
      if (v.dtype() != sdk::DataType::kFloat32)
        unplannable(describe(n) + ": only float32 is planned (input '" + v.name() + "')");
      if (!v.hasStaticShape())
        unplannable(describe(n) + ": input '" + v.name() + "' has a dynamic shape");
    }
    for (size_t o = 0; o < n.numOutputs(); ++o) {
      ValueView v = n.output(o);
      if (!v || (o > 0 && v.consumers().empty() && !v.isGraphOutput())) continue;
      if (v.dtype() != sdk::DataType::kFloat32 || !v.hasStaticShape())
        unplannable(describe(n) + ": output '" + v.name() + "' is not static float32");
      if (v.dims().size() > 4) unplannable(describe(n) + ": rank above 4 is not planned");
    }
  }

  void addNode(const NodeView& n) {
    const std::string op = n.opType();
    if (!n.domain().empty()) unplannable(describe(n) + " is not an ONNX op");
    if (op == "Conv") return addConv(n);
    if (op == "BatchNormalization") return addBatchNorm(n);
    if (op == "MatMul" || op == "Gemm") return addMatMul(n);
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return addPool(n);
    if (auto mode = binaryMode(op)) return addBinary(n, *mode);
    if (op == "Relu" || op == "LeakyRelu" || op == "Clip") return addRelu(n);
    if (auto mode = unaryMode(op)) return addUnary(n, *mode);
    unplannable(op + " is not planned");
  }

  static std::optional<PointwiseMode> binaryMode(const std::string& op) {
    static const std::map<std::string, PointwiseMode> modes = {
        {"Add", PointwiseMode::kAdd}, {"Sub", PointwiseMode::kSub}, {"Mul", PointwiseMode::kMul},
        {"Div", PointwiseMode::kDiv}, {"Max", PointwiseMode::kMax}, {"Min", PointwiseMode::kMin}};
    auto it = modes.find(op);
    return it == modes.end() ? std::nullopt : std::optional(it->second);
  }

  static std::optional<PointwiseMode> unaryMode(const std::string& op) {
    static const std::map<std::string, PointwiseMode> modes = {
        {"Sigmoid", PointwiseMode::kSigmoid}, {"Tanh", PointwiseMode::kTanh},
        {"Abs", PointwiseMode::kAbs},         {"Neg", PointwiseMode::kNeg},
        {"Exp", PointwiseMode::kExp},         {"Log", PointwiseMode::kLog},
        {"Sqrt", PointwiseMode::kSqrt}};
    auto it = modes.find(op);
    return it == modes.end() ? std::nullopt : std::optional(it->second);
  }

  void pointwise(PointwiseMode mode, int x, int b, int y, PlanOp op = {}) {
    op.kind = PlanOp::Kind::kPointwise;
    op.pointwise = mode;
    op.x = x;
    op.w = b;
    op.y = y;
    plan_.ops.push_back(std::move(op));
  }

  void addConv(const NodeView& n) {
    ValueView x = n.input(0), w = n.input(1);
    if (x.dims().size() != 4) unplannable(describe(n) + ": only 2-D convolutions are planned");
    if (!w || !w.isConstant()) unplannable(describe(n) + ": weights are not constant");
    // Grouped and depthwise convolutions need nothing more: cuDNN infers
    // the group count from the filter's dims (K, C/G, R, S) against x's C.
    const int64_t groups = n.attrInt("group", 1);
    if (groups < 1 || x.dims()[1] % groups != 0 || w.dims().size() != 4 ||
        w.dims()[1] * groups != x.dims()[1] || w.dims()[0] % groups != 0)
      unplannable(describe(n) + ": group " + std::to_string(groups) +
                  " does not divide the channels as the weights say");
    std::string autoPad = n.attrString("auto_pad", "NOTSET");
    if (autoPad != "NOTSET" && autoPad != "VALID")
      unplannable(describe(n) + ": auto_pad " + autoPad + " is not planned");
    std::vector<int64_t> wd = w.dims();
    const int64_t k = wd[0];
    PlanOp op;
    op.kind = PlanOp::Kind::kConvForward;
    op.strides = n.attrInts("strides", {1, 1});
    op.dilations = n.attrInts("dilations", {1, 1});
    std::vector<int64_t> pads =
        autoPad == "VALID" ? std::vector<int64_t>{0, 0, 0, 0} : n.attrInts("pads", {0, 0, 0, 0});
    if (op.strides.size() != 2 || op.dilations.size() != 2 || pads.size() != 4)
      unplannable(describe(n) + ": malformed strides, dilations or pads");
    op.padsBegin = {pads[0], pads[1]};
    op.padsEnd = {pads[2], pads[3]};
    op.x = activation(x, n);
    // Weights stay K x C x R x S row-major until the plan is finished, so
    // a following BatchNormalization folds per output channel; finish()
    // reorders them channels-last.
    std::vector<float> bias(static_cast<size_t>(k), 0.0f);
    if (ValueView b = n.numInputs() > 2 ? n.input(2) : ValueView(nullptr, nullptr); b) {
      if (!b.isConstant()) unplannable(describe(n) + ": bias is not constant");
      bias = floatData(b);
    }
    op.w = addConstant(floatData(w), wd, /*channelsLast=*/true);
    std::vector<int64_t> yd = n.output(0).dims();
    op.y = addTensor(yd, TensorRole::kIntermediate, 0, true);
    plan_.ops.push_back(op);
    int biasTensor = addConstant(std::move(bias), {1, k, 1, 1});
    int out = define(n);
    pointwise(PointwiseMode::kAdd, op.y, biasTensor, out);
    conv_[n.output(0).handle()] = {plan_.tensors[op.w].index, plan_.tensors[biasTensor].index};
  }

  void addBatchNorm(const NodeView& n) {
    ValueView x = n.input(0);
    auto conv = conv_.find(x.handle());
    if (conv == conv_.end())
      unplannable(describe(n) +
                  ": only a BatchNormalization right after a Conv is planned (folded)");
    if (x.consumers().size() != 1 || x.isGraphOutput())
      unplannable(describe(n) +
                  ": the Conv's output is also read elsewhere, so it cannot be folded");
    std::vector<std::vector<float>> p;
    for (size_t i = 1; i <= 4; ++i) {
      ValueView v = n.input(i);
      if (!v || !v.isConstant())
        unplannable(describe(n) + ": scale, bias, mean and variance must be constant");
      p.push_back(floatData(v));
    }
    std::vector<float>& weights = plan_.constants[conv->second.first];
    std::vector<float>& bias = plan_.constants[conv->second.second];
    for (const auto& v : p)
      if (v.size() != bias.size())
        unplannable(describe(n) + ": parameter size does not match the Conv's channels");
    foldBatchNorm(weights, bias, p[0], p[1], p[2], p[3], n.attrFloat("epsilon", 1e-5f));
    tensorOf_[n.output(0).handle()] = tensorOf_.at(x.handle());
  }

  void addBinary(const NodeView& n, PointwiseMode mode) {
    if (n.numInputs() != 2) unplannable(describe(n) + " with other than two inputs is not planned");
    ValueView a = n.input(0), b = n.input(1);
    const bool commutative = mode == PointwiseMode::kAdd || mode == PointwiseMode::kMul ||
                             mode == PointwiseMode::kMax || mode == PointwiseMode::kMin;
    if (a.isConstant() && !b.isConstant()) {
      if (!commutative) unplannable(describe(n) + ": a constant first operand is not planned");
      std::swap(a, b);
    }
    std::vector<int64_t> outDims = cudnnDims(n.output(0).dims());
    int x = activation(a, n);
    if (plan_.tensors[x].dims != outDims)
      unplannable(describe(n) + ": the first operand would broadcast");
    int y;
    if (b.isConstant()) {
      y = broadcastConstant(b, outDims, n);
    } else {
      y = activation(b, n);
      if (plan_.tensors[y].dims != outDims)
        unplannable(describe(n) + ": broadcasting a runtime input is not planned");
    }
    pointwise(mode, x, y, define(n));
  }

  void addRelu(const NodeView& n) {
    PlanOp op;
    const std::string type = n.opType();
    if (type == "LeakyRelu") {
      op.reluSlope = n.attrFloat("alpha", 0.01f);
    } else if (type == "Clip") {
      float lo = n.attrFloat("min", -3.4028234663852886e38f);
      float hi = n.attrFloat("max", 3.4028234663852886e38f);
      for (size_t i = 1; i < n.numInputs() && i <= 2; ++i) {
        ValueView v = n.input(i);
        if (!v) continue;
        if (!v.isConstant() || v.constantData<float>().size() != 1)
          unplannable(describe(n) + ": bounds must be scalar constants");
        (i == 1 ? lo : hi) = v.constantData<float>()[0];
      }
      op.reluLower = lo;
      op.reluUpper = hi;
      op.hasUpperClip = true;
    }
    int x = activation(n.input(0), n);
    pointwise(PointwiseMode::kRelu, x, -1, define(n), op);
  }

  void addUnary(const NodeView& n, PointwiseMode mode) {
    int x = activation(n.input(0), n);
    pointwise(mode, x, -1, define(n));
  }

  void addMatMul(const NodeView& n) {
    ValueView a = n.input(0), b = n.input(1);
    if (a.dims().size() != 2) unplannable(describe(n) + ": only a rank-2 left operand is planned");
    if (!b || !b.isConstant() || b.dims().size() != 2)
      unplannable(describe(n) + ": the right operand must be a constant matrix");
    const bool gemm = n.is("Gemm");
    if (gemm && n.attrInt("transA", 0) != 0) unplannable(describe(n) + ": transA is not planned");
    std::vector<int64_t> bd = b.dims();
    std::vector<float> w = floatData(b);
    int64_t k = bd[0], cols = bd[1];
    if (gemm && n.attrInt("transB", 0) != 0) {
      // Fold the transpose into the constant: B is N x K, the plan wants K x N.
      std::vector<float> t(w.size());
      for (int64_t r = 0; r < bd[0]; ++r)
        for (int64_t c = 0; c < bd[1]; ++c) t[c * bd[0] + r] = w[r * bd[1] + c];
      w = std::move(t);
      std::swap(k, cols);
    }
    if (gemm)
      for (float& v : w) v *= n.attrFloat("alpha", 1.0f);
    PlanOp op;
    op.kind = PlanOp::Kind::kMatMul;
    op.x = activation(a, n);
    op.w = addConstant(std::move(w), {1, k, cols});
    ValueView c = gemm && n.numInputs() > 2 ? n.input(2) : ValueView(nullptr, nullptr);
    if (!c) {
      op.y = define(n);
      plan_.ops.push_back(op);
      return;
    }
    if (!c.isConstant()) unplannable(describe(n) + ": C must be constant");
    std::vector<int64_t> outDims = cudnnDims(n.output(0).dims());
    op.y = addTensor(outDims, TensorRole::kIntermediate, 0, false);
    plan_.ops.push_back(op);
    int bias = broadcastConstant(c, outDims, n);
    for (float& v : plan_.constants[plan_.tensors[bias].index]) v *= n.attrFloat("beta", 1.0f);
    pointwise(PointwiseMode::kAdd, op.y, bias, define(n));
  }

  void addPool(const NodeView& n) {
    ValueView x = n.input(0);
    std::vector<int64_t> xd = x.dims();
    if (xd.size() != 4) unplannable(describe(n) + ": only 2-D pooling is planned");
    if (n.numOutputs() > 1 && n.output(1) && !n.output(1).consumers().empty())
      unplannable(describe(n) + ": the Indices output is not planned");
    PlanOp op;
    op.kind = PlanOp::Kind::kPool;
    if (n.is("GlobalAveragePool")) {
      op.pool = PoolMode::kAverageIncludePad;
      op.window = {xd[2], xd[3]};
      op.strides = {1, 1};
      op.padsBegin = op.padsEnd = {0, 0};
    } else {
      if (n.attrString("auto_pad", "NOTSET") != "NOTSET")
        unplannable(describe(n) + ": auto_pad is not planned");
      if (n.attrInt("ceil_mode", 0) != 0) unplannable(describe(n) + ": ceil_mode is not planned");
      std::vector<int64_t> dil = n.attrInts("dilations", {1, 1});
      if (dil != std::vector<int64_t>{1, 1})
        unplannable(describe(n) + ": dilations are not planned");
      op.window = n.attrInts("kernel_shape");
      op.strides = n.attrInts("strides", {1, 1});
      std::vector<int64_t> pads = n.attrInts("pads", {0, 0, 0, 0});
      if (op.window.size() != 2 || op.strides.size() != 2 || pads.size() != 4)
        unplannable(describe(n) + ": malformed kernel_shape, strides or pads");
      op.padsBegin = {pads[0], pads[1]};
      op.padsEnd = {pads[2], pads[3]};
      op.pool = n.is("MaxPool")                     ? PoolMode::kMax
                : n.attrInt("count_include_pad", 0) ? PoolMode::kAverageIncludePad
                                                    : PoolMode::kAverageExcludePad;
    }
    op.x = activation(x, n);
    op.y = define(n);
    plan_.ops.push_back(std::move(op));
  }

  std::vector<ValueView> inputs_;
  std::vector<NodeView> nodes_;
  std::vector<ValueView> outputs_;
  RegionPlan plan_;
  std::map<const SgValue*, int> tensorOf_;
  std::map<const SgValue*, size_t> inputIndex_;
  /// Conv output (after its bias) -> (weights, bias) constant indices.
  std::map<const SgValue*, std::pair<size_t, size_t>> conv_;
};

/// Reorders every channels-last 4-D constant (convolution weights) from
/// the row-major K x C x R x S it was folded in.
void finish(RegionPlan& plan) {
  for (const PlanTensor& t : plan.tensors) {
    if (t.role != TensorRole::kConstant || !t.channelsLast) continue;
    std::vector<float>& data = plan.constants[t.index];
    std::vector<float> reordered(data.size());
    nchwToNhwc(data.data(), reordered.data(), t.dims[0], t.dims[1], t.dims[2] * t.dims[3]);
    data = std::move(reordered);
  }
}

PlanResult plan(PlanBuilder builder) {
  PlanResult result;
  try {
    RegionPlan plan = builder.build();
    finish(plan);
    result.plan = std::move(plan);
  } catch (const Unplannable& u) {
    result.reason = u.reason;
  }
  return result;
}

}  // namespace

PlanResult buildRegionPlan(const sdk::GraphView& body) {
  return plan(PlanBuilder(body.inputs(), body.nodes(), body.outputs()));
}

PlanResult buildChainPlan(const std::vector<sdk::NodeView>& chain) {
  if (chain.empty()) return {std::nullopt, "cudnn: the region has no operations"};
  // The chain's inputs are the non-constant values its nodes read and do
  // not compute, in order of first use; its one output is the last node's.
  std::vector<ValueView> inputs;
  std::set<const SgValue*> seen;
  for (const NodeView& n : chain)
    for (size_t o = 0; o < n.numOutputs(); ++o)
      if (n.output(o)) seen.insert(n.output(o).handle());
  for (const NodeView& n : chain)
    for (size_t i = 0; i < n.numInputs(); ++i) {
      ValueView v = n.input(i);
      if (v && !v.isConstant() && seen.insert(v.handle()).second) inputs.push_back(v);
    }
  return plan(PlanBuilder(std::move(inputs), chain, {chain.back().output(0)}));
}

std::string planKey(const RegionPlan& p) {
  // Everything cuDNN's engine choice can depend on, and no constant data.
  std::string key = p.summary;
  auto ints = [&](const std::vector<int64_t>& v) {
    key += '[';
    for (int64_t x : v) key += std::to_string(x) + ',';
    key += ']';
  };
  for (const PlanTensor& t : p.tensors) {
    key += 't' + std::to_string(static_cast<int>(t.role));
    ints(t.dims);
    ints(t.strides);
  }
  for (const PlanOp& op : p.ops) {
    key += 'o' + std::to_string(static_cast<int>(op.kind)) + ':' +
           std::to_string(static_cast<int>(op.pointwise)) + ':' +
           std::to_string(static_cast<int>(op.pool)) + ':' + std::to_string(op.x) + ',' +
           std::to_string(op.w) + ',' + std::to_string(op.y) + ':' + std::to_string(op.reluLower) +
           ',' + std::to_string(op.reluUpper) + ',' + std::to_string(op.reluSlope) +
           (op.hasUpperClip ? "u" : "");
    ints(op.strides);
    ints(op.padsBegin);
    ints(op.padsEnd);
    ints(op.dilations);
    ints(op.window);
  }
  return key;
}

void foldBatchNorm(std::vector<float>& weights, std::vector<float>& bias,
                   const std::vector<float>& gamma, const std::vector<float>& beta,
                   const std::vector<float>& mean, const std::vector<float>& var, float epsilon) {
  const size_t k = bias.size();
  const size_t perChannel = k ? weights.size() / k : 0;
  for (size_t c = 0; c < k; ++c) {
    const float scale = gamma[c] / std::sqrt(var[c] + epsilon);
    for (size_t i = 0; i < perChannel; ++i) weights[c * perChannel + i] *= scale;
    bias[c] = (bias[c] - mean[c]) * scale + beta[c];
  }
}

void nchwToNhwc(const float* src, float* dst, int64_t n, int64_t c, int64_t hw) {
  transposeBatches(src, dst, n, c, hw, kSameFloat);
}

void nhwcToNchw(const float* src, float* dst, int64_t n, int64_t c, int64_t hw) {
  transposeBatches(src, dst, n, hw, c, kSameFloat);
}

Precision parsePrecision(const std::string& p) {
  if (p == "fp16") return Precision::kFp16;
  if (p == "bf16") return Precision::kBf16;
  if (p == "tf32") return Precision::kTf32;
  return Precision::kFp32;
}

const char* precisionName(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
  }
  return "fp32";
}

// The shared conversions (subgraph/support/half.h), so that the device's
// fp16 copies and the reference's agree bit for bit.
uint16_t floatToHalf(float f) { return floatToHalfBits(f); }

uint16_t floatToBfloat16(float f) { return floatToBFloat16Bits(f); }

float bfloat16ToFloat(uint16_t b) { return bfloat16BitsToFloat(b); }

size_t deviceElementBytes(Precision p) {
  return p == Precision::kFp16 || p == Precision::kBf16 ? 2 : 4;
}

float halfToFloat(uint16_t h) { return halfBitsToFloat(h); }

std::vector<int64_t> packedStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::vector<int64_t> channelsLastStrides(const std::vector<int64_t>& dims) {
  // dims = N, C, H, W; memory order N, H, W, C.
  return {dims[1] * dims[2] * dims[3], 1, dims[3] * dims[1], dims[1]};
}

}  // namespace subgraph::cudnn
