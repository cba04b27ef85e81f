//===- subgraph/support/did_you_mean.h - Suggestions for mistyped names -*- C++ -*-===//
//
// One rule for every "unknown name" error (ops, backends, plugin options
// and their values): suggest the known names within a small edit distance,
// ignoring case, so that `precison` finds `precision` and `onedn` finds
// `onednn`, while an unrelated word suggests nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace subgraph {

/// Levenshtein distance between `a` and `b`, ignoring ASCII case.
size_t editDistance(std::string_view a, std::string_view b);

/// The names of `known` close to `word` (distance at most 2, or at most a
/// third of the longer name), or the name `word` is a case-insensitive
/// prefix of, as " (did you mean a or b?)"; "" when none is close.
std::string didYouMean(std::string_view word, std::span<const std::string> known);

}  // namespace subgraph
