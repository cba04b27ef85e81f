//===- core/passes/pass_util.cpp - Helpers shared by the passes -----------===//
//
// OpCounter's summary text.
//
//===----------------------------------------------------------------------===//
#include "pass_util.h"

#include <algorithm>
#include <vector>

namespace subgraph::passes_detail {

std::string OpCounter::describe() const {
  std::vector<std::pair<std::string, size_t>> ops(counts_.begin(), counts_.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text = std::to_string(total_) + (total_ == 1 ? " node (" : " nodes (");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) text += ", ";
    text += total_ == 1 ? ops[i].first : std::to_string(ops[i].second) + " " + ops[i].first;
  }
  return text + ")";
}

}  // namespace subgraph::passes_detail
