//===- subgraph/runtime/npy.h - NumPy .npy files ----------------*- C++ -*-===//
//
// Reading and writing tensors as NumPy .npy files (format versions 1.0-3.0,
// little-endian, C order), the format `subgraph run` uses for inputs and
// outputs. Files are untrusted: header length, dims and data size are checked
// against the file before anything is allocated.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

#include "subgraph/ir/tensor.h"
#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// Serializes `tensor` as .npy bytes. Strings and bf16 are unsupported
/// (NumPy has no such dtype).
StatusOr<std::string> encodeNpy(const Tensor& tensor);
/// Parses .npy bytes; `sourceName` names the data in errors.
StatusOr<Tensor> decodeNpy(std::string_view bytes, const std::string& sourceName = "<npy>");

/// Writes `tensor` to `path`.
Status writeNpyFile(const std::string& path, const Tensor& tensor);
/// Reads the .npy file at `path`.
StatusOr<Tensor> readNpyFile(const std::string& path);

}  // namespace subgraph::runtime
