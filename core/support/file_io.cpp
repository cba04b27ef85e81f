//===- core/support/file_io.cpp - Reading and writing files safely --------===//
//
// POSIX calls rather than <fstream> alone, because the checks must apply to
// the file actually opened: a stat() before open() leaves a window in which
// the path can be swapped for a FIFO, and an ofstream opened by name follows
// whatever symlink sits there.
//
//===----------------------------------------------------------------------===//
#include "subgraph/support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ext/stdio_filebuf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace subgraph {
namespace {

std::string errnoText() { return std::strerror(errno); }

/// The mode a new file gets: the process umask applied to 0666, read from
/// /proc because umask() can only be read by changing it, which would race
/// with other threads creating files.
mode_t newFileMode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0)
      return 0666 & ~static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 0644;
}

/// Writes through `write` to a device or FIFO that already exists.
Status writeInPlace(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return Status::invalid(path + ": cannot open for writing: " + errnoText());
  write(out);
  out.flush();
  if (!out) return Status::invalid(path + ": write failed: " + errnoText());
  return Status::ok();
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::string> readRegularFile(const std::string& path, uint64_t maxBytes,
                                      const std::string& what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer forever. It has no effect on the regular files accepted below.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0)
    return Status(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
                  path + ": cannot open the " + what + ": " + errnoText());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return Status::invalid(path + ": cannot stat the " + what + ": " + errnoText());
  if (S_ISDIR(st.st_mode))
    return Status::invalid(path + ": not a regular file (a directory); expected a " + what);
  if (!S_ISREG(st.st_mode))
    return Status::invalid(path + ": not a regular file (a device, pipe or socket); expected a " +
                           what);
  auto tooBig = [&](uint64_t size) {
    return Status(StatusCode::kLimitExceeded,
                  path + ": the " + what + " is " + std::to_string(size) +
                      " bytes, over the limit of " + std::to_string(maxBytes) + " bytes");
  };
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > maxBytes) return tooBig(size);
  // The stated size is a hint, not trusted: files in /proc state 0 and a
  // file may grow while it is read, so the cap applies to what is read.
  std::string data(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (true) {
    if (done == data.size()) {
      // Full: probe for one more byte before growing, so that a file of
      // the stated size (the usual case) ends in a buffer of exactly its
      // size. Growing first would copy it into a zeroed buffer twice as
      // large and keep that capacity, doubling the memory a large file
      // holds.
      char probe = 0;
      ssize_t n = ::read(fd.get(), &probe, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::invalid(path + ": reading the " + what + " failed: " + errnoText());
      if (n == 0) break;
      if (done >= maxBytes) return tooBig(done + 1);
      data.resize(
          static_cast<size_t>(std::min<uint64_t>(maxBytes, std::max<size_t>(4096, 2 * done))));
      data[done++] = probe;
      continue;
    }
    ssize_t n = ::read(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::invalid(path + ": reading the " + what + " failed: " + errnoText());
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

Status writeFileAtomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return Status::invalid(path + ": cannot open for writing: it is a directory");
    if (!S_ISREG(st.st_mode)) return writeInPlace(path, write);
  }
  fs::path target(path);
  fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  // mkostemp creates the file with O_CREAT | O_EXCL under a random name, so
  // it never opens an existing file or follows a symlink planted there.
  std::string name = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> temp(name.begin(), name.end());
  temp.push_back('\0');
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (fd.get() < 0)
    return Status::invalid(path + ": cannot open for writing: " + errnoText() +
                           " (creating a new file in '" + folder.string() + "')");
  const std::string tempPath(temp.data());
  // The target's mode when it exists, else what a new file would get.
  ::fchmod(fd.get(), S_ISREG(st.st_mode) ? (st.st_mode & 07777) : newFileMode());
  struct RemoveUnlessMoved {
    const std::string& file;
    bool moved = false;
    ~RemoveUnlessMoved() {
      if (!moved) ::unlink(file.c_str());
    }
  } cleanup{tempPath};
  int error = 0;  // the first errno of a failed write, flush or close
  {
    __gnu_cxx::stdio_filebuf<char> buffer(fd.release(), std::ios::out | std::ios::binary);
    std::ostream out(&buffer);
    write(out);  // may throw: `cleanup` removes the temporary file
    errno = 0;
    out.flush();
    // fsync: a full disk or a quota may only be reported here, and the
    // rename below must not publish a file whose data never arrived.
    if (!out || ::fsync(buffer.fd()) != 0) error = errno ? errno : EIO;
    errno = 0;
    if (buffer.close() == nullptr && error == 0) error = errno ? errno : EIO;
  }
  if (error != 0) return Status::invalid(path + ": write failed: " + std::strerror(error));
  if (::rename(tempPath.c_str(), path.c_str()) != 0)
    return Status::invalid(path + ": cannot move the written file into place: " + errnoText());
  cleanup.moved = true;
  return Status::ok();
}

}  // namespace subgraph
