//===- runtime/io/npy.cpp - NumPy .npy files ------------------------------===//
//
// Encoder and decoder for the .npy format (magic, version, little-endian
// header length, a Python-literal header dict, raw C-order data). The
// decoder never trusts the file: the header is bounded, every dim is parsed
// with overflow checks, and the data size must match the header exactly.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/npy.h"

#include "subgraph/runtime/tensor_file.h"
#include "subgraph/support/file_io.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace subgraph::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMaxHeader = 1 << 16;

struct DescrEntry {
  const char* descr;
  DataType dtype;
};
const DescrEntry kDescrs[] = {
    {"f4", DataType::kFloat32}, {"f8", DataType::kFloat64}, {"f2", DataType::kFloat16},
    {"i1", DataType::kInt8},    {"i2", DataType::kInt16},   {"i4", DataType::kInt32},
    {"i8", DataType::kInt64},   {"u1", DataType::kUInt8},   {"u2", DataType::kUInt16},
    {"u4", DataType::kUInt32},  {"u8", DataType::kUInt64},  {"b1", DataType::kBool},
};

Status bad(const std::string& source, const std::string& what) {
  return Status::invalid(source + ": not a valid .npy file: " + what);
}

// Finds `'key':` in the header dict and returns the text after it.
bool findKey(const std::string& header, const std::string& key, size_t& pos) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return false;
  at = header.find(':', at);
  if (at == std::string::npos) return false;
  pos = at + 1;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  return pos < header.size();
}

}  // namespace

StatusOr<std::string> encodeNpy(const Tensor& tensor) {
  const char* descr = nullptr;
  for (const DescrEntry& e : kDescrs)
    if (e.dtype == tensor.dtype()) descr = e.descr;
  if (!descr)
    return Status::error(StatusCode::kUnsupported, "cannot write element type " +
                                                       std::string(dataTypeName(tensor.dtype())) +
                                                       " as .npy (NumPy has no such dtype)");
  std::string shape = "(";
  for (size_t i = 0; i < tensor.dims().size(); ++i)
    shape += std::to_string(tensor.dims()[i]) + ", ";
  if (tensor.dims().size() > 1) shape.resize(shape.size() - 2);
  if (tensor.dims().size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  char order = dataTypeSize(tensor.dtype()) == 1 ? '|' : '<';
  std::string header = std::string("{'descr': '") + order + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that magic + version + length + header is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  auto bytes = tensor.bytes();
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return out;
}

StatusOr<Tensor> decodeNpy(std::string_view data, const std::string& source) {
  if (data.size() < 10 || std::memcmp(data.data(), kMagic, 6) != 0) return bad(source, "bad magic");
  const unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLen = 0, offset = 0;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) |
                static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return bad(source, "truncated header length");
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return bad(source, "unsupported version " + std::to_string(major));
  }
  if (headerLen > kMaxHeader || offset + headerLen > data.size())
    return bad(source, "header length out of range");
  std::string header(data.substr(offset, headerLen));
  offset += headerLen;

  size_t pos = 0;
  if (!findKey(header, "descr", pos) || header[pos] != '\'') return bad(source, "no 'descr'");
  size_t end = header.find('\'', pos + 1);
  if (end == std::string::npos) return bad(source, "unterminated 'descr'");
  std::string descr = header.substr(pos + 1, end - pos - 1);
  if (descr.size() != 3) return bad(source, "unsupported descr '" + descr + "'");
  char byteOrder = descr[0];
  DataType dtype = DataType::kUndefined;
  for (const DescrEntry& e : kDescrs)
    if (descr.substr(1) == e.descr) dtype = e.dtype;
  if (dtype == DataType::kUndefined)
    return Status::error(StatusCode::kUnsupported,
                         source + ": unsupported .npy dtype '" + descr + "'");
  if (byteOrder == '>' && dataTypeSize(dtype) > 1)
    return Status::error(StatusCode::kUnsupported,
                         source + ": big-endian .npy data is not supported");
  if (!findKey(header, "fortran_order", pos)) return bad(source, "no 'fortran_order'");
  bool fortran = header.compare(pos, 4, "True") == 0;

  if (!findKey(header, "shape", pos) || header[pos] != '(') return bad(source, "no 'shape'");
  end = header.find(')', pos);
  if (end == std::string::npos) return bad(source, "unterminated 'shape'");
  std::vector<int64_t> dims;
  uint64_t count = 1;
  std::string item;
  std::istringstream shape(header.substr(pos + 1, end - pos - 1));
  while (std::getline(shape, item, ',')) {
    size_t a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
    if (a == std::string::npos) continue;  // the trailing comma of "(3,)"
    item = item.substr(a, b - a + 1);
    if (item.empty() || item.size() > 18 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return bad(source, "bad dim '" + item + "'");
    int64_t d = std::stoll(item);
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return bad(source, "shape is too large");
    count *= static_cast<uint64_t>(d);
    dims.push_back(d);
  }
  if (fortran && dims.size() > 1)
    return Status::error(StatusCode::kUnsupported,
                         source + ": Fortran-order .npy data is not supported");
  const uint64_t bytes = count * dataTypeSize(dtype);
  if (count > (uint64_t{1} << 40) || data.size() - offset != bytes)
    return bad(source, "data is " + std::to_string(data.size() - offset) +
                           " bytes, the header promises " + std::to_string(bytes));
  std::vector<std::byte> payload(static_cast<size_t>(bytes));
  if (bytes) std::memcpy(payload.data(), data.data() + offset, static_cast<size_t>(bytes));
  return Tensor(dtype, std::move(dims), std::move(payload));
}

Status writeNpyFile(const std::string& path, const Tensor& tensor) {
  StatusOr<std::string> bytes = encodeNpy(tensor);
  if (!bytes.isOk()) return bytes.status();
  const std::string& data = bytes.value();
  return writeFileAtomically(path, [&](std::ostream& out) {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  });
}

StatusOr<Tensor> readNpyFile(const std::string& path) {
  // Only a regular file, and at most as much as any tensor file: a FIFO or
  // a symlink to /dev/zero must end in an error, not a hang.
  StatusOr<std::string> data = readRegularFile(path, kMaxTensorFileBytes, ".npy file");
  if (!data.isOk()) return data.status();
  return decodeNpy(data.value(), path);
}

}  // namespace subgraph::runtime
