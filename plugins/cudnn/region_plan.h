//===- plugins/cudnn/region_plan.h - A fused region as a cuDNN graph plan -*- C++ -*-===//
//
// The host-only half of the cuDNN backend: it turns the body of a fused
// region (seen through the plugin SDK) into a RegionPlan, a description of
// one cuDNN operation graph: tensors with unique ids, dims and strides, and
// the operations between them (convolution forward, matmul, pointwise,
// resample). BatchNormalization is folded into the convolution's weights and
// bias here, once, at region creation; Gemm's transposes and scales are
// folded into its constant weights the same way.
//
// Nothing here touches CUDA or cuDNN, so selection and planning are tested
// on machines without a GPU (plugins/cudnn/tests). cudnn_graph.cpp turns a
// plan into cuDNN backend descriptors, which needs a device.
//
// Layout: 4-D activations live on the device channels-last (NHWC strides,
// the layout cuDNN's fused convolution engines want), while the host hands
// in dense NCHW buffers; the kernel converts while copying
// (nchwToNhwc/nhwcToNchw). Everything else is packed row-major.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/graph_view.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace subgraph::cudnn {

/// What the plugin computes in: the plugin option `cudnn.precision`, else
/// the session's precision (`run --precision`), through the ABI.
enum class Precision {
  kFp32,  ///< float32 everywhere; engines that would use TF32 tensor cores are skipped
  kTf32,  ///< float32 tensors, TF32 tensor cores allowed (about 10 mantissa bits)
  kFp16,  ///< float16 tensors on the device (tensor cores), float32 accumulation
  kBf16,  ///< bfloat16 tensors on the device (tensor cores), float32 accumulation
};
/// "fp16", "bf16", "tf32" or anything else (fp32) as a Precision.
Precision parsePrecision(const std::string& name);
/// "fp32", "tf32" or "fp16".
const char* precisionName(Precision p);

/// Where a tensor of the plan gets its data.
enum class TensorRole {
  kInput,         ///< Runtime input `index` of the fused node.
  kOutput,        ///< Runtime output `index` of the fused node.
  kConstant,      ///< Constant `index` of the plan, uploaded once.
  kIntermediate,  ///< Virtual: lives only inside cuDNN's fused kernel.
};

/// One tensor of the operation graph.
struct PlanTensor {
  /// cuDNN's unique id (1-based, dense).
  int64_t uid = 0;
  /// Dims as cuDNN sees them (rank >= 3; NCHW order for 4-D).
  std::vector<int64_t> dims;
  /// Strides in elements, matching `dims`.
  std::vector<int64_t> strides;
  TensorRole role = TensorRole::kIntermediate;
  /// Index into inputs, outputs or constants, by role.
  size_t index = 0;
  /// True for a 4-D activation stored channels-last on the device whose
  /// host buffer is NCHW (converted while copying).
  bool channelsLast = false;
};

/// cuDNN pointwise modes the plan uses (mapped to cudnnPointwiseMode_t in
/// cudnn_graph.cpp, so this header needs no cuDNN).
enum class PointwiseMode {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kRelu,
  kSigmoid,
  kTanh,
  kAbs,
  kNeg,
  kExp,
  kLog,
  kSqrt,
};

/// Pooling modes (cudnnResampleMode_t).
enum class PoolMode { kMax, kAverageIncludePad, kAverageExcludePad };

/// One operation of the graph; tensors are indices into RegionPlan::tensors.
struct PlanOp {
  enum class Kind { kConvForward, kMatMul, kPointwise, kPool };
  Kind kind = Kind::kPointwise;
  /// Conv: x, w, y. MatMul: a, b, c. Pointwise: x, b (or -1), y. Pool: x, y.
  int x = -1, w = -1, y = -1;
  PointwiseMode pointwise = PointwiseMode::kAdd;
  /// Relu clipping (Clip, LeakyRelu): lower/upper bound and negative slope.
  double reluLower = 0.0, reluUpper = 0.0, reluSlope = 0.0;
  bool hasUpperClip = false;
  PoolMode pool = PoolMode::kMax;
  /// Conv and pool geometry (spatial dims only).
  std::vector<int64_t> strides, padsBegin, padsEnd, dilations, window;
};

/// A region as one cuDNN operation graph.
struct RegionPlan {
  /// A short name of what was fused, e.g. "Conv+BatchNormalization+Relu".
  std::string summary;
  std::vector<PlanTensor> tensors;
  std::vector<PlanOp> ops;
  /// Constant data (float32), folded where needed, in plan order.
  std::vector<std::vector<float>> constants;
  /// Per runtime input / output: the tensor index.
  std::vector<int> inputTensors, outputTensors;
};

/// A plan, or the reason the region cannot be one.
struct PlanResult {
  std::optional<RegionPlan> plan;
  std::string reason;
};

/// Builds the plan of a region body (every node of the body in
/// topological order; the body's inputs are the fused node's inputs).
/// Never throws for unsupported content: that is a reason.
PlanResult buildRegionPlan(const sdk::GraphView& body);

/// Builds the plan of a linear chain of nodes of a graph (not yet a
/// region): its inputs are the non-constant values the chain reads and does
/// not compute, its output the last node's first. Selectors use it to ask
/// whether a shorter chain has an engine before the region exists.
PlanResult buildChainPlan(const std::vector<sdk::NodeView>& chain);

/// A key of everything about `plan` that cuDNN's engine choice depends on
/// (tensor dims, strides and roles, operations and their attributes), and
/// none of its constant data: equal keys get the same engines.
std::string planKey(const RegionPlan& plan);

/// Folds y = gamma * (conv(x) + bias - mean) / sqrt(var + eps) + beta into
/// the convolution: weights (K x rest, row-major) and bias (K) in place.
void foldBatchNorm(std::vector<float>& weights, std::vector<float>& bias,
                   const std::vector<float>& gamma, const std::vector<float>& beta,
                   const std::vector<float>& mean, const std::vector<float>& var, float epsilon);

/// NCHW -> NHWC copy of an n x c x hw tensor.
void nchwToNhwc(const float* src, float* dst, int64_t n, int64_t c, int64_t hw);
/// NHWC -> NCHW copy of an n x hw x c tensor.
void nhwcToNchw(const float* src, float* dst, int64_t n, int64_t c, int64_t hw);

/// IEEE binary16 from float, rounded to nearest even (overflow gives
/// infinity, NaN stays NaN). Host side of the fp16 mode's copies.
uint16_t floatToHalf(float f);
/// Float from IEEE binary16 (exact).
float halfToFloat(uint16_t h);
/// bfloat16 (the top 16 bits of a float) from float, rounded to nearest
/// even; NaN stays a quiet NaN. Host side of the bf16 mode's copies.
uint16_t floatToBfloat16(float f);
/// Float from bfloat16 (exact).
float bfloat16ToFloat(uint16_t b);
/// Bytes of one device element in `p`: 2 in the 16-bit modes, else 4.
size_t deviceElementBytes(Precision p);

/// Packed row-major strides of `dims`.
std::vector<int64_t> packedStrides(const std::vector<int64_t>& dims);
/// NHWC strides for 4-D NCHW-ordered `dims`.
std::vector<int64_t> channelsLastStrides(const std::vector<int64_t>& dims);

}  // namespace subgraph::cudnn
