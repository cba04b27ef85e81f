//===- core/onnx/tensor_proto.h - TensorProto and TypeProto mapping -------===//
//
// Converts between ONNX TensorProto/TypeProto and subgraph's Tensor and
// TensorType, for both the importer and the exporter. Reading is defensive:
// every dim, element count and byte count is checked against the limits and
// against the data actually present before anything is allocated.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "subgraph/ir/tensor.h"
#include "subgraph/ir/types.h"
#include "subgraph/support/status.h"

namespace subgraph::onnx_io {

/// Limits and context for decoding one TensorProto.
struct TensorReadOptions {
  /// Largest decoded tensor, in bytes (ImportOptions::maxTensorBytes).
  uint64_t maxTensorBytes = 0;
  /// Largest static dim (ImportOptions::maxDimSize).
  int64_t maxDimSize = 0;
  /// Folder external data is confined to; empty refuses external data.
  std::string externalDataDir;
};

/// Maps an ONNX TensorProto.DataType number to a DataType. `what` names the
/// tensor or value for the error (kUnsupported for complex types,
/// kInvalidArgument for numbers ONNX does not define).
StatusOr<DataType> dataTypeFromOnnx(int32_t elemType, std::string_view what);

/// Checks a dim list (each in [0, maxDimSize], no overflow) and returns the
/// element count. `what` names the tensor for the error.
StatusOr<int64_t> checkedElementCount(const google::protobuf::RepeatedField<int64_t>& dims,
                                      int64_t maxDimSize, std::string_view what);

/// Decodes a TensorProto (raw_data, typed fields or external data). The
/// error names the tensor; `what` is the tensor's role, e.g. "initializer
/// 'w'" or "attribute 'value' of node 'c1'".
StatusOr<Tensor> tensorFromProto(const ::onnx::TensorProto& proto, std::string_view what,
                                 const TensorReadOptions& options);

/// Decodes a value's TypeProto. An absent type gives an unknown TensorType;
/// sequence, map, optional and sparse types are kUnsupported; negative or
/// oversized dims are kInvalidArgument. `valueName` is used in errors.
StatusOr<TensorType> tensorTypeFromProto(const ::onnx::TypeProto& proto, std::string_view valueName,
                                         int64_t maxDimSize);

/// Encodes a tensor; numeric data goes to raw_data (little-endian), strings
/// to string_data.
void tensorToProto(const Tensor& tensor, const std::string& name, ::onnx::TensorProto* proto);

/// Encodes a value type: elem_type when known, a shape when ranked, with
/// dim_value, dim_param or an empty dim for static, symbolic and unknown dims.
void tensorTypeToProto(const TensorType& type, ::onnx::TypeProto* proto);

/// "'name'" or "#<index>" for messages about unnamed things.
std::string quoteName(std::string_view name);

}  // namespace subgraph::onnx_io
