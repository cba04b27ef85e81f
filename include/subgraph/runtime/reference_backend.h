//===- subgraph/runtime/reference_backend.h - The built-in CPU backend -*- C++ -*-===//
//
// The reference backend runs every op of the op table on the host CPU in plain
// layout, with full ONNX semantics (broadcasting, auto_pad, ceil_mode, groups,
// dilations, negative axes, the Resize modes exporters use). It is always
// present, the way ONNX Runtime's CPU execution provider is, and it is the
// oracle other backends are tested against, so it must not depend on oneDNN
// or any other backend library. Kernels parallelize with tbb::parallel_for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "subgraph/runtime/backend.h"

namespace subgraph::runtime {

/// Name under which the reference backend is registered.
inline constexpr const char* kReferenceBackendName = "reference";

/// The provider holding every reference kernel.
std::shared_ptr<Provider> referenceProvider();

/// A new reference backend on "cpu:0" with its own host allocator.
std::shared_ptr<Backend> createReferenceBackend();

/// The qualified op types the reference backend implements, sorted.
std::vector<std::string> referenceOps();

}  // namespace subgraph::runtime
