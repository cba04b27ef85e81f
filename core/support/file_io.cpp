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
    return Status(StatusCode::kIo, path + ": cannot open the " + what + ": " + errnoText());
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

namespace {

// A file of a set, written to its temporary file and not yet moved.
struct Staged {
  std::string target;
  std::string temp;    // "" once moved, or when written in place
  std::string backup;  // a hard link to the old target while the set commits
  bool existed = false;
  bool remove = false;  // removeIfEmpty and nothing written
};

// Removes every temporary and backup file left behind, on every path out.
struct StagedCleanup {
  std::vector<Staged>& staged;
  ~StagedCleanup() {
    for (const Staged& s : staged) {
      if (!s.temp.empty()) ::unlink(s.temp.c_str());
      if (!s.backup.empty()) ::unlink(s.backup.c_str());
    }
  }
};

// A name in `folder` that nothing has, from mkostemp's pattern: created
// exclusively, then closed. `unlinkIt` frees the name again, for link().
StatusOr<std::string> freshName(const std::string& path, const std::string& suffix, bool unlinkIt,
                                int* fdOut) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  // mkostemp creates the file with O_CREAT | O_EXCL under a random name, so
  // it never opens an existing file or follows a symlink planted there.
  std::string name = (folder / ("." + target.filename().string() + suffix + "XXXXXX")).string();
  std::vector<char> temp(name.begin(), name.end());
  temp.push_back('\0');
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0)
    return Status::invalid(path + ": cannot open for writing: " + errnoText() +
                           " (creating a new file in '" + folder.string() + "')");
  if (fdOut) {
    *fdOut = fd;
  } else {
    ::close(fd);
  }
  if (unlinkIt) ::unlink(temp.data());
  return std::string(temp.data());
}

// Writes `file` into a new temporary file (or in place, for a device or
// FIFO) and records it in `staged`.
Status stage(const FileToWrite& file, std::vector<Staged>& staged) {
  struct stat st {};
  const bool exists = ::stat(file.path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return Status::invalid(file.path + ": cannot open for writing: it is a directory");
  if (exists && !S_ISREG(st.st_mode)) return writeInPlace(file.path, file.write);
  int rawFd = -1;
  StatusOr<std::string> temp = freshName(file.path, ".", false, &rawFd);
  if (!temp.isOk()) return temp.status();
  UniqueFd fd(rawFd);
  staged.push_back(Staged{file.path, *temp, "", exists, false});
  // The target's mode when it exists, else what a new file would get.
  ::fchmod(fd.get(), exists ? (st.st_mode & 07777) : newFileMode());
  int error = 0;  // the first errno of a failed write, flush or close
  off_t written = 0;
  {
    __gnu_cxx::stdio_filebuf<char> buffer(fd.release(), std::ios::out | std::ios::binary);
    std::ostream out(&buffer);
    file.write(out);  // may throw: StagedCleanup removes the temporary file
    errno = 0;
    out.flush();
    // fsync: a full disk or a quota may only be reported here, and the
    // rename must not publish a file whose data never arrived.
    if (!out || ::fsync(buffer.fd()) != 0) error = errno ? errno : EIO;
    written = ::lseek(buffer.fd(), 0, SEEK_END);
    errno = 0;
    if (buffer.close() == nullptr && error == 0) error = errno ? errno : EIO;
  }
  if (error != 0) return Status::invalid(file.path + ": write failed: " + std::strerror(error));
  staged.back().remove = file.removeIfEmpty && written == 0;
  return Status::ok();
}

// Puts back the targets of staged[0, count), newest first.
void rollBack(std::vector<Staged>& staged, size_t count) {
  for (size_t i = count; i-- > 0;) {
    Staged& s = staged[i];
    if (!s.backup.empty() && ::rename(s.backup.c_str(), s.target.c_str()) == 0) s.backup.clear();
    if (!s.existed) ::unlink(s.target.c_str());
  }
}

// Moves (or removes) one staged file into place; its old target stays as a
// hard link when a later file could still fail.
Status commitOne(Staged& s, bool keepBackup) {
  if (s.existed && keepBackup) {
    StatusOr<std::string> backup = freshName(s.target, ".old.", true, nullptr);
    if (!backup.isOk()) return backup.status();
    if (::link(s.target.c_str(), backup->c_str()) != 0)
      return Status::invalid(s.target +
                             ": cannot keep the old file while replacing it: " + errnoText());
    s.backup = *backup;
  }
  if (s.remove) {
    if (s.existed && ::unlink(s.target.c_str()) != 0)
      return Status::invalid(s.target + ": cannot remove it: " + errnoText());
    return Status::ok();
  }
  if (::rename(s.temp.c_str(), s.target.c_str()) != 0)
    return Status::invalid(s.target + ": cannot move the written file into place: " + errnoText());
  s.temp.clear();
  return Status::ok();
}

}  // namespace

Status writeFileAtomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  return writeFilesAtomically({FileToWrite{path, write, false}});
}

Status writeFilesAtomically(const std::vector<FileToWrite>& files) {
  std::vector<Staged> staged;
  staged.reserve(files.size());
  StagedCleanup cleanup{staged};
  // 1. Every file written in full, or nothing replaced.
  for (const FileToWrite& f : files) SUBGRAPH_RETURN_IF_ERROR(stage(f, staged));
  // 2. Moved into place in order; a failure puts the earlier ones back.
  for (size_t i = 0; i < staged.size(); ++i) {
    Status moved = commitOne(staged[i], i + 1 < staged.size());
    if (!moved.isOk()) {
      rollBack(staged, i + 1);
      return moved;
    }
  }
  return Status::ok();
}

}  // namespace subgraph
