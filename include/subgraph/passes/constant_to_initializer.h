//===- subgraph/passes/constant_to_initializer.h - Constant nodes -*- C++ -*-===//
//
// Turns Constant nodes into initializers, so that every later pass and every
// backend sees one kind of constant.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces each default-domain Constant node by an initializer holding its
/// value, under the Constant's output name (so uses and graph outputs are
/// untouched). Handles the `value`, `value_float`, `value_floats`,
/// `value_int`, `value_ints`, `value_string` and `value_strings` attributes;
/// a Constant with `sparse_value` or with no or several value attributes is
/// left in place and named in the pass summary. There is no size limit:
/// this pass moves data, it does not create any.
std::unique_ptr<Pass> createConstantToInitializerPass();

}  // namespace subgraph
