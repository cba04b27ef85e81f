//===- plugins/onednn/backend/onednn_backend_impl.h - The runtime Backend class -*- C++ -*-===//
//
// Internal to the onednn backend: the runtime::Backend subclass, which adds
// reorders between plain and blocked layouts to the default host copies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include <oneapi/tbb/task_arena.h>

#include "onednn_backend.h"
#include "subgraph/runtime/backend.h"

namespace subgraph::onednn {

/// The host CPU with the onednn kernels (added by the registration).
class OnednnBackend final : public runtime::Backend {
 public:
  OnednnBackend();
  /// Reorders f32 values between plain and blocked layouts; everything
  /// else is the default host copy.
  std::unique_ptr<runtime::Kernel> createCopy(const runtime::CopyRequest& request) const override;
};

}  // namespace subgraph::onednn
