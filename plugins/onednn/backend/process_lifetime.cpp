//===- plugins/onednn/backend/process_lifetime.cpp - Keep onednn.so mapped -===//
//
// See process_lifetime.h. glibc lets dlopen(RTLD_NOLOAD | RTLD_NODELETE)
// add the no-delete flag to a library that is already loaded; the library
// is found by the address of a function inside it (dladdr).
//
//===----------------------------------------------------------------------===//
#include "process_lifetime.h"

#include <dlfcn.h>

namespace subgraph::onednn {

void pinLibraryForProcessLifetime() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&pinLibraryForProcessLifetime), &info) || !info.dli_fname)
    return;
  // The extra reference this takes is never dropped, on purpose.
  (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace subgraph::onednn
