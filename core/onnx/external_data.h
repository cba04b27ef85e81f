//===- core/onnx/external_data.h - Confined reading of external tensors ---===//
//
// ONNX stores large tensors outside the model file ("external data"), named
// by a relative path in the TensorProto. A hostile model can use that path to
// read any file the process can (absolute paths, "..", symlinks, hard links),
// so this reader confines every read to one folder and to the bytes that
// really exist. docs/onnx.md lists the rules.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/support/status.h"

namespace subgraph::onnx_io {

/// Reads the external data of `proto`, which must be exactly
/// `expectedBytes` long, from inside `baseDir`. `what` names the tensor in
/// errors; every error also names the offending path.
StatusOr<std::vector<std::byte>> readExternalData(const ::onnx::TensorProto& proto,
                                                  uint64_t expectedBytes,
                                                  const std::string& baseDir,
                                                  std::string_view what);

}  // namespace subgraph::onnx_io
