//===- plugins/onednn/kernels/tensor_format.h - Activation memory formats -*- C++ -*-===//
//
// How the compute core lays out the activations it exchanges: plain
// row-major (what the rest of subgraph reads), and one oneDNN-internal
// layout per precision mode. In fp32 that is nChw16c, oneDNN's
// channel-blocked layout for 4-D NCHW tensors on AVX-512 (channels in
// blocks of 16, the last block zero-padded). In bf16 it is channels-last
// (nhwc): oneDNN 2.6's AMX and AVX512-BF16 convolutions (brgconv) take only
// channels-last bf16, and with nChw16c bf16 the first convolution of a
// network falls back to the reference kernel, 100x slower. Values stay in
// the internal layout from one oneDNN kernel to the next; they are
// reordered only where a value leaves oneDNN.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace subgraph::onednn {

/// The layout of an activation tensor.
enum class Format {
  kPlain,      ///< Row-major, f32.
  kBlocked16,  ///< nChw16c (4-D only), f32.
  kNhwcBf16,   ///< nhwc (4-D only), bf16: the bf16 precision mode.
};

/// oneDNN dims from int64 dims.
dnnl::memory::dims toDnnlDims(std::span<const int64_t> dims);

/// The memory desc of a tensor of `dims` in `format`.
dnnl::memory::desc formatDesc(std::span<const int64_t> dims, Format format);

/// Bytes a tensor of `dims` occupies in `format` (nChw16c rounds the
/// channel dim up to 16).
size_t formatBytes(std::span<const int64_t> dims, Format format);

/// True for the oneDNN-internal formats (everything but plain): values in
/// them must be reordered before anything outside oneDNN reads them.
inline bool isBlocked(Format format) { return format != Format::kPlain; }

/// Converts a tensor between formats with a oneDNN reorder (cached per
/// dims and formats): the copy at the edge of a oneDNN region.
void reorderTensor(std::span<const int64_t> dims, Format from, const void* src, Format to,
                   void* dst);

}  // namespace subgraph::onednn
