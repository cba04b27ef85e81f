//===- subgraph/fused_name.cpp - Default fused-node naming ----------------===//
//
// The one place the default fused-node domain and name are spelled; see
// include/subgraph/partition/fused_name.h for who relies on them.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/fused_name.h"

#include <charconv>

namespace subgraph::partition {

std::string fusedDomain(std::string_view backend) {
  std::string domain;
  domain.reserve(kFusedDomainPrefix.size() + backend.size());
  domain.append(kFusedDomainPrefix).append(backend);
  return domain;
}

std::string fusedNodeName(std::string_view backend, std::string_view property, int regionId) {
  // Built in place: a chain of + would allocate a temporary per step, and
  // this runs once per region, hundreds of thousands of times in a large
  // graph.
  char digits[16];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, regionId);
  (void)ec;  // an int always fits
  std::string name;
  name.reserve(backend.size() + property.size() + 2 + static_cast<size_t>(end - digits));
  name.append(backend).append("_").append(property).append("_").append(digits, end);
  return name;
}

}  // namespace subgraph::partition
