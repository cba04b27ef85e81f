//===- core/support/did_you_mean.cpp - Suggestions for mistyped names -----===//
//
// Edit distance and the "did you mean" suffix of unknown-name errors.
//
//===----------------------------------------------------------------------===//
#include "subgraph/support/did_you_mean.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace subgraph {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool startsWithIgnoringCase(std::string_view name, std::string_view prefix) {
  if (prefix.empty() || prefix.size() > name.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(name[i]) != lower(prefix[i])) return false;
  return true;
}

}  // namespace

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t next = std::min(
          {row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

std::string didYouMean(std::string_view word, std::span<const std::string> known) {
  std::string near;
  for (const std::string& name : known) {
    size_t limit = std::max<size_t>(2, std::max(name.size(), word.size()) / 3);
    if (editDistance(word, name) > limit && !startsWithIgnoringCase(name, word)) continue;
    near += (near.empty() ? "" : " or ") + name;
  }
  return near.empty() ? std::string() : " (did you mean " + near + "?)";
}

}  // namespace subgraph
