//===- runtime/io/tensor_file.cpp - Tensors from .npy and .pb files -------===//
//
// TensorProto decoding with libonnx's generated classes (the shared
// onnx_proto library, as subgraph::onnx uses, so one copy of the descriptors
// exists per process). Element data may be in raw_data or in the typed
// repeated fields; both are checked against the dims before use.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/tensor_file.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "subgraph/runtime/npy.h"
#include "subgraph/support/file_io.h"

namespace subgraph::runtime {
namespace {

template <typename Src, typename Dst>
void widenInto(const Src& field, std::vector<std::byte>& bytes) {
  bytes.resize(static_cast<size_t>(field.size()) * sizeof(Dst));
  Dst* out = reinterpret_cast<Dst*>(bytes.data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
}

StatusOr<Tensor> fromProto(const onnx::TensorProto& proto, const std::string& source) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return Status::error(StatusCode::kUnsupported,
                         source + ": external tensor data is not supported here");
  const DataType dtype = static_cast<DataType>(proto.data_type());
  if (dtype == DataType::kString)
    return Status::error(StatusCode::kUnsupported,
                         source + ": string tensors are not supported at run time");
  const size_t esize = dataTypeSize(dtype);
  if (esize == 0)
    return Status::error(StatusCode::kUnsupported, source + ": unsupported TensorProto data_type " +
                                                       std::to_string(proto.data_type()));
  std::vector<int64_t> dims;
  uint64_t count = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0 || (d != 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d)))
      return Status::invalid(source + ": dims are negative or too large");
    count *= static_cast<uint64_t>(d);
    dims.push_back(d);
  }
  std::vector<std::byte> bytes;
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    bytes.resize(raw.size());
    if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
  } else {
    switch (dtype) {
      case DataType::kFloat32:
        widenInto<decltype(proto.float_data()), float>(proto.float_data(), bytes);
        break;
      case DataType::kFloat64:
        widenInto<decltype(proto.double_data()), double>(proto.double_data(), bytes);
        break;
      case DataType::kInt64:
        widenInto<decltype(proto.int64_data()), int64_t>(proto.int64_data(), bytes);
        break;
      case DataType::kUInt32:
        widenInto<decltype(proto.uint64_data()), uint32_t>(proto.uint64_data(), bytes);
        break;
      case DataType::kUInt64:
        widenInto<decltype(proto.uint64_data()), uint64_t>(proto.uint64_data(), bytes);
        break;
      case DataType::kInt32:
        widenInto<decltype(proto.int32_data()), int32_t>(proto.int32_data(), bytes);
        break;
      case DataType::kInt16:
        widenInto<decltype(proto.int32_data()), int16_t>(proto.int32_data(), bytes);
        break;
      case DataType::kInt8:
        widenInto<decltype(proto.int32_data()), int8_t>(proto.int32_data(), bytes);
        break;
      case DataType::kUInt16:
      case DataType::kFloat16:
      case DataType::kBFloat16:  // 16-bit patterns are stored in int32_data
        widenInto<decltype(proto.int32_data()), uint16_t>(proto.int32_data(), bytes);
        break;
      case DataType::kUInt8:
        widenInto<decltype(proto.int32_data()), uint8_t>(proto.int32_data(), bytes);
        break;
      case DataType::kBool:
        widenInto<decltype(proto.int32_data()), uint8_t>(proto.int32_data(), bytes);
        break;
      default:
        return Status::error(
            StatusCode::kUnsupported,
            source + ": unsupported TensorProto data_type " + std::to_string(proto.data_type()));
    }
  }
  if (bytes.size() != count * esize)
    return Status::invalid(source + ": tensor data is " + std::to_string(bytes.size()) +
                           " bytes, dims need " + std::to_string(count * esize));
  return Tensor(dtype, std::move(dims), std::move(bytes));
}

StatusOr<std::string> readCapped(const std::string& path) {
  return readRegularFile(path, kMaxTensorFileBytes, "tensor file");
}

}  // namespace

StatusOr<NamedTensor> readTensorProtoFile(const std::string& path) {
  StatusOr<std::string> data = readCapped(path);
  if (!data.isOk()) return data.status();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(data.value()))
    return Status::invalid(path + ": not a valid serialized TensorProto");
  StatusOr<Tensor> tensor = fromProto(proto, path);
  if (!tensor.isOk()) return tensor.status();
  return NamedTensor{proto.name(), std::move(tensor).value()};
}

StatusOr<NamedTensor> readTensorFile(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".pb") return readTensorProtoFile(path);
  if (ext == ".npy") {
    StatusOr<Tensor> t = readNpyFile(path);
    if (!t.isOk()) return t.status();
    return NamedTensor{"", std::move(t).value()};
  }
  return Status::invalid(path + ": unknown tensor file type '" + ext + "' (expected .npy or .pb)");
}

}  // namespace subgraph::runtime
