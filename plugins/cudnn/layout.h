//===- plugins/cudnn/layout.h - Host-side layout and type conversion -*- C++ -*-===//
//
// The host half of every copy between subgraph's NCHW float buffers and the
// cuDNN plugin's device tensors (channels-last, float32 or float16): a
// tiled, parallel transpose that converts element types on the way. The
// naive loop writes each element to a new cache line (the destination
// stride is the channel count); on ResNet-50 at batch 32 it took 4 s of
// the 6 s a request took (docs/cudnn.md), so tiles of 32x32 keep both
// sides in cache and oneTBB spreads the tiles over the cores.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace subgraph::cudnn {

/// The conversion of a float copy that keeps the type. A lambda, not a
/// function: transposeBatches and convertElements inline it per element.
inline constexpr auto kSameFloat = [](float v) { return v; };

/// For each of `n` batches, dst (cols x rows) = convert(src (rows x cols))
/// transposed. NCHW -> NHWC is rows = C, cols = H*W; the reverse swaps them.
template <typename In, typename Out, typename Convert>
void transposeBatches(const In* src, Out* dst, int64_t n, int64_t rows, int64_t cols,
                      Convert convert) {
  constexpr int64_t kTile = 32;
  const int64_t rowTiles = (rows + kTile - 1) / kTile;
  const int64_t tiles = n * rowTiles;
  auto body = [&](const tbb::blocked_range<int64_t>& range) {
    for (int64_t t = range.begin(); t < range.end(); ++t) {
      const int64_t b = t / rowTiles, r0 = (t % rowTiles) * kTile;
      const int64_t r1 = std::min(rows, r0 + kTile);
      const In* s = src + b * rows * cols;
      Out* d = dst + b * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) d[c * rows + r] = convert(s[r * cols + c]);
      }
    }
  };
  // Small tensors stay on the calling thread: a task costs more than them.
  if (n * rows * cols < (int64_t{1} << 16))
    body(tbb::blocked_range<int64_t>(0, tiles));
  else
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, tiles), body);
}

/// dst[i] = convert(src[i]) for `count` elements, in parallel when large.
template <typename In, typename Out, typename Convert>
void convertElements(const In* src, Out* dst, int64_t count, Convert convert) {
  auto body = [&](const tbb::blocked_range<int64_t>& range) {
    for (int64_t i = range.begin(); i < range.end(); ++i) dst[i] = convert(src[i]);
  };
  if (count < (int64_t{1} << 16))
    body(tbb::blocked_range<int64_t>(0, count));
  else
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, 1 << 14), body);
}

}  // namespace subgraph::cudnn
