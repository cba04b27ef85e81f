//===- subgraph/ir/text_format.h - Readable text form of graphs -*- C++ -*-===//
//
// A compact, line-oriented text form of a Graph, used by tests, the CLI and
// bug reports. Printing then parsing gives back the same graph (same names,
// types, attributes, constants, node names and order); parse errors carry a
// line and column. The grammar is documented in docs/text-format.md.
//
//   graph @block(%x: f32[1, 64, 56, 56]) {
//     %w = const f32[64, 64, 3, 3] splat(0.5)
//     %y = Conv(%x, %w) {pads = [1, 1, 1, 1], strides = [1, 1]} @conv1
//     %z = Relu(%y)
//     return %z
//   }
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// Options for parseGraph().
struct ParseOptions {
  /// Name used in error messages ("<input>:3:14: ...").
  std::string sourceName = "<input>";
  /// Deepest nesting of graphs (the top level is 1, an If branch inside it
  /// 2); deeper input is an error rather than a stack overflow.
  int maxGraphDepth = 64;
  /// Largest constant (initializer or tensor attribute) the parser will
  /// materialize, in bytes; guards `splat` of absurd shapes.
  uint64_t maxConstantBytes = uint64_t{1} << 30;
  /// Most nodes in the input, counting nodes in nested graphs; more is an
  /// error naming this limit rather than an unbounded allocation.
  uint64_t maxNodes = 10'000'000;
  /// The directory that `external("file", offset, bytes)` constants are
  /// read from (the .sg file's own; parseGraphFile sets it). Empty refuses
  /// external data. A location must be a relative path inside it.
  std::string externalDataDir;
};

/// Parses one graph. On error the Status message reads
/// "<source>:<line>:<col>: <what is wrong>".
StatusOr<std::unique_ptr<Graph>> parseGraph(std::string_view text,
                                            const ParseOptions& options = {});
/// Like parseGraph but throws `Error`; convenient in tests.
std::unique_ptr<Graph> parseGraphOrThrow(std::string_view text, const ParseOptions& options = {});
/// Reads and parses a `.sg` file; errors name the file as their source
/// (options.sourceName is replaced by `path`).
StatusOr<std::unique_ptr<Graph>> parseGraphFile(const std::string& path, ParseOptions options = {});

/// Options for printGraph().
struct PrintOptions {
  /// Print value types on node results when known.
  bool printTypes = true;
  /// 0 (the default) prints every element so the output parses back
  /// exactly. Otherwise a constant with more elements than this (and not a
  /// splat) shows only its first few, then `...`; such output is for people
  /// and the parser rejects it with a message saying so.
  size_t elideConstantsOver = 0;
  /// When set, each constant (and tensor attribute) of at least
  /// externalDataMinBytes bytes, other than a splat or strings, is appended
  /// to this stream, 64-byte aligned, and printed as
  /// `external("<externalDataLocation>", offset, bytes)`, which parseGraph
  /// reads back from ParseOptions::externalDataDir. The stream must start
  /// empty: offsets count from its first byte.
  std::ostream* externalData = nullptr;
  /// The data file's name as the text names it, relative to the .sg file.
  std::string externalDataLocation;
  /// The smallest constant, in bytes, that goes to externalData.
  uint64_t externalDataMinBytes = 1024;
};

/// Prints a graph in the text format; parseGraph(printGraph(g)) equals g.
std::string printGraph(const Graph& graph, const PrintOptions& options = {});
/// Prints a graph in the text format to `os`.
void printGraph(const Graph& graph, std::ostream& os, const PrintOptions& options = {});
/// Prints one node as its text-format line (without indentation).
std::string printNode(const Node& node, const PrintOptions& options = {});

/// Writes `graph` to the .sg file `path`, with constants of 1 KiB and more
/// in `path`.data unless `inlineConstants`. The text and its data file are
/// one model: both are written before either replaces its old file, and a
/// failure keeps both old ones, so the old text never meets the new
/// constants; a model with no external data removes a stale data file.
Status writeGraphFile(const Graph& graph, const std::string& path, bool inlineConstants = false);

}  // namespace subgraph
