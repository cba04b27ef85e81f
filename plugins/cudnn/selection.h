//===- plugins/cudnn/selection.h - The cuDNN backend's fusion properties -*- C++ -*-===//
//
// What the cuDNN backend proposes, in pass order:
//   conv_fused    Conv -> optional BatchNormalization (folded) -> optional
//                 residual Add -> optional activation
//   matmul_fused  MatMul | Gemm -> optional bias Add -> optional activation
//   pool          MaxPool | AveragePool | GlobalAveragePool
//   eltwise       a chain of element-wise ops cuDNN's pointwise engine has
// Selectors only look at op types, constness and static float32 shapes;
// CreateSubgraphNode then plans the region (region_plan.h) and rejects it,
// with the planner's reason, if it cannot be one cuDNN operation graph, or
// if the engine check (heuristics on the device) finds no engine for it.
//
// This file needs no CUDA: the plugin passes the device's engine check in,
// and tests pass none (selection only).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/plugin.h>

#include <functional>
#include <string>
#include <vector>

#include "region_plan.h"

namespace subgraph::cudnn {

/// Asks the device whether cuDNN has an engine for `plan`: returns an
/// empty string if so, else the reason to reject the region.
using EngineCheck = std::function<std::string(const RegionPlan& plan)>;

/// How much the selectors fuse.
struct SelectionOptions {
  /// False: one ONNX compute op per region (a BatchNormalization still
  /// folds into its Conv), for measuring what fusion buys
  /// (SUBGRAPH_CUDNN_FUSION=0).
  bool fuse = true;
};

/// The options the environment asks for (SUBGRAPH_CUDNN_FUSION=0: no fusion).
SelectionOptions selectionOptionsFromEnvironment();

/// Registers the four properties on `plugin`; `check` may be empty (no
/// device: regions are accepted on the plan alone). The check is memoized
/// per plan key, so a region is asked about once however often it is seen.
void addCudnnProperties(sdk::Plugin& plugin, EngineCheck check, SelectionOptions options = {});

/// The longest prefix of `chain` (a linear chain grown by a selector, in
/// stage order) that plans and that `check` accepts, when the whole chain
/// plans but `check` finds no engine for it; otherwise `chain` unchanged,
/// so CreateSubgraphNode gives the plan's reason. cuDNN's fused engines
/// cover fewer graphs than its single-operation ones, so Conv+BN+Add+Relu
/// without an engine becomes Conv+BN+Add or Conv+BN rather than nothing.
std::vector<sdk::NodeView> trimToEngine(std::vector<sdk::NodeView> chain, const EngineCheck& check);

/// The fused op types (qualified) the kernels are registered for.
inline constexpr const char* kFusedOps[] = {"subgraph.cudnn.conv_fused",
                                            "subgraph.cudnn.matmul_fused", "subgraph.cudnn.pool",
                                            "subgraph.cudnn.eltwise"};

}  // namespace subgraph::cudnn
