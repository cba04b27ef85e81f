//===- plugins/onednn/kernels/shape_cache.h - Per-shape prepared state -*- C++ -*-===//
//
// Every kernel of the compute core creates its oneDNN primitives (and
// reorders its weights) once per distinct input shape and reuses them for
// every later run: creating a primitive costs far more than small ones take
// to run. ShapeCache is that map, safe for concurrent readers and writers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace subgraph::onednn {

/// A thread-safe map from input dims to prepared state `T`.
template <typename T>
class ShapeCache {
 public:
  /// The entry for `key`, or null.
  std::shared_ptr<const T> find(const std::vector<int64_t>& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second;
  }
  /// The entry for `key`; throws std::logic_error if it was never prepared.
  std::shared_ptr<const T> get(const std::vector<int64_t>& key, const char* what) const {
    std::shared_ptr<const T> entry = find(key);
    if (!entry) throw std::logic_error(std::string(what) + ": run before prepare for this shape");
    return entry;
  }
  /// Stores `entry` for `key` unless another thread got there first; returns
  /// the entry kept.
  std::shared_ptr<const T> insert(const std::vector<int64_t>& key, std::shared_ptr<const T> entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.emplace(key, std::move(entry)).first->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::vector<int64_t>, std::shared_ptr<const T>> entries_;
};

/// The concatenation of several dims lists with separators, as one key.
inline std::vector<int64_t> shapeKey(std::initializer_list<std::vector<int64_t>> parts) {
  std::vector<int64_t> key;
  for (const std::vector<int64_t>& p : parts) {
    key.insert(key.end(), p.begin(), p.end());
    key.push_back(-1);
  }
  return key;
}

}  // namespace subgraph::onednn
