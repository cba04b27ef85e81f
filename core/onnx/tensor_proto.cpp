//===- core/onnx/tensor_proto.cpp - TensorProto and TypeProto mapping -----===//
//
// The reader never trusts a count in the file: dims are checked one by one
// (non-negative, at most maxDimSize, product without overflow), the decoded
// size is checked against maxTensorBytes before any allocation, and the data
// present (raw_data bytes or typed-field element count) must match the shape
// exactly. subgraph stores tensors little-endian, as ONNX raw_data does.
//
//===----------------------------------------------------------------------===//
#include "tensor_proto.h"

#include <bit>
#include <cstring>

#include "external_data.h"

namespace subgraph::onnx_io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; subgraph copies it byte for byte");

using ::onnx::TensorProto;

// Which TensorProto field holds typed (non-raw) data for each element type,
// per the comments in onnx.proto.
enum class TypedField { kFloat, kInt32, kInt64, kUInt64, kDouble, kString };

TypedField typedFieldFor(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: return TypedField::kFloat;
    case DataType::kInt64: return TypedField::kInt64;
    case DataType::kUInt32:
    case DataType::kUInt64: return TypedField::kUInt64;
    case DataType::kFloat64: return TypedField::kDouble;
    case DataType::kString: return TypedField::kString;
    default: return TypedField::kInt32;  // int8/16/32, uint8/16, bool, f16, bf16
  }
}

const char* typedFieldName(TypedField field) {
  switch (field) {
    case TypedField::kFloat: return "float_data";
    case TypedField::kInt32: return "int32_data";
    case TypedField::kInt64: return "int64_data";
    case TypedField::kUInt64: return "uint64_data";
    case TypedField::kDouble: return "double_data";
    case TypedField::kString: return "string_data";
  }
  return "?";
}

int typedFieldSize(const TensorProto& proto, TypedField field) {
  switch (field) {
    case TypedField::kFloat: return proto.float_data_size();
    case TypedField::kInt32: return proto.int32_data_size();
    case TypedField::kInt64: return proto.int64_data_size();
    case TypedField::kUInt64: return proto.uint64_data_size();
    case TypedField::kDouble: return proto.double_data_size();
    case TypedField::kString: return proto.string_data_size();
  }
  return 0;
}

// Narrows each element of a repeated field into the tensor's element type.
template <typename Dst, typename Src>
std::vector<std::byte> narrowInto(const google::protobuf::RepeatedField<Src>& field) {
  std::vector<std::byte> bytes(static_cast<size_t>(field.size()) * sizeof(Dst));
  auto* out = reinterpret_cast<Dst*>(bytes.data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
  return bytes;
}

std::vector<std::byte> decodeInt32Field(const TensorProto& proto, DataType dtype) {
  const auto& f = proto.int32_data();
  switch (dtype) {
    case DataType::kInt8: return narrowInto<int8_t>(f);
    case DataType::kUInt8: return narrowInto<uint8_t>(f);
    case DataType::kInt16: return narrowInto<int16_t>(f);
    case DataType::kBool: {
      // Any non-zero int32 is true; stored as the canonical byte 1.
      std::vector<std::byte> bytes(static_cast<size_t>(f.size()));
      for (int i = 0; i < f.size(); ++i)
        bytes[i] = std::byte{f.Get(i) != 0 ? uint8_t{1} : uint8_t{0}};
      return bytes;
    }
    case DataType::kUInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:  // the int32 holds the 16-bit pattern
      return narrowInto<uint16_t>(f);
    default: return narrowInto<int32_t>(f);
  }
}

std::vector<std::byte> decodeTypedField(const TensorProto& proto, DataType dtype) {
  switch (typedFieldFor(dtype)) {
    case TypedField::kFloat: return narrowInto<float>(proto.float_data());
    case TypedField::kInt64: return narrowInto<int64_t>(proto.int64_data());
    case TypedField::kDouble: return narrowInto<double>(proto.double_data());
    case TypedField::kUInt64:
      return dtype == DataType::kUInt32 ? narrowInto<uint32_t>(proto.uint64_data())
                                        : narrowInto<uint64_t>(proto.uint64_data());
    case TypedField::kInt32: return decodeInt32Field(proto, dtype);
    case TypedField::kString: break;
  }
  return {};
}

std::string str(std::string_view s) { return std::string(s); }

}  // namespace

std::string quoteName(std::string_view name) { return "'" + str(name) + "'"; }

StatusOr<DataType> dataTypeFromOnnx(int32_t elemType, std::string_view what) {
  switch (elemType) {
    case TensorProto::UNDEFINED:
    case TensorProto::FLOAT:
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::INT16:
    case TensorProto::INT32:
    case TensorProto::INT64:
    case TensorProto::STRING:
    case TensorProto::BOOL:
    case TensorProto::FLOAT16:
    case TensorProto::DOUBLE:
    case TensorProto::UINT32:
    case TensorProto::UINT64:
    case TensorProto::BFLOAT16: return static_cast<DataType>(elemType);
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128:
      return Status(StatusCode::kUnsupported,
                    str(what) + " has a complex element type, which subgraph does not support");
    default:
      return Status::invalid(str(what) + " has unknown element type " + std::to_string(elemType));
  }
}

StatusOr<int64_t> checkedElementCount(const google::protobuf::RepeatedField<int64_t>& dims,
                                      int64_t maxDimSize, std::string_view what) {
  int64_t count = 1;
  for (int i = 0; i < dims.size(); ++i) {
    int64_t d = dims.Get(i);
    if (d < 0)
      return Status::invalid(str(what) + " has negative dim " + std::to_string(d) + " at axis " +
                             std::to_string(i));
    if (d > maxDimSize)
      return Status(StatusCode::kLimitExceeded,
                    str(what) + " has dim " + std::to_string(d) + " at axis " + std::to_string(i) +
                        ", over the maxDimSize limit of " + std::to_string(maxDimSize));
    if (d != 0 && count > INT64_MAX / d)
      return Status::invalid(str(what) + " has dims whose element count overflows int64");
    count *= d;
  }
  return count;
}

StatusOr<Tensor> tensorFromProto(const TensorProto& proto, std::string_view what,
                                 const TensorReadOptions& options) {
  StatusOr<DataType> dtypeOr = dataTypeFromOnnx(proto.data_type(), what);
  if (!dtypeOr) return dtypeOr.status();
  DataType dtype = *dtypeOr;
  if (dtype == DataType::kUndefined) return Status::invalid(str(what) + " has no data_type");
  if (proto.has_segment())
    return Status(StatusCode::kUnsupported,
                  str(what) + " is a segment of a larger tensor, which subgraph does not support");

  StatusOr<int64_t> countOr = checkedElementCount(proto.dims(), options.maxDimSize, what);
  if (!countOr) return countOr.status();
  int64_t count = *countOr;
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());

  // Bytes the decoded tensor needs; checked against the limit before any
  // buffer is allocated; an element count whose byte size overflows uint64
  // is over any limit.
  uint64_t elemSize = dtype == DataType::kString ? 0 : dataTypeSize(dtype);
  bool overflows = elemSize != 0 && static_cast<uint64_t>(count) > UINT64_MAX / elemSize;
  uint64_t needBytes = overflows ? UINT64_MAX : static_cast<uint64_t>(count) * elemSize;
  if (needBytes > options.maxTensorBytes)
    return Status(StatusCode::kLimitExceeded, str(what) + " needs " + std::to_string(needBytes) +
                                                  " bytes, over the maxTensorBytes limit of " +
                                                  std::to_string(options.maxTensorBytes));

  bool external = proto.data_location() == TensorProto::EXTERNAL;
  if (external) {
    if (dtype == DataType::kString)
      return Status::invalid(str(what) +
                             " is a string tensor with external data, which ONNX forbids");
    if (proto.has_raw_data())
      return Status::invalid(str(what) + " has both raw_data and external data");
    auto bytes = readExternalData(proto, needBytes, options.externalDataDir, what);
    if (!bytes) return bytes.status();
    return Tensor(dtype, std::move(dims), std::move(bytes).value());
  }

  TypedField field = typedFieldFor(dtype);
  for (TypedField other : {TypedField::kFloat, TypedField::kInt32, TypedField::kInt64,
                           TypedField::kUInt64, TypedField::kDouble, TypedField::kString}) {
    if (other != field && typedFieldSize(proto, other) != 0)
      return Status::invalid(str(what) + " of type " + str(dataTypeName(dtype)) +
                             " stores data in " + typedFieldName(other) + " instead of " +
                             typedFieldName(field));
  }

  if (dtype == DataType::kString) {
    if (proto.has_raw_data())
      return Status::invalid(str(what) + " is a string tensor with raw_data");
    if (proto.string_data_size() != count)
      return Status::invalid(str(what) + " has " + std::to_string(proto.string_data_size()) +
                             " strings in string_data but its shape needs " +
                             std::to_string(count));
    uint64_t total = 0;
    for (const auto& s : proto.string_data()) total += s.size();
    if (total > options.maxTensorBytes)
      return Status(StatusCode::kLimitExceeded,
                    str(what) + " holds " + std::to_string(total) +
                        " bytes of strings, over the maxTensorBytes limit of " +
                        std::to_string(options.maxTensorBytes));
    return Tensor(std::move(dims),
                  std::vector<std::string>(proto.string_data().begin(), proto.string_data().end()));
  }

  if (proto.has_raw_data()) {
    if (typedFieldSize(proto, field) != 0)
      return Status::invalid(str(what) + " has both raw_data and " + typedFieldName(field));
    const std::string& raw = proto.raw_data();
    if (raw.size() != needBytes)
      return Status::invalid(str(what) + " has " + std::to_string(raw.size()) +
                             " bytes of raw_data but shape " +
                             shapeToString(Shape(dims.begin(), dims.end())) + " of " +
                             str(dataTypeName(dtype)) + " needs " + std::to_string(needBytes));
    std::vector<std::byte> bytes(raw.size());
    if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
    return Tensor(dtype, std::move(dims), std::move(bytes));
  }

  int present = typedFieldSize(proto, field);
  if (present != count)
    return Status::invalid(str(what) + " has " + std::to_string(present) + " elements in " +
                           typedFieldName(field) + " but shape " +
                           shapeToString(Shape(dims.begin(), dims.end())) + " needs " +
                           std::to_string(count));
  return Tensor(dtype, std::move(dims), decodeTypedField(proto, dtype));
}

StatusOr<TensorType> tensorTypeFromProto(const ::onnx::TypeProto& proto, std::string_view valueName,
                                         int64_t maxDimSize) {
  std::string what = "value '" + str(valueName) + "'";
  switch (proto.value_case()) {
    case ::onnx::TypeProto::VALUE_NOT_SET: return TensorType();
    case ::onnx::TypeProto::kTensorType: break;
    case ::onnx::TypeProto::kSequenceType:
      return Status(
          StatusCode::kUnsupported,
          "unsupported type: " + what + " is a sequence; subgraph supports only tensor values");
    case ::onnx::TypeProto::kMapType:
      return Status(
          StatusCode::kUnsupported,
          "unsupported type: " + what + " is a map; subgraph supports only tensor values");
    case ::onnx::TypeProto::kOptionalType:
      return Status(
          StatusCode::kUnsupported,
          "unsupported type: " + what + " is an optional; subgraph supports only tensor values");
    case ::onnx::TypeProto::kSparseTensorType:
      return Status(StatusCode::kUnsupported,
                    "unsupported type: " + what +
                        " is a sparse tensor; subgraph supports only dense tensors");
    default:
      return Status(StatusCode::kUnsupported,
                    "unsupported type: " + what + " has a non-tensor type");
  }
  const auto& tt = proto.tensor_type();
  StatusOr<DataType> dtype = dataTypeFromOnnx(tt.elem_type(), what);
  if (!dtype) return dtype.status();
  TensorType type(*dtype);
  if (!tt.has_shape()) return type;
  Shape shape;
  shape.reserve(static_cast<size_t>(tt.shape().dim_size()));
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& dim = tt.shape().dim(i);
    if (dim.has_dim_value()) {
      int64_t d = dim.dim_value();
      if (d < 0)
        return Status::invalid(what + " has negative dim " + std::to_string(d) + " at axis " +
                               std::to_string(i));
      if (d > maxDimSize)
        return Status(StatusCode::kLimitExceeded,
                      what + " has dim " + std::to_string(d) + " at axis " + std::to_string(i) +
                          ", over the maxDimSize limit of " + std::to_string(maxDimSize));
      shape.emplace_back(d);
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      shape.push_back(Dim::symbol(dim.dim_param()));
    } else {
      shape.emplace_back();
    }
  }
  type.shape = std::move(shape);
  return type;
}

void tensorToProto(const Tensor& tensor, const std::string& name, TensorProto* proto) {
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  if (tensor.dtype() == DataType::kString) {
    for (const auto& s : tensor.strings()) proto->add_string_data(s);
    return;
  }
  auto bytes = tensor.bytes();
  proto->set_raw_data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void tensorTypeToProto(const TensorType& type, ::onnx::TypeProto* proto) {
  auto* tt = proto->mutable_tensor_type();
  if (type.dtype != DataType::kUndefined) tt->set_elem_type(static_cast<int32_t>(type.dtype));
  if (!type.shape) return;
  auto* shape = tt->mutable_shape();
  for (const Dim& d : *type.shape) {
    auto* dim = shape->add_dim();
    if (d.isStatic())
      dim->set_dim_value(d.size());
    else if (d.isSymbolic())
      dim->set_dim_param(d.symbolName());
  }
}

}  // namespace subgraph::onnx_io
