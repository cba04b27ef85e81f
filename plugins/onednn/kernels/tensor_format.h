//===- plugins/onednn/kernels/tensor_format.h - Activation memory formats -*- C++ -*-===//
//
// How the compute core lays out the activations it exchanges. Two formats
// cover the fused families: plain row-major (what the rest of subgraph
// reads) and nChw16c, oneDNN's channel-blocked layout for 4-D NCHW tensors
// on AVX-512 (channels in blocks of 16, the last block zero-padded). Values
// stay blocked from one oneDNN kernel to the next; they are reordered only
// where a value leaves oneDNN. Activations are f32 or, in the bf16
// precision mode, bf16 inside blocked tensors.
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
  kPlain,          ///< Row-major, f32.
  kBlocked16,      ///< nChw16c (4-D only), f32.
  kBlocked16Bf16,  ///< nChw16c (4-D only), bf16: the bf16 precision mode.
};

/// oneDNN dims from int64 dims.
dnnl::memory::dims toDnnlDims(std::span<const int64_t> dims);

/// The memory desc of a tensor of `dims` in `format`.
dnnl::memory::desc formatDesc(std::span<const int64_t> dims, Format format);

/// Bytes a tensor of `dims` occupies in `format` (blocked formats round the
/// channel dim up to 16).
size_t formatBytes(std::span<const int64_t> dims, Format format);

/// True for the blocked formats.
inline bool isBlocked(Format format) { return format != Format::kPlain; }

/// Converts a tensor between formats with a oneDNN reorder (cached per
/// dims and formats): the copy at the edge of a oneDNN region.
void reorderTensor(std::span<const int64_t> dims, Format from, const void* src, Format to,
                   void* dst);

}  // namespace subgraph::onednn
