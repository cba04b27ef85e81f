//===- plugins/onednn/kernels/eltwise_chain.h - Chains of unary activations -*- C++ -*-===//
//
// The element-wise family of the compute core: a chain of unary
// activations (Relu -> Sigmoid, a scalar Mul then Tanh, ...) run as one
// oneDNN eltwise primitive per step, the first out of place and the rest in
// place, so the tensor is read from the source once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "activation.h"
#include "shape_cache.h"
#include "tensor_format.h"

namespace subgraph::onednn {

/// A chain of activations over one tensor; primitives cached per shape.
class EltwiseChain {
 public:
  /// Throws std::invalid_argument for an empty chain.
  EltwiseChain(std::vector<Activation> steps, Format format);
  const std::vector<Activation>& steps() const { return steps_; }
  /// Creates the primitives once per shape.
  void prepare(std::span<const int64_t> dims);
  /// Runs on prepared dims; in place is allowed.
  void execute(std::span<const int64_t> dims, const void* src, void* dst) const;

 private:
  struct Prepared;
  std::vector<Activation> steps_;
  Format format_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
