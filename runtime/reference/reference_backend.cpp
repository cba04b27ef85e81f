//===- runtime/reference/reference_backend.cpp - The built-in CPU backend -===//
//
// Assembles the reference provider from the kernel families and makes the
// reference backend: host device cpu:0, a HostAllocator, an inline work queue
// (kernels parallelize internally on the session's oneTBB arena).
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/reference_backend.h"

#include "reference/kernels.h"

namespace subgraph::runtime {

std::shared_ptr<Provider> referenceProvider() {
  // Built once: creators are stateless, so every backend can share them.
  static const std::shared_ptr<Provider> provider = [] {
    auto p = std::make_shared<Provider>("reference");
    reference::registerUnaryKernels(*p);
    reference::registerBinaryKernels(*p);
    reference::registerConvKernels(*p);
    reference::registerConvTransposeKernels(*p);
    reference::registerMatMulKernels(*p);
    reference::registerPoolingKernels(*p);
    reference::registerNormalizationKernels(*p);
    reference::registerSoftmaxKernels(*p);
    reference::registerReduceKernels(*p);
    reference::registerShapeKernels(*p);
    reference::registerDataMovementKernels(*p);
    reference::registerGeneratorKernels(*p);
    reference::registerCastKernels(*p);
    reference::registerResizeKernels(*p);
    reference::registerIndexingKernels(*p);
    reference::registerTopKKernels(*p);
    reference::registerQuantizeKernels(*p);
    reference::registerQuantizedLinearKernels(*p);
    reference::registerBitwiseKernels(*p);
    reference::registerCompressKernels(*p);
    reference::registerReverseSequenceKernels(*p);
    reference::registerUniqueKernels(*p);
    reference::registerDeterminantKernels(*p);
    reference::registerEinsumKernels(*p);
    reference::registerRecurrentKernels(*p);
    reference::registerGridSampleKernels(*p);
    reference::registerObjectDetectionKernels(*p);
    reference::registerControlFlowKernels(*p);
    reference::registerAttentionKernels(*p);
    return p;
  }();
  return provider;
}

std::shared_ptr<Backend> createReferenceBackend() {
  auto backend = std::make_shared<Backend>(kReferenceBackendName, Device{"cpu", 0},
                                           std::make_shared<HostAllocator>("cpu:0"),
                                           std::make_unique<InlineWorkQueue>());
  backend->addProvider(referenceProvider());
  return backend;
}

std::vector<std::string> referenceOps() { return referenceProvider()->ops(); }

}  // namespace subgraph::runtime
