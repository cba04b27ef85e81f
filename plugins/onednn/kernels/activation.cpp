//===- plugins/onednn/kernels/activation.cpp - Activations as eltwise post-ops -===//
//
// Maps ONNX activations to oneDNN eltwise algorithms; see activation.h.
//
//===----------------------------------------------------------------------===//
#include "activation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dnnl_context.h"

namespace subgraph::onednn {
namespace {

using Alg = dnnl::algorithm;

struct EltwiseStep {
  Alg alg;
  float alpha;
  float beta;
};

// One or two oneDNN steps per activation; HardSigmoid needs two because
// oneDNN 2.6 has no hardsigmoid algorithm.
int toSteps(const Activation& a, EltwiseStep (&steps)[2]) {
  using K = Activation::Kind;
  switch (a.kind) {
    case K::kRelu: steps[0] = {Alg::eltwise_relu, 0.0f, 0.0f}; return 1;
    case K::kLeakyRelu: steps[0] = {Alg::eltwise_relu, a.alpha, 0.0f}; return 1;
    case K::kClip: steps[0] = {Alg::eltwise_clip, a.alpha, a.beta}; return 1;
    case K::kSigmoid: steps[0] = {Alg::eltwise_logistic, 0.0f, 0.0f}; return 1;
    case K::kHardSwish: steps[0] = {Alg::eltwise_hardswish, 0.0f, 0.0f}; return 1;
    case K::kGeluErf: steps[0] = {Alg::eltwise_gelu_erf, 0.0f, 0.0f}; return 1;
    case K::kGeluTanh: steps[0] = {Alg::eltwise_gelu_tanh, 0.0f, 0.0f}; return 1;
    case K::kTanh: steps[0] = {Alg::eltwise_tanh, 0.0f, 0.0f}; return 1;
    case K::kLinear: steps[0] = {Alg::eltwise_linear, a.alpha, a.beta}; return 1;
    case K::kHardSigmoid:
      steps[0] = {Alg::eltwise_linear, a.alpha, a.beta};
      steps[1] = {Alg::eltwise_clip, 0.0f, 1.0f};
      return 2;
  }
  return 0;
}

}  // namespace

float Activation::apply(float x) const {
  switch (kind) {
    case Kind::kRelu: return std::max(x, 0.0f);
    case Kind::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case Kind::kClip: return std::min(std::max(x, alpha), beta);
    case Kind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Kind::kHardSigmoid: return std::max(0.0f, std::min(1.0f, alpha * x + beta));
    case Kind::kHardSwish: return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
    case Kind::kGeluErf: return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
    case Kind::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case Kind::kTanh: return std::tanh(x);
    case Kind::kLinear: return alpha * x + beta;
  }
  return x;
}

std::string Activation::describe() const {
  switch (kind) {
    case Kind::kRelu: return "Relu";
    case Kind::kLeakyRelu: return fmt::format("LeakyRelu({})", alpha);
    case Kind::kClip: return fmt::format("Clip({}, {})", alpha, beta);
    case Kind::kSigmoid: return "Sigmoid";
    case Kind::kHardSigmoid: return fmt::format("HardSigmoid({}, {})", alpha, beta);
    case Kind::kHardSwish: return "HardSwish";
    case Kind::kGeluErf: return "Gelu";
    case Kind::kGeluTanh: return "Gelu(tanh)";
    case Kind::kTanh: return "Tanh";
    case Kind::kLinear: return fmt::format("Linear({}, {})", alpha, beta);
  }
  return "?";
}

void appendEltwise(dnnl::post_ops& ops, const Activation& activation) {
  EltwiseStep steps[2];
  int n = toSteps(activation, steps);
  for (int i = 0; i < n; ++i) ops.append_eltwise(1.0f, steps[i].alg, steps[i].alpha, steps[i].beta);
}

dnnl::eltwise_forward::primitive_desc eltwiseDesc(const Activation& activation,
                                                  const dnnl::memory::desc& data) {
  EltwiseStep steps[2];
  int n = toSteps(activation, steps);
  dnnl::primitive_attr attr;
  dnnl::post_ops post;
  for (int i = 1; i < n; ++i)
    post.append_eltwise(1.0f, steps[i].alg, steps[i].alpha, steps[i].beta);
  attr.set_post_ops(post);
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, steps[0].alg, data,
                                   steps[0].alpha, steps[0].beta);
  return dnnl::eltwise_forward::primitive_desc(desc, attr, cpuEngine());
}

}  // namespace subgraph::onednn
