//===- subgraph/ir/op_schema.h - Op definitions and their registry -*- C++ -*-===//
//
// An OpSchema is the single description of an op: operands, attributes with
// defaults, docs, a data-parallel flag, shape/type inference and extra
// verification rules. Built-in ONNX ops get their schemas (and typed node
// classes such as ConvNode) from the declarative op table through the op
// generator at build time; backends register more schemas at run time (e.g.
// `onednn.ConvBnRelu`) with the same verification and printing.
//
// Nodes refer to ops through an interned OpKey, so a node created before a
// plugin registers its schema picks the schema up when it arrives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/types.h"
#include "subgraph/support/status.h"

namespace subgraph {

class Node;
class InferenceContext;
struct OpSchema;

/// How many values an operand position takes.
enum class Arity : uint8_t {
  kSingle,    ///< Exactly one value.
  kOptional,  ///< Zero or one value (an omitted optional input is null).
  kVariadic,  ///< Zero or more values; only the last operand may be variadic.
};

/// One input or output of an op.
struct OperandSpec {
  std::string name;  ///< e.g. "X", used for typed accessors (getX).
  Arity arity = Arity::kSingle;
  std::string typeConstraint;  ///< Name of a TypeConstraint, or empty: any.
  std::string doc;
  /// Variadic only: the minimum number of values.
  int minCount = 1;
};

/// A named set of allowed element types, e.g. T in {f16, f32, f64}.
struct TypeConstraint {
  std::string name;
  std::vector<DataType> allowed;
};

/// One attribute of an op.
struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  bool required = false;
  std::optional<AttrValue> defaultValue;  ///< Used when absent and optional.
  std::string doc;
};

/// Infers output types from input types and attributes. Returns an error
/// naming the node when inputs are inconsistent.
using InferFn = std::function<Status(InferenceContext&)>;
/// Op-specific verification beyond arity, attribute kinds and type
/// constraints, which the generic verifier checks from the schema.
using VerifyFn = std::function<Status(const Node&)>;
/// Allocates the node object for this op (a generated typed class for
/// built-in ops, a plain Node otherwise).
using NodeFactory = std::unique_ptr<Node> (*)();

/// The single declarative description of an op.
struct OpSchema {
  std::string domain;  ///< "" is the default ONNX domain (ai.onnx).
  std::string name;    ///< e.g. "Conv".
  int sinceVersion = 1;
  std::string doc;
  /// True for elementwise ops whose output element i depends only on input
  /// element i (after broadcasting); fusers and schedulers use it.
  bool dataParallel = false;
  std::vector<OperandSpec> inputs;
  std::vector<OperandSpec> outputs;
  std::vector<AttrSpec> attributes;
  std::vector<TypeConstraint> typeConstraints;
  InferFn infer;
  VerifyFn verify;
  NodeFactory factory = nullptr;

  /// Fully qualified name: "Conv" or "onednn.ConvBnRelu".
  std::string qualifiedName() const;
  /// Looks up an attribute spec by name; null if the op has no such attribute.
  const AttrSpec* findAttr(std::string_view attrName) const;
  /// Looks up a type constraint by name; null if absent.
  const TypeConstraint* findTypeConstraint(std::string_view constraint) const;
  /// Smallest and largest number of inputs (max is SIZE_MAX when variadic).
  size_t minInputs() const;
  size_t maxInputs() const;
  size_t minOutputs() const;
  size_t maxOutputs() const;
};

/// An interned (domain, op name) pair; nodes point at one of these. The
/// schema pointer is filled in whenever a schema for the pair is registered.
struct OpKey {
  std::string domain;
  std::string name;
  std::atomic<const OpSchema*> schema{nullptr};

  /// "Conv" or "onednn.ConvBnRelu".
  std::string qualifiedName() const { return domain.empty() ? name : domain + "." + name; }
};

/// Process-wide registry of op schemas. Thread-safe. Schemas and keys are
/// never freed, so pointers to them stay valid for the life of the process.
class OpRegistry {
 public:
  /// The process-wide registry, with the built-in ONNX ops registered.
  static OpRegistry& global();

  /// Registers a schema. Fails if (domain, name) already has one, or the
  /// schema itself is malformed (e.g. a variadic operand that is not last).
  Status registerSchema(OpSchema schema);
  /// The schema for (domain, name), or null. "ai.onnx" is treated as "".
  const OpSchema* lookup(std::string_view domain, std::string_view name) const;
  /// Returns the unique key for (domain, name), creating it if needed.
  const OpKey* intern(std::string_view domain, std::string_view name);
  /// All registered schemas, sorted by qualified name.
  std::vector<const OpSchema*> schemas() const;

 private:
  OpRegistry() = default;
  mutable std::mutex mutex_;
  // Keys and schemas are heap-allocated and never erased so that raw
  // pointers handed to nodes never dangle.
  std::unordered_map<std::string, std::unique_ptr<OpKey>> keys_;
  std::vector<std::unique_ptr<OpSchema>> schemas_;
};

/// Canonical domain spelling: "ai.onnx" becomes "".
std::string_view canonicalDomain(std::string_view domain);

/// Registers the built-in ONNX op schemas; generated from the op table and
/// called once by OpRegistry::global().
void registerBuiltinOps(OpRegistry& registry);

}  // namespace subgraph
