//===- subgraph/fused_name.cpp - Default fused-node naming ----------------===//
//
// The one place the default fused-node domain and name are spelled; see
// include/subgraph/partition/fused_name.h for who relies on them.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/fused_name.h"

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
  std::string name;
  name.reserve(backend.size() + property.size() + 16);
  name.append(backend).append("_").append(property).append("_");
  name.append(std::to_string(regionId));
  return name;
}

}  // namespace subgraph::partition
