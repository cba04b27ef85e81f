//===- api/mpi_wire.cpp - The bytes one pipeline message carries ----------===//
//
// See mpi_wire.h.
//
//===----------------------------------------------------------------------===//
#include "mpi_wire.h"

#include <cstring>
#include <optional>

namespace subgraph::api::detail {
namespace {

constexpr uint32_t kMagic = 0x53475031;  // "SGP1"
constexpr uint32_t kMaxRank = 16;
constexpr uint32_t kMaxName = 4096;

class Writer {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  void put(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  std::vector<std::byte>& bytes() { return out_; }

 private:
  std::vector<std::byte> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
  std::optional<T> get() {
    if (in_.size() - at_ < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::optional<std::span<const std::byte>> take(uint64_t n) {
    if (in_.size() - at_ < n) return std::nullopt;
    auto s = in_.subspan(at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return s;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  std::span<const std::byte> in_;
  size_t at_ = 0;
};

Status bad(const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "pipeline message: " + what);
}

// One tensor from `r`, or why it does not parse.
StatusOr<std::pair<std::string, Tensor>> readTensor(Reader& r, size_t messageBytes) {
  std::optional<uint32_t> nameSize = r.get<uint32_t>();
  if (!nameSize || *nameSize > kMaxName) return bad("a name's size is missing or too large");
  auto name = r.take(*nameSize);
  std::optional<uint8_t> dtype = name ? r.get<uint8_t>() : std::nullopt;
  std::optional<uint32_t> rank = dtype ? r.get<uint32_t>() : std::nullopt;
  if (!rank || *rank > kMaxRank) return bad("a tensor header is cut short");
  const auto type = static_cast<DataType>(*dtype);
  const size_t element = dataTypeSize(type);
  if (element == 0) return bad("a tensor has element type " + std::to_string(*dtype));
  std::vector<int64_t> dims;
  uint64_t count = 1;
  for (uint32_t d = 0; d < *rank; ++d) {
    std::optional<int64_t> dim = r.get<int64_t>();
    if (!dim || *dim < 0) return bad("a tensor's dims are cut short or negative");
    // A tensor larger than the whole message cannot be in it, and the
    // element count stays far from overflowing.
    if (*dim != 0 && count > messageBytes / static_cast<uint64_t>(*dim))
      return bad("a tensor's dims are larger than the message");
    count *= static_cast<uint64_t>(*dim);
    dims.push_back(*dim);
  }
  std::optional<uint64_t> size = r.get<uint64_t>();
  if (!size || *size != count * element)
    return bad("a tensor's byte count disagrees with its dims");
  auto data = r.take(*size);
  if (!data) return bad("a tensor's bytes are cut short");
  std::string n(reinterpret_cast<const char*>(name->data()), name->size());
  return std::pair{
      n, Tensor(type, std::move(dims), std::vector<std::byte>(data->begin(), data->end()))};
}

}  // namespace

StatusOr<std::vector<std::byte>> encodeWire(WireKind kind, uint64_t index, bool last,
                                            const Values& values, const std::set<std::string>& keep,
                                            size_t maxBytes) {
  Writer w;
  uint32_t count = 0;
  for (const auto& [name, t] : values) count += keep.count(name) ? 1 : 0;
  w.put(kMagic);
  w.put(static_cast<uint32_t>(kind));
  w.put(index);
  w.put(static_cast<uint8_t>(last ? 1 : 0));
  w.put(count);
  for (const auto& [name, t] : values) {
    if (!keep.count(name)) continue;
    if (dataTypeSize(t.dtype()) == 0 || t.dims().size() > kMaxRank || name.size() > kMaxName)
      return Status::invalid("pipeline: value '" + name +
                             "' cannot travel between ranks (strings, or rank above 16)");
    w.put(static_cast<uint32_t>(name.size()));
    w.put(std::as_bytes(std::span(name.data(), name.size())));
    w.put(static_cast<uint8_t>(t.dtype()));
    w.put(static_cast<uint32_t>(t.dims().size()));
    for (int64_t d : t.dims()) w.put(d);
    w.put(static_cast<uint64_t>(t.bytes().size()));
    w.put(t.bytes());
    if (w.bytes().size() > maxBytes)
      return Status::invalid("pipeline: one micro-batch's values pass " + std::to_string(maxBytes) +
                             " bytes, more than one message carries; use more micro-batches");
  }
  return std::move(w.bytes());
}

StatusOr<WireMessage> decodeWire(std::span<const std::byte> bytes) {
  Reader r(bytes);
  std::optional<uint32_t> magic = r.get<uint32_t>();
  if (!magic || *magic != kMagic) return bad("not a subgraph pipeline message");
  // In order: a field that is cut short ends the parse.
  std::optional<uint32_t> kind = r.get<uint32_t>();
  std::optional<uint64_t> index = kind ? r.get<uint64_t>() : std::nullopt;
  std::optional<uint8_t> last = index ? r.get<uint8_t>() : std::nullopt;
  std::optional<uint32_t> count = last ? r.get<uint32_t>() : std::nullopt;
  if (!count) return bad("the header is cut short");
  if (*kind != static_cast<uint32_t>(WireKind::kValues) &&
      *kind != static_cast<uint32_t>(WireKind::kEnd))
    return bad("unknown kind " + std::to_string(*kind));
  WireMessage m;
  m.kind = static_cast<WireKind>(*kind);
  m.index = *index;
  m.last = *last != 0;
  for (uint32_t i = 0; i < *count; ++i) {
    StatusOr<std::pair<std::string, Tensor>> t = readTensor(r, bytes.size());
    if (!t.isOk()) return t.status();
    if (!m.values.emplace(std::move(t->first), std::move(t->second)).second)
      return bad("a value is named twice");
  }
  if (!r.done()) return bad("bytes left over after the last value");
  return m;
}

}  // namespace subgraph::api::detail
