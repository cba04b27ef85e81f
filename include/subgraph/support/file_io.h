//===- subgraph/support/file_io.h - Reading and writing files safely -*- C++ -*-===//
//
// Every file subgraph reads (a model, external tensor data, a .npy or .pb
// input) names a path an attacker or a careless user may control, and every
// file it writes may replace one the user cares about. These two functions
// are the only way the libraries and the CLI touch such files:
//  - readRegularFile() opens without blocking and without following a
//    final symlink to a device, accepts only a regular file, and reads at
//    most a given number of bytes, so a FIFO cannot hang it and a symlink to
//    /dev/zero cannot exhaust memory.
//  - writeFileAtomically() writes into a new file created exclusively, with
//    an unpredictable name, in the target's folder, then renames it over the
//    target: the target holds either its old contents or all of the new
//    ones, never a truncated mix, and a planted symlink at a predictable
//    temporary name is never followed. The input of `convert m.sg m.sg` on
//    a full disk survives.
//  - writeFilesAtomically() does the same for files that belong together,
//    a model's text and its data file: all are written before any replaces
//    its target, and a failed move puts the old ones back, so a failed
//    `convert new.sg old.sg` never leaves old.sg with new.sg's constants.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "subgraph/support/status.h"

namespace subgraph {

/// Owns a POSIX file descriptor (-1: none) and closes it when it goes out
/// of scope, on every path out of the code that opened it.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  /// Gives up ownership, e.g. to a stream buffer that closes it.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

/// Reads the whole regular file at `path`. Fails with one line naming the
/// file and `what` ("model", "tensor file") when it is missing, is not a
/// regular file (a directory, FIFO, socket or device, also through a
/// symlink), cannot be read, or holds more than `maxBytes` bytes (code
/// kLimitExceeded; the size is checked before reading and again on what is
/// read, since a file may grow).
StatusOr<std::string> readRegularFile(const std::string& path, uint64_t maxBytes,
                                      const std::string& what);

/// Writes `path` through `write` atomically (see the file comment). A path
/// that names an existing device or FIFO (/dev/null, /dev/stdout) is written
/// in place, since there is no file to replace. `write` may throw; the
/// temporary file is removed and the exception passes through. Returns an
/// error naming `path` when the file cannot be created, written in full,
/// or moved into place.
Status writeFileAtomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

/// One file of a set written by writeFilesAtomically().
struct FileToWrite {
  std::string path;
  std::function<void(std::ostream&)> write;
  /// Remove `path` instead of writing it when `write` wrote nothing (a
  /// model whose constants all fit in its text has no data file).
  bool removeIfEmpty = false;
};

/// Writes `files` as one: each into a new temporary file beside its target
/// (as writeFileAtomically does), and only once every one is written in
/// full are they moved into place, in order. When a move fails, the targets
/// already replaced get their old files back, so the set holds either all
/// its old files or all the new ones. A target that is a device or FIFO is
/// written in place, outside that promise. `write` may throw; the temporary
/// files are removed and the exception passes through.
Status writeFilesAtomically(const std::vector<FileToWrite>& files);

}  // namespace subgraph
