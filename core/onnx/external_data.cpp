//===- core/onnx/external_data.cpp - Confined reading of external tensors -===//
//
// Rules, each checked in this order and each failing with a message that
// names the tensor and the path:
//  1. The location is a non-empty relative path without NUL bytes.
//  2. Lexically, it never climbs above the model folder: "a/../b" is fine,
//     "../x" and "a/../../x" are not.
//  3. After resolving every symlink (std::filesystem::canonical), the file
//     still lies inside the canonical model folder. This catches a symlink
//     anywhere on the path that points outside.
//  4. The file is a regular file with exactly one hard link. A second link
//     may live anywhere on the file system, so a multiply-linked file cannot
//     be proven to belong to the model folder, and is refused.
//  5. offset and length are plain non-negative decimals, and the requested
//     byte range lies inside the file and has exactly the tensor's size.
// The file is opened with O_NOFOLLOW and checked with fstat on the open
// descriptor, so the checks in 4 and 5 apply to the bytes actually read.
//
//===----------------------------------------------------------------------===//
#include "external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "subgraph/support/file_io.h"

namespace subgraph::onnx_io {
namespace {

namespace fs = std::filesystem;

struct ExternalLocation {
  std::string location;
  uint64_t offset = 0;
  bool hasLength = false;
  uint64_t length = 0;
};

// Parses a decimal that must consume the whole string; "+5", " 5", "-1" and
// "0x10" are all rejected.
bool parseUnsigned(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

StatusOr<ExternalLocation> parseLocation(const ::onnx::TensorProto& proto,
                                         const std::string& what) {
  ExternalLocation loc;
  bool hasLocation = false;
  for (const auto& entry : proto.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      loc.location = entry.value();
      hasLocation = true;
    } else if (key == "offset") {
      if (!parseUnsigned(entry.value(), &loc.offset))
        return Status::invalid(what + ": external data offset '" + entry.value() +
                               "' is not a non-negative integer");
    } else if (key == "length") {
      if (!parseUnsigned(entry.value(), &loc.length))
        return Status::invalid(what + ": external data length '" + entry.value() +
                               "' is not a non-negative integer");
      loc.hasLength = true;
    }
    // "checksum" and unknown keys carry no location information.
  }
  if (!hasLocation || loc.location.empty())
    return Status::invalid(what + " has external data without a location");
  return loc;
}

// Rule 2: walks the components, tracking depth below the model folder.
bool escapesLexically(const std::string& location) {
  int depth = 0;
  for (const auto& part : fs::path(location)) {
    std::string p = part.string();
    if (p == "..") {
      if (--depth < 0) return true;
    } else if (!p.empty() && p != ".") {
      ++depth;
    }
  }
  return false;
}

bool isInside(const fs::path& file, const fs::path& dir) {
  std::string f = file.string(), d = dir.string();
  if (!d.empty() && d.back() != '/') d += '/';
  return f.size() > d.size() && f.compare(0, d.size(), d) == 0;
}

}  // namespace

StatusOr<std::vector<std::byte>> readExternalData(const ::onnx::TensorProto& proto,
                                                  uint64_t expectedBytes,
                                                  const std::string& baseDir,
                                                  std::string_view whatView) {
  std::string what(whatView);
  StatusOr<ExternalLocation> locOr = parseLocation(proto, what);
  if (!locOr) return locOr.status();
  const ExternalLocation& loc = *locOr;
  const std::string quoted = "'" + loc.location + "'";

  if (baseDir.empty())
    return Status::invalid(what + ": external data " + quoted +
                           " cannot be read: the model was not loaded from a folder");
  if (loc.location.find('\0') != std::string::npos)
    return Status::invalid(what + ": external data path " + quoted + " contains a NUL byte");
  if (loc.location.front() == '/')
    return Status::invalid(what + ": external data path " + quoted +
                           " is absolute; only paths inside the model folder are allowed");
  if (escapesLexically(loc.location))
    return Status::invalid(what + ": external data path " + quoted +
                           " uses '..' to leave the model folder");

  std::error_code ec;
  fs::path base = fs::canonical(baseDir, ec);
  if (ec)
    return Status(StatusCode::kNotFound,
                  what + ": model folder '" + baseDir + "' cannot be resolved: " + ec.message());
  fs::path target = fs::canonical(base / loc.location, ec);
  if (ec)
    return Status(StatusCode::kNotFound, what + ": external data file " + quoted + " in '" +
                                             base.string() + "' cannot be opened: " + ec.message());
  if (!isInside(target, base))
    return Status::invalid(what + ": external data path " + quoted + " resolves to '" +
                           target.string() + "', outside the model folder '" + base.string() +
                           "' (through a symlink)");

  // O_NONBLOCK: opening a FIFO would wait for a writer forever; the
  // fstat below then refuses anything but a regular file.
  UniqueFd fd(::open(target.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0)
    return Status(StatusCode::kNotFound, what + ": external data file " + quoted +
                                             " cannot be opened: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return Status::invalid(what + ": external data path " + quoted + " is not a regular file");
  if (st.st_nlink > 1)
    return Status::invalid(what + ": external data file " + quoted + " has " +
                           std::to_string(st.st_nlink) +
                           " hard links; a hard link may point outside the model folder, so "
                           "multiply-linked files are refused");

  auto fileSize = static_cast<uint64_t>(st.st_size);
  if (loc.offset > fileSize)
    return Status::invalid(what + ": external data offset " + std::to_string(loc.offset) +
                           " is beyond the end of " + quoted + " (" + std::to_string(fileSize) +
                           " bytes)");
  uint64_t length = loc.hasLength ? loc.length : fileSize - loc.offset;
  if (length > fileSize - loc.offset)
    return Status::invalid(what + ": external data range offset " + std::to_string(loc.offset) +
                           " + length " + std::to_string(length) + " is beyond the end of " +
                           quoted + " (" + std::to_string(fileSize) + " bytes)");
  if (length != expectedBytes)
    return Status::invalid(what + ": external data in " + quoted + " is " + std::to_string(length) +
                           " bytes but the tensor's shape needs " + std::to_string(expectedBytes));

  std::vector<std::byte> bytes(static_cast<size_t>(length));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pread(fd.get(), bytes.data() + done, bytes.size() - done,
                        static_cast<off_t>(loc.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status::invalid(what + ": reading external data from " + quoted + " failed after " +
                             std::to_string(done) + " of " + std::to_string(length) + " bytes");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

}  // namespace subgraph::onnx_io
