//===- runtime/engine/region_kernel.h - Default executor of fused regions -*- C++ -*-===//
//
// Internal to the runtime. Until a backend supplies a kernel for a fused
// region node ("subgraph.*" domain, "body" graph attribute), the session runs
// the body graph on the reference backend with this kernel, the analogue of
// MXNet's CachedOp. The body is compiled once into a nested Program; each
// input signature gets a nested Plan whose memory is carved from the
// region's scratch, so the region's intermediates share the outer frame's
// planned memory. Region outputs are written directly into the outer output
// buffers where the body allows it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/ir/graph.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/runtime/kernel.h"

namespace subgraph::runtime::engine {

/// Makes the default executor for region `node` whose body is `body`, run
/// on `reference`. Fails if the body does not compile or its inputs and
/// outputs do not match the node's.
StatusOr<std::unique_ptr<Kernel>> makeGraphKernel(const Node& node, std::shared_ptr<Graph> body,
                                                  std::shared_ptr<Backend> reference);

/// Makes the default executor for a fused region node.
StatusOr<std::unique_ptr<Kernel>> makeRegionKernel(const Node& node,
                                                   std::shared_ptr<Backend> reference);

}  // namespace subgraph::runtime::engine
