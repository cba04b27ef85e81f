//===- core/text/external_data.cpp - Constants kept beside a .sg file -----===//
//
// Reading the external constants of a text graph; see external_data.h for
// the rules that keep a hostile location inside the graph's directory.
//
//===----------------------------------------------------------------------===//
#include "external_data.h"

#include <filesystem>
#include <system_error>

namespace subgraph::text {

std::string externalLocationProblem(const std::string& location) {
  if (location.empty()) return "an empty file name";
  for (char c : location)
    if (static_cast<unsigned char>(c) < 0x20) return "a control character in the file name";
  std::filesystem::path path(location);
  if (path.is_absolute() || path.has_root_name() || path.has_root_directory())
    return "an absolute path; external data must lie beside the graph file";
  for (const std::filesystem::path& part : path)
    if (part == "..") return "'..' in the path; external data must lie beside the graph file";
  return "";
}

StatusOr<std::vector<std::byte>> ExternalDataReader::read(const std::string& location,
                                                          uint64_t offset, uint64_t bytes) {
  auto refuse = [&](const std::string& why) {
    return Status::invalid("external data '" + location + "': " + why);
  };
  if (dir_.empty())
    return refuse("a graph read from memory or stdin has no directory to read it from");
  if (std::string why = externalLocationProblem(location); !why.empty()) return refuse(why);
  if (location != openLocation_) {
    file_.close();
    file_.clear();
    openLocation_.clear();
    std::filesystem::path path = std::filesystem::path(dir_) / location;
    std::error_code ec;
    std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
      return Status::error(StatusCode::kNotFound,
                           "external data '" + location + "': no such file " + path.string());
    if (!std::filesystem::is_regular_file(status)) return refuse("not a regular file");
    fileSize_ = std::filesystem::file_size(path, ec);
    if (ec) return refuse("cannot read its size");
    file_.open(path, std::ios::binary);
    if (!file_) return refuse("cannot be opened");
    openLocation_ = location;
    if (seen_.insert(location).second) bytesAvailable_ += fileSize_;
  }
  if (offset > fileSize_ || bytes > fileSize_ - offset)
    return refuse("bytes " + std::to_string(offset) + " + " + std::to_string(bytes) +
                  " lie past its end (" + std::to_string(fileSize_) + " bytes)");
  if (bytes > bytesAvailable_ - bytesRead_)
    return refuse("the graph reads more bytes than its data files hold (" +
                  std::to_string(bytesAvailable_) + "); constants may not share bytes");
  bytesRead_ += bytes;
  std::vector<std::byte> data(static_cast<size_t>(bytes));
  file_.seekg(static_cast<std::streamoff>(offset));
  file_.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));
  if (!file_ || static_cast<uint64_t>(file_.gcount()) != bytes) {
    openLocation_.clear();  // reopen next time rather than trust the stream
    return refuse("read failed at byte " + std::to_string(offset));
  }
  return data;
}

}  // namespace subgraph::text
