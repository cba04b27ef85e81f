//===- plugins/onednn/backend/resize_family.cpp - Resize regions -===//
//
// The resize family; see resize_family.h. What must not fuse, and why:
//  * scales that are not whole numbers, or that touch N or C: for whole
//    numbers oneDNN's mapping (output over input size) is ONNX's scale and
//    every input size has an integer output size; oneDNN resamples the
//    spatial dims only;
//  * runtime `scales` or `sizes`, and constant `sizes` over an input whose
//    H or W is not static, or that are not whole multiples of it: the
//    factor would not be known when the region is formed. Constant sizes
//    over a static input (what F.interpolate(size=...) exports to once
//    the Shape -> Slice -> Concat chain is folded) are whole factors like
//    scales: ONNX then takes sizes / input as the scale;
//  * linear with another coordinate mode than half_pixel (or
//    pytorch_half_pixel, the same for outputs larger than 1), nearest with
//    another than asymmetric + floor, cubic, antialias, and the opset-18
//    `axes`/`keep_aspect_ratio_policy`: oneDNN has one mapping per mode;
//  * linear, where the result is re-quantized (a dynamically quantized
//    model's upsample): oneDNN rounds the interpolation differently in the
//    last bit from the reference (which computes it as ONNX Runtime does),
//    and re-quantization turns that into whole quantization steps.
//
//===----------------------------------------------------------------------===//
#include "resize_family.h"

#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "region_support.h"
#include "resampling.h"

namespace subgraph::onednn {
namespace {

// The whole-number H and W factors of a Resize's constant scales, or a
// reason why there are none.
std::optional<ResampleSpec> specOf(const sdk::NodeView& n, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<ResampleSpec> {
    *why = std::move(reason);
    return std::nullopt;
  };
  std::vector<float> s;
  if (n.numInputs() > 3 && n.input(3)) {
    sdk::ValueView sizes = n.input(3);
    if (!isConstant(sizes) || sizes.dtype() != sdk::DataType::kInt64 ||
        sizes.constantData<int64_t>().size() != 4)
      return fail("sizes are not a constant int64 tensor of 4 elements");
    // -1 marks a symbolic or unknown dim.
    sdk::ValueView input = n.input(0);
    std::optional<int32_t> rank = input.rank();
    std::vector<int64_t> in = input.dims();
    if (!rank || *rank != 4 || in[2] < 0 || in[3] < 0)
      return fail("sizes are given and the input's H and W are not static");
    std::span<const int64_t> want = sizes.constantData<int64_t>();
    for (size_t i = 0; i < 4; ++i) {
      int64_t d = in[i];
      if (i < 2) {
        if (d < 0 || want[i] != d) return fail("sizes touch the batch or channel dim");
        s.push_back(1.0f);
      } else if (d < 1 || want[i] % d != 0) {
        return fail("sizes are not whole multiples of the input's H and W");
      } else {
        s.push_back(static_cast<float>(want[i] / d));
      }
    }
  } else {
    if (n.numInputs() < 3 || !n.input(2)) return fail("no scales input");
    sdk::ValueView scales = n.input(2);
    if (!isConstant(scales) || scales.dtype() != sdk::DataType::kFloat32 ||
        scales.constantData<float>().size() != 4)
      return fail("scales are not a constant f32 tensor of 4 elements");
    s = floatsOf(scales);
  }
  if (n.attrInt("antialias", 0) != 0) return fail("antialias is not supported");
  if (n.hasAttr("axes")) return fail("the axes attribute is not supported");
  if (n.attrString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return fail("keep_aspect_ratio_policy other than stretch is not supported");
  ResampleSpec spec;
  std::string mode = n.attrString("mode", "nearest");
  std::string coords = n.attrString("coordinate_transformation_mode", "half_pixel");
  if (mode == "linear") {
    if (coords != "half_pixel" && coords != "pytorch_half_pixel")
      return fail("linear Resize with coordinate mode '" + coords +
                  "' (only half_pixel maps onto oneDNN)");
    spec.mode = ResampleSpec::Mode::kLinear;
  } else if (mode == "nearest") {
    if (coords != "asymmetric" || n.attrString("nearest_mode", "round_prefer_floor") != "floor")
      return fail("nearest Resize other than asymmetric + floor");
    spec.mode = ResampleSpec::Mode::kNearest;
  } else {
    return fail("mode '" + mode + "' is not supported");
  }
  if (s[0] != 1.0f || s[1] != 1.0f) return fail("scales touch the batch or channel dim");
  for (size_t i = 0; i < 2; ++i) {
    float f = s[2 + i];
    if (!(f >= 1.0f) || f != std::floor(f) || f > 1024.0f)
      return fail("scales are not whole numbers (1 to 1024)");
    spec.factors[i] = static_cast<int64_t>(f);
  }
  return spec;
}

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("resize");
  p.add(sdk::OpPattern("Resize").where(predicates::outputRank(4)).where([](const sdk::NodeView& n) {
    std::string why;
    std::optional<ResampleSpec> spec = specOf(n, &why);
    if (!spec) return sdk::Decision::no(why);
    if (spec->mode == ResampleSpec::Mode::kLinear)
      return predicates::resultNotRequantized("oneDNN's linear interpolation")(n);
    return sdk::Decision::yes();
  }));
  return std::make_unique<sdk::PatternProperty>("resize", std::move(p));
}

class ResizeRegionKernel final : public UnaryRegionKernel<Resampling> {
 public:
  ResizeRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : UnaryRegionKernel<Resampling>(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("resize", "Resize");
    std::string why;
    std::optional<ResampleSpec> spec = specOf(n, &why);
    if (!spec) throw Unsupported(why);
    spec->format = blockedFormat(region, context);
    input_ = body.inputIndex(n.input(0));
    core_ = std::make_unique<Resampling>(*spec);
  }
};

}  // namespace

Family resizeFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<ResizeRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
