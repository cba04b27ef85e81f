//===- plugins/onednn/backend/index_family.h - Index regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the index family. Connected integer and
// bool steps with static shapes (comparisons, Not/And/Or, Cast between
// bool, int32 and int64, Add/Sub/Mul, Where, CumSum, Expand,
// GatherElements) as one region: the position ids and token-type ids that
// exporters compute from the token ids on every run (kernels/index_program.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family indexFamily();

}  // namespace subgraph::onednn
