//===- tests/runtime/reference_op_coverage_test.cpp - Kernel for every op -===//
//
// The reference backend is the oracle every other backend is checked
// against, so it must run every op of the default-domain op table
// (core/ops/*.json). These tests fail fast, naming the ops, when an op is
// added to the table without a reference kernel (which would otherwise
// surface only as "no kernel" failures in the ONNX conformance run), or
// when a kernel is registered for an op the table does not define.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "subgraph/ir/op_schema.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

/// Every default-domain op in the op table has a reference kernel creator.
TEST(ReferenceOpCoverageTest, EveryDefaultDomainOpHasAReferenceKernel) {
  const std::shared_ptr<Provider> provider = referenceProvider();
  std::vector<std::string> missing;
  size_t defaultDomainOps = 0;
  for (const OpSchema* schema : OpRegistry::global().schemas()) {
    if (!canonicalDomain(schema->domain).empty()) continue;
    ++defaultDomainOps;
    if (!provider->find(schema->name)) missing.push_back(schema->name);
  }
  // Guards against a vacuous pass over an empty registry.
  EXPECT_GT(defaultDomainOps, 100u);
  EXPECT_TRUE(missing.empty()) << missing.size()
                               << " op(s) in the op table (core/ops/*.json) have no kernel in the "
                               << "reference backend (runtime/reference/): " << join(missing);
}

/// A reference kernel is never registered for an op the table does not
/// define (a typo in a registration would otherwise go unnoticed).
TEST(ReferenceOpCoverageTest, NoKernelForAnOpOutsideTheTable) {
  std::vector<std::string> orphans;
  for (const std::string& qualified : referenceOps()) {
    const size_t dot = qualified.rfind('.');
    const std::string domain = dot == std::string::npos ? "" : qualified.substr(0, dot);
    const std::string name = dot == std::string::npos ? qualified : qualified.substr(dot + 1);
    if (!OpRegistry::global().lookup(domain, name)) orphans.push_back(qualified);
  }
  EXPECT_TRUE(orphans.empty()) << "reference kernels for ops outside the op table: "
                               << join(orphans);
}

}  // namespace
}  // namespace subgraph::runtime
