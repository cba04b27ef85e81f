//===- subgraph/runtime/tensor_file.h - Tensors from files ------*- C++ -*-===//
//
// Reading input and expected-output tensors from disk: NumPy .npy files and
// serialized ONNX TensorProto (.pb) files, the format of the ONNX backend
// test data (test_data_set_N/input_K.pb). Files are untrusted: sizes are
// checked against the data present and a file larger than the limit is
// refused before it is parsed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include "subgraph/runtime/session.h"
#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// Largest tensor file accepted (protobuf cannot parse more than 2 GiB).
inline constexpr uint64_t kMaxTensorFileBytes = (uint64_t{2} << 30) - 1;

/// Reads a serialized TensorProto; the name is the proto's own (may be
/// empty). String tensors and external data are refused.
StatusOr<NamedTensor> readTensorProtoFile(const std::string& path);

/// Reads a tensor from a .npy or .pb file, chosen by extension; the name is
/// the TensorProto's for .pb and empty for .npy.
StatusOr<NamedTensor> readTensorFile(const std::string& path);

}  // namespace subgraph::runtime
