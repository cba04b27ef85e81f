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

#include "region_plan.h"

namespace subgraph::cudnn {

/// Asks the device whether cuDNN has an engine for `plan`: returns an
/// empty string if so, else the reason to reject the region.
using EngineCheck = std::function<std::string(const RegionPlan& plan)>;

/// Registers the four properties on `plugin`; `check` may be empty (no
/// device: regions are accepted on the plan alone).
void addCudnnProperties(sdk::Plugin& plugin, EngineCheck check);

/// The fused op types (qualified) the kernels are registered for.
inline constexpr const char* kFusedOps[] = {"subgraph.cudnn.conv_fused",
                                            "subgraph.cudnn.matmul_fused", "subgraph.cudnn.pool",
                                            "subgraph.cudnn.eltwise"};

}  // namespace subgraph::cudnn
