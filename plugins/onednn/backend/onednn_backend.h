//===- plugins/onednn/backend/onednn_backend.h - The onednn backend, in process -*- C++ -*-===//
//
// Registers the onednn backend with both registries of this process: its
// properties with the partitioner (partition::BackendRegistry, as backend
// "onednn") and its kernels with the runtime (runtime::BackendRegistry).
// The runtime backend is the host CPU with one provider whose kernels run
// the fused regions, plus the copies that reorder values between plain and
// oneDNN's blocked layouts where they enter or leave oneDNN.
//
// Why in process: version 1 of the plugin C ABI (subgraph/plugin_abi.h)
// hands kernels dense row-major buffers only, with no way to keep a value
// in a blocked layout between two regions or to ask for planned scratch
// memory. Until the ABI can express layouts, this backend links into the
// program; the compute core (plugins/onednn/kernels/) and the families do
// not depend on how they are registered.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace subgraph::onednn {

/// The backend's name in both registries.
inline constexpr const char* kBackendName = "onednn";

/// Registers the backend in both registries; safe to call any number of
/// times. The library also calls it at static initialization.
void registerOnednnBackend();

}  // namespace subgraph::onednn
