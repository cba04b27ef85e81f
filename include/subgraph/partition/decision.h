//===- subgraph/partition/decision.h - Yes, or no with a reason -*- C++ -*-===//
//
// Every decision a selector or property makes about fusing can say why not,
// in words, in the style of XLA's FusionDecision. The partitioner keeps the
// reason of the decision that finally left a node out and prints it in the
// partition report, so "why was this Conv not fused?" has an answer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace subgraph::partition {

/// The outcome of one fusion decision: yes, or no with an optional
/// human-readable reason.
///
/// Converts implicitly from bool so that a selector may simply
/// `return node.opType() == "Conv";`; a bare `false` carries no reason, and
/// the report then falls back to a generic one ("no selector matched").
class Decision {
 public:
  /// A yes.
  static Decision yes() { return Decision(true); }
  /// A no with `reason`, e.g. "kernel is not 3x3".
  static Decision no(std::string reason = {}) {
    Decision d(false);
    d.reason_ = std::move(reason);
    return d;
  }
  /// A no with `reason` when `condition` holds, else a yes.
  static Decision noIf(bool condition, std::string reason) {
    return condition ? no(std::move(reason)) : yes();
  }

  /// A yes for true, a reasonless no for false.
  Decision(bool canFuse) : canFuse_(canFuse) {}  // NOLINT: implicit by design

  /// True for yes.
  bool canFuse() const { return canFuse_; }
  /// True for yes; lets a Decision stand in an `if`.
  explicit operator bool() const { return canFuse_; }
  /// The reason of a no; empty for a yes and for a reasonless no.
  const std::string& reason() const { return reason_; }
  /// The reason, or `fallback` if there is none; "yes" for a yes.
  std::string explain(std::string_view fallback = "no reason given") const {
    if (canFuse_) return "yes";
    return reason_.empty() ? std::string(fallback) : reason_;
  }

  /// Yes only if both are yes; a no keeps the reason of the first no, so
  /// the cheaper, more general check written first explains the result.
  Decision And(Decision other) const {
    if (!canFuse_) return *this;
    return other;
  }
  /// Yes if either is yes; when both say no, the reasons are joined with
  /// " and " so that neither alternative's failure is hidden.
  Decision Or(Decision other) const {
    if (canFuse_) return *this;
    if (other.canFuse_) return other;
    if (reason_.empty()) return other;
    if (other.reason_.empty()) return *this;
    return no(reason_ + " and " + other.reason_);
  }

 private:
  bool canFuse_;
  std::string reason_;
};

}  // namespace subgraph::partition
