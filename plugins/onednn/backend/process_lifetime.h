//===- plugins/onednn/backend/process_lifetime.h - Keep onednn.so mapped -*- C++ -*-===//
//
// Internal to the onednn plugin. oneDNN runs on OpenMP, and GOMP's worker
// threads, once started, live until the process ends: there is no call
// that joins them. If the host unloaded onednn.so (and with it libdnnl and
// libgomp, which only it pulled in) while those threads sleep in libgomp's
// code, they would wake into unmapped memory; LeakSanitizer's exit-time
// scan already trips over them. So the plugin pins its own library: the
// host's dlclose then leaves it mapped until the process exits, which is
// what a library owning threads needs.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace subgraph::onednn {

/// Marks the library holding this code as never to be unmapped
/// (RTLD_NODELETE). Safe to call more than once; failures are ignored (the
/// plugin still works, only its unloading stays unsafe).
void pinLibraryForProcessLifetime();

}  // namespace subgraph::onednn
