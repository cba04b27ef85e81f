//===- core/zoo/model_builder.h - Building zoo models -----------*- C++ -*-===//
//
// Private to core/zoo. A thin layer over the Graph API that the model files
// share: nodes whose output value is named after the node (node names are
// unique in every zoo model, so value names are too), seeded weights by
// name, and the Conv/BatchNormalization/Gemm/MatMul blocks that CNNs and
// transformers are made of.
//
// Weight scales are chosen so that activations stay finite and O(1) when the
// models are run: convolution weights use He (Kaiming) uniform scaling, with
// gain sqrt(2) before a ReLU and 1 before a residual Add, and batch norm
// statistics are near identity (scale ~1, bias ~0, mean ~0, var ~1).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/graph.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph::zoo::detail {

/// Gain for He scaling of a layer whose output goes through a ReLU (or
/// ReLU6): sqrt(2) keeps the activation variance constant.
inline constexpr double kReluGain = 1.4142135623730951;
/// Gain for a layer whose output is added to a residual without a ReLU.
inline constexpr double kLinearGain = 1.0;

/// Builds one zoo model into a fresh graph.
class ModelBuilder {
 public:
  /// A builder for a graph named `graphName` importing ai.onnx opset 17.
  ModelBuilder(std::string graphName, const ModelOptions& options);

  Graph& graph() { return *graph_; }
  /// The batch dim: static, or the symbol "N" for batch 0.
  Dim batchDim() const;

  /// Adds the graph input "input" of f32[batch, rest...].
  Value* addImageLikeInput(const std::vector<int64_t>& rest);
  /// Marks `value` as the graph output, renamed "output", typed
  /// f32[batch, rest...]; returns the graph.
  std::unique_ptr<Graph> finish(Value* value, const std::vector<int64_t>& rest);

  /// Adds a node named `name` whose single output value is also named
  /// `name` (or `outputName` when given).
  Value* op(std::string_view opType, const std::string& name, std::vector<Value*> inputs,
            std::vector<Attribute> attrs = {}, const std::string& outputName = {});

  /// An f32 initializer with values uniform in [lo, hi), drawn from the
  /// stream for (seed, name).
  Value* uniform(const std::string& name, std::vector<int64_t> dims, double lo, double hi);
  /// He-uniform weight: U(-b, b) with b = gain * sqrt(3 / fanIn), so the
  /// variance is gain^2 / fanIn.
  Value* heUniform(const std::string& name, std::vector<int64_t> dims, int64_t fanIn, double gain);
  /// A constant initializer.
  Value* constant(const std::string& name, Tensor data);

  /// Conv (no bias) with "same" padding for odd kernels; weight
  /// "<name>.weight" of [outC, inC/group, k, k].
  Value* conv(const std::string& name, Value* x, int64_t inC, int64_t outC, int64_t kernel,
              int64_t stride, int64_t group, double gain);
  /// BatchNormalization in inference form with "<name>.weight", ".bias",
  /// ".running_mean" and ".running_var" of [channels].
  Value* batchNorm(const std::string& name, Value* x, int64_t channels);
  /// Gemm(x, W^T) + b as torch.nn.Linear exports it: "<name>.weight" of
  /// [out, in] with transB = 1 and "<name>.bias" of [out].
  Value* linear(const std::string& name, Value* x, int64_t in, int64_t out,
                const std::string& outputName = {});

 private:
  std::unique_ptr<Graph> graph_;
  ModelOptions options_;
};

}  // namespace subgraph::zoo::detail
