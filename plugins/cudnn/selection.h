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
#include <memory>
#include <string>
#include <vector>

#include "region_plan.h"

namespace subgraph::cudnn {

/// Asks the device whether cuDNN has an engine for `plan` in a precision:
/// returns an empty string if so, else the reason to reject the region.
using EngineCheck = std::function<std::string(const RegionPlan& plan)>;
/// The same, for any precision (checkEngine on a device).
using PrecisionEngineCheck = std::function<std::string(const RegionPlan& plan, Precision)>;

/// What selection plans for: one session's options.
struct SelectionOptions {
  /// False: one ONNX compute op per region (a BatchNormalization still
  /// folds into its Conv), for measuring what fusion buys (plugin option
  /// `cudnn.fusion=off`).
  bool fuse = true;
  /// The precision the engine checks ask about, the kernels' own.
  Precision precision = Precision::kFp32;
};

/// The selection options of a session: its precision, unless the plugin
/// option `precision` sets another, and the option `fusion`.
SelectionOptions selectionOptionsFor(const sdk::KernelContext& session);

/// The four properties for one session; `check` may be empty (no device:
/// regions are accepted on the plan alone). The check is asked in the
/// session's precision and memoized per plan key, so a region is asked
/// about once however often it is seen.
std::vector<std::unique_ptr<sdk::SubgraphProperty>> cudnnProperties(EngineCheck check,
                                                                    SelectionOptions options = {});

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
