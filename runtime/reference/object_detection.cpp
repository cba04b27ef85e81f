//===- runtime/reference/object_detection.cpp - NMS and RoiAlign ----------===//
//
// NonMaxSuppression: per batch and class, boxes whose score exceeds
// score_threshold are taken in descending score order (ties: lower box
// index first) and kept unless their IoU with an already kept box of that
// class exceeds iou_threshold, until max_output_boxes_per_class are kept (0
// keeps none). Boxes are [y1, x1, y2, x2] with either corner first, or
// [x_center, y_center, width, height] with center_point_box; a box of zero
// area overlaps nothing. Output rows are (batch, class, box), batch-major,
// then class, then selection order. The count depends on the data, so every
// input is a shape input and the selection runs at resize time as well.
//
// RoiAlign: each region of interest, scaled by spatial_scale (and shifted
// by half a pixel under coordinate_transformation_mode half_pixel, the
// default since opset 16; output_half_pixel before), is split into
// output_height x output_width bins, each sampled on a sampling_ratio grid
// (ceil(roi size / bins) when 0) by bilinear interpolation, and pooled by
// avg or max. Follows the ONNX reference (and ONNX Runtime): samples more
// than one pixel outside the image count as 0, and max mode takes the
// largest weighted corner of each sample.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <numeric>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

//===--- NonMaxSuppression ------------------------------------------------===//

class NonMaxSuppressionKernel final : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const Node& node)
      : centerPointBox_(node.getInt("center_point_box", 0) != 0), workLimit_(kernelWorkLimit()) {}
  std::vector<size_t> shapeInputs() const override { return {0, 1, 2, 3, 4}; }

  Status resize(ResizeContext& ctx) const override {
    std::vector<int64_t> selected;
    SUBGRAPH_RETURN_IF_ERROR(select(
        ctx, [&](size_t i) { return ctx.hasInput(i) ? ctx.inputContent(i) : nullptr; }, selected));
    ctx.setOutput(
        0, TensorDesc{DataType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3}, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    std::vector<int64_t> selected;
    SUBGRAPH_RETURN_IF_ERROR(select(
        ctx, [&](size_t i) { return ctx.hasInput(i) ? &ctx.input(i) : nullptr; }, selected));
    if (static_cast<int64_t>(selected.size()) != ctx.output(0).numElements())
      return ctx.fail("the selection differs from the one sized at resize time");
    std::copy(selected.begin(), selected.end(), ctx.output(0).mutableData<int64_t>());
    return Status::ok();
  }

 private:
  // Corners (ymin, xmin, ymax, xmax) of box `b`.
  struct Box {
    double y0, x0, y1, x1;
    double area() const { return (y1 - y0) * (x1 - x0); }
  };
  Box corners(const std::vector<double>& boxes, int64_t b) const {
    const double* v = boxes.data() + b * 4;
    if (centerPointBox_)
      return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
    return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
  }
  static bool overlapsTooMuch(const Box& a, const Box& b, double threshold) {
    const double iy = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    const double ix = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
    if (!(iy > 0 && ix > 0)) return false;
    const double inter = iy * ix, areaA = a.area(), areaB = b.area();
    const double uni = areaA + areaB - inter;
    if (!(areaA > 0 && areaB > 0 && uni > 0)) return false;
    return inter / uni > threshold;
  }

  // Rows (batch, class, box) of the kept boxes, flattened.
  template <typename Ctx, typename Input>
  Status select(const Ctx& ctx, Input input, std::vector<int64_t>& out) const {
    const TensorView* boxesIn = input(0);
    const TensorView* scoresIn = input(1);
    if (!boxesIn || !scoresIn) return ctx.fail("boxes and scores are required");
    const auto& bd = boxesIn->dims();
    const auto& sd = scoresIn->dims();
    if (bd.size() != 3 || bd[2] != 4)
      return ctx.fail("boxes must be [batch, spatial, 4], got " + boxesIn->desc().toString());
    if (sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1])
      return ctx.fail("scores must be [" + std::to_string(bd[0]) + ", classes, " +
                      std::to_string(bd[1]) + "], got " + scoresIn->desc().toString());
    auto scalar = [&](size_t i, double fallback) {
      const TensorView* t = input(i);
      return t && t->numElements() > 0 ? readDoubles(*t)[0] : fallback;
    };
    const int64_t maxPerClass =
        input(2) && input(2)->numElements() > 0 ? readInts(*input(2))[0] : 0;
    const double iouThreshold = scalar(3, 0.0);
    const bool hasScoreThreshold = input(4) && input(4)->numElements() > 0;
    const double scoreThreshold = scalar(4, 0.0);
    if (iouThreshold < 0 || iouThreshold > 1)
      return ctx.fail("iou_threshold must be in [0, 1], got " + std::to_string(iouThreshold));
    const int64_t batches = bd[0], spatial = bd[1], classes = sd[1];
    // Each candidate is compared with up to max_output_boxes_per_class kept
    // boxes: that input sets the inner loop, the boxes only bound it.
    SUBGRAPH_RETURN_IF_ERROR(checkKernelWork(
        ctx.node(),
        CheckedInt(batches) * classes * spatial * std::clamp<int64_t>(maxPerClass, 0, spatial),
        workLimit_, "max_output_boxes_per_class " + std::to_string(maxPerClass)));
    const std::vector<double> boxes = readDoubles(*boxesIn), scores = readDoubles(*scoresIn);
    std::vector<int64_t> order;
    std::vector<Box> kept;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        if (maxPerClass <= 0) continue;
        const double* s = scores.data() + (b * classes + c) * spatial;
        order.clear();
        for (int64_t i = 0; i < spatial; ++i)
          if (!hasScoreThreshold || s[i] > scoreThreshold) order.push_back(i);
        // Descending score, ties by index: a strict weak order even with
        // NaN, which sorts last.
        std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
          if (std::isnan(s[i])) return false;
          return std::isnan(s[j]) || s[i] > s[j];
        });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= maxPerClass) break;
          const Box box = corners(boxes, b * spatial + i);
          bool suppressed = false;
          for (const Box& k : kept)
            suppressed = suppressed || overlapsTooMuch(box, k, iouThreshold);
          if (suppressed) continue;
          kept.push_back(box);
          out.insert(out.end(), {b, c, i});
        }
      }
    return Status::ok();
  }

  bool centerPointBox_;
  uint64_t workLimit_;  // WorkLimits::kernelWork of the session; 0: none
};

//===--- RoiAlign ---------------------------------------------------------===//

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(const Node& node)
      : outH_(node.getInt("output_height", 1)),
        outW_(node.getInt("output_width", 1)),
        samplingRatio_(node.getInt("sampling_ratio", 0)),
        spatialScale_(node.getFloat("spatial_scale", 1.0f)),
        workLimit_(kernelWorkLimit()) {
    const std::string mode = node.getString("mode", "avg");
    if (mode != "avg" && mode != "max") throwNodeError(node, "unknown mode '" + mode + "'");
    max_ = mode == "max";
    // Opset 10 had no attribute and behaved as output_half_pixel.
    const std::string coord = node.getString(
        "coordinate_transformation_mode", opsetOf(node) < 16 ? "output_half_pixel" : "half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel")
      throwNodeError(node, "unknown coordinate_transformation_mode '" + coord + "'");
    halfPixel_ = coord == "half_pixel";
    if (outH_ <= 0 || outW_ <= 0 || samplingRatio_ < 0)
      throwNodeError(node,
                     "output_height and output_width must be positive and sampling_ratio "
                     "not negative");
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& rois = ctx.inputDesc(1);
    const TensorDesc& idx = ctx.inputDesc(2);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    if (rois.dtype != x.dtype) return ctx.fail("rois differ from X in element type");
    if (x.dims.size() != 4) return ctx.fail("X must be [N, C, H, W], got " + x.toString());
    if (rois.dims.size() != 2 || rois.dims[1] != 4)
      return ctx.fail("rois must be [num_rois, 4], got " + rois.toString());
    if (idx.dims != std::vector<int64_t>{rois.dims[0]} || !typeInSet(idx.dtype, kIndexTypes))
      return ctx.fail("batch_indices must be int [" + std::to_string(rois.dims[0]) + "], got " +
                      idx.toString());
    // Each output element averages sampling_ratio^2 samples: an attribute
    // of 2^31 asks for 2^62 of them per element, which no run should start.
    if (samplingRatio_ > 0)
      SUBGRAPH_RETURN_IF_ERROR(checkKernelWork(
          ctx.node(),
          CheckedInt(rois.dims[0]) * x.dims[1] * outH_ * outW_ * samplingRatio_ * samplingRatio_,
          workLimit_, "sampling_ratio " + std::to_string(samplingRatio_)));
    ctx.setOutput(0, TensorDesc{x.dtype, {rois.dims[0], x.dims[1], outH_, outW_}, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const std::vector<double> rois = readDoubles(ctx.input(1));
    const std::vector<int64_t> batch = readInts(ctx.input(2));
    const int64_t numRois = ctx.input(1).dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    for (int64_t r = 0; r < numRois; ++r)
      if (batch[static_cast<size_t>(r)] < 0 || batch[static_cast<size_t>(r)] >= x.dim(0))
        return ctx.fail("batch_indices[" + std::to_string(r) +
                        "] = " + std::to_string(batch[static_cast<size_t>(r)]) +
                        " is out of range for " + std::to_string(x.dim(0)) + " images");
    if (samplingRatio_ == 0) SUBGRAPH_RETURN_IF_ERROR(checkAdaptiveWork(ctx, rois, numRois, C));
    visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(numRois * C, outH_ * outW_ * 16, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t r = task / C, c = task % C;
          const T* image = px + (batch[static_cast<size_t>(r)] * C + c) * H * W;
          pool(image, H, W, rois.data() + r * 4, py + task * outH_ * outW_);
        }
      });
    });
    return Status::ok();
  }

 private:
  // One bilinear sample: four (index, weight) corners, all zero outside.
  struct Sample {
    int64_t pos[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
  };

  static Sample bilinear(int64_t H, int64_t W, double y, double x) {
    Sample s;
    if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W) ||
        std::isnan(y) || std::isnan(x) || H <= 0 || W <= 0)
      return s;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
    if (y0 >= H - 1) {
      y0 = y1 = H - 1;
      y = static_cast<double>(y0);
    } else {
      y1 = y0 + 1;
    }
    if (x0 >= W - 1) {
      x0 = x1 = W - 1;
      x = static_cast<double>(x0);
    } else {
      x1 = x0 + 1;
    }
    const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
    const double hy = 1 - ly, hx = 1 - lx;
    s.pos[0] = y0 * W + x0;
    s.pos[1] = y0 * W + x1;
    s.pos[2] = y1 * W + x0;
    s.pos[3] = y1 * W + x1;
    s.w[0] = hy * hx;
    s.w[1] = hy * lx;
    s.w[2] = ly * hx;
    s.w[3] = ly * lx;
    return s;
  }

  // The sampling grid along one side of a bin: sampling_ratio, or with 0
  // the bin's extent rounded up (data decides: checkAdaptiveWork bounds it).
  int64_t gridSize(double binExtent) const {
    if (samplingRatio_ > 0) return samplingRatio_;
    const double g = std::ceil(binExtent);
    // A NaN or huge roi must not make the loop unbounded.
    return g >= 1 && g < 1e6 ? static_cast<int64_t>(g) : int64_t{1};
  }

  // With sampling_ratio 0 each roi's size sets its grid: a roi of 10^6
  // pixels samples 10^12 times per bin. The samples of every roi, against
  // the work limit, before any is taken.
  Status checkAdaptiveWork(const RunContext& ctx, const std::vector<double>& rois, int64_t numRois,
                           int64_t channels) const {
    CheckedInt total = 0;
    for (int64_t r = 0; r < numRois && total.ok(); ++r) {
      const double* roi = rois.data() + r * 4;
      double roiW = (roi[2] - roi[0]) * spatialScale_, roiH = (roi[3] - roi[1]) * spatialScale_;
      if (!halfPixel_) {
        roiW = std::max(roiW, 1.0);
        roiH = std::max(roiH, 1.0);
      }
      const int64_t gh = gridSize(roiH / static_cast<double>(outH_));
      const int64_t gw = gridSize(roiW / static_cast<double>(outW_));
      total = total + CheckedInt(channels) * outH_ * outW_ * gh * gw;
    }
    return checkKernelWork(ctx.node(), total, workLimit_, "the rois' sampling grids");
  }

  template <typename T>
  void pool(const T* image, int64_t H, int64_t W, const double* roi, T* out) const {
    if (H <= 0 || W <= 0) {  // Nothing to sample (and image[0] does not exist).
      std::fill(out, out + outH_ * outW_, store<T>(Compute<T>(0)));
      return;
    }
    const double offset = halfPixel_ ? 0.5 : 0.0;
    const double scale = spatialScale_;
    const double x0 = roi[0] * scale - offset, y0 = roi[1] * scale - offset;
    const double x1 = roi[2] * scale - offset, y1 = roi[3] * scale - offset;
    double roiW = x1 - x0, roiH = y1 - y0;
    if (!halfPixel_) {
      roiW = std::max(roiW, 1.0);
      roiH = std::max(roiH, 1.0);
    }
    const double binH = roiH / static_cast<double>(outH_), binW = roiW / static_cast<double>(outW_);
    const int64_t gridH = gridSize(binH), gridW = gridSize(binW);
    const double count = static_cast<double>(std::max<int64_t>(gridH * gridW, 1));
    for (int64_t ph = 0; ph < outH_; ++ph)
      for (int64_t pw = 0; pw < outW_; ++pw) {
        double acc = 0;
        bool first = true;
        for (int64_t iy = 0; iy < gridH; ++iy) {
          const double y = y0 + static_cast<double>(ph) * binH +
                           (static_cast<double>(iy) + 0.5) * binH / static_cast<double>(gridH);
          for (int64_t ix = 0; ix < gridW; ++ix) {
            const double x = x0 + static_cast<double>(pw) * binW +
                             (static_cast<double>(ix) + 0.5) * binW / static_cast<double>(gridW);
            const Sample s = bilinear(H, W, y, x);
            double v[4];
            for (int k = 0; k < 4; ++k) v[k] = s.w[k] * static_cast<double>(load(image[s.pos[k]]));
            if (!max_) {
              acc += v[0] + v[1] + v[2] + v[3];
            } else {
              const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
              acc = first ? m : std::max(acc, m);
              first = false;
            }
          }
        }
        out[ph * outW_ + pw] = store<T>(static_cast<Compute<T>>(max_ ? acc : acc / count));
      }
  }

  int64_t outH_, outW_, samplingRatio_;
  float spatialScale_;
  uint64_t workLimit_;  // WorkLimits::kernelWork of the session; 0: none
  bool max_ = false, halfPixel_ = true;
};

}  // namespace

void registerObjectDetectionKernels(Provider& p) {
  p.add("NonMaxSuppression", creatorFor<NonMaxSuppressionKernel>());
  p.add("RoiAlign", creatorFor<RoiAlignKernel>());
}

}  // namespace subgraph::runtime::reference
