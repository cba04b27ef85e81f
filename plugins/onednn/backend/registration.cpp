//===- plugins/onednn/backend/registration.cpp - The backend's registrations -===//
//
// Nothing but registrations: each family's properties with the partitioner,
// in priority order (longer fusions first, so a Conv is not taken by a
// shorter pattern before a longer one sees it), and each fused op's kernel
// creator with the runtime.
//
//===----------------------------------------------------------------------===//
#include <mutex>

#include "channel_scale_family.h"
#include "concat_family.h"
#include "conv_family.h"
#include "deconv_family.h"
#include "eltwise_family.h"
#include "layernorm_family.h"
#include "matmul_family.h"
#include "onednn_backend_impl.h"
#include "pooling_family.h"
#include "resize_family.h"
#include "softmax_family.h"

namespace subgraph::onednn {
namespace {

using Family = std::vector<std::pair<std::string, partition::PropertyFactory>>;

struct FamilyEntry {
  Family (*properties)();
  runtime::KernelCreator (*creator)();
};

const FamilyEntry kFamilies[] = {
    {convProperties, convKernelCreator},
    {matmulProperties, matmulKernelCreator},
    {poolingProperties, poolingKernelCreator},
    {deconvProperties, deconvKernelCreator},
    {resizeProperties, resizeKernelCreator},
    {layernormProperties, layernormKernelCreator},
    {softmaxProperties, softmaxKernelCreator},
    {concatProperties, concatKernelCreator},
    {channelScaleProperties, channelScaleKernelCreator},
    // Last: a chain of activations is what the families above leave over.
    {eltwiseProperties, eltwiseKernelCreator},
};

}  // namespace

void registerOnednnBackend() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto provider = std::make_shared<runtime::Provider>(kBackendName);
    for (const FamilyEntry& family : kFamilies) {
      runtime::KernelCreator creator = family.creator();
      for (auto& [name, factory] : family.properties()) {
        throwIfError(partition::BackendRegistry::global().registerProperty(kBackendName, factory));
        provider->add(std::string("subgraph.") + kBackendName + "." + name, creator);
      }
    }
    throwIfError(runtime::BackendRegistry::global().add(
        kBackendName, [provider]() -> StatusOr<std::shared_ptr<runtime::Backend>> {
          auto backend = std::make_shared<OnednnBackend>();
          backend->addProvider(provider);
          return std::shared_ptr<runtime::Backend>(std::move(backend));
        }));
  });
}

namespace {
// The program links this library as objects, so this runs in every binary
// that has the backend.
const bool kRegistered = (registerOnednnBackend(), true);
}  // namespace

}  // namespace subgraph::onednn
