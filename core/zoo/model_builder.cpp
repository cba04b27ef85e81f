//===- core/zoo/model_builder.cpp - Building zoo models -------------------===//
//
// Weights are generated straight into the tensor's byte buffer, one stream
// per tensor name, so that the largest model (BERT-base, 85M parameters)
// needs no second copy and each tensor's values depend only on the seed and
// its name.
//
//===----------------------------------------------------------------------===//
#include "model_builder.h"

#include <cmath>
#include <cstring>

#include "subgraph/zoo/random.h"

namespace subgraph::zoo::detail {

ModelBuilder::ModelBuilder(std::string graphName, const ModelOptions& options)
    : graph_(std::make_unique<Graph>(std::move(graphName))), options_(options) {
  if (options.batch < 0) throw Error("batch must be positive (or 0 for a symbolic batch)");
  graph_->setOpsetImport("", 17);
}

Dim ModelBuilder::batchDim() const {
  return options_.batch > 0 ? Dim(options_.batch) : Dim::symbol("N");
}

Value* ModelBuilder::addImageLikeInput(const std::vector<int64_t>& rest) {
  Shape shape{batchDim()};
  shape.insert(shape.end(), rest.begin(), rest.end());
  return graph_->addInput("input", TensorType(DataType::kFloat32, std::move(shape)));
}

std::unique_ptr<Graph> ModelBuilder::finish(Value* value, const std::vector<int64_t>& rest) {
  Shape shape{batchDim()};
  shape.insert(shape.end(), rest.begin(), rest.end());
  graph_->renameValue(value, "output");
  value->setType(TensorType(DataType::kFloat32, std::move(shape)));
  graph_->addOutput(value);
  return std::move(graph_);
}

Value* ModelBuilder::op(std::string_view opType, const std::string& name,
                        std::vector<Value*> inputs, std::vector<Attribute> attrs,
                        const std::string& outputName) {
  const OpKey* key = OpRegistry::global().intern("", opType);
  Value* out = graph_->createValue(outputName.empty() ? name : outputName);
  graph_->addNode(key, std::move(inputs), {out}, std::move(attrs), name);
  return out;
}

Value* ModelBuilder::uniform(const std::string& name, std::vector<int64_t> dims, double lo,
                             double hi) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<std::byte> bytes(static_cast<size_t>(count) * sizeof(float));
  SplitMix64 rng = streamFor(options_.seed, name);
  for (int64_t i = 0; i < count; ++i) {
    auto value = static_cast<float>(rng.uniform(lo, hi));
    std::memcpy(bytes.data() + i * static_cast<int64_t>(sizeof(float)), &value, sizeof(float));
  }
  return graph_->addInitializer(name,
                                Tensor(DataType::kFloat32, std::move(dims), std::move(bytes)));
}

Value* ModelBuilder::heUniform(const std::string& name, std::vector<int64_t> dims, int64_t fanIn,
                               double gain) {
  double bound = gain * std::sqrt(3.0 / static_cast<double>(fanIn));
  return uniform(name, std::move(dims), -bound, bound);
}

Value* ModelBuilder::constant(const std::string& name, Tensor data) {
  return graph_->addInitializer(name, std::move(data));
}

Value* ModelBuilder::conv(const std::string& name, Value* x, int64_t inC, int64_t outC,
                          int64_t kernel, int64_t stride, int64_t group, double gain) {
  int64_t fanIn = inC / group * kernel * kernel;
  Value* w = heUniform(name + ".weight", {outC, inC / group, kernel, kernel}, fanIn, gain);
  int64_t pad = kernel / 2;
  return op("Conv", name, {x, w},
            {Attribute("dilations", std::vector<int64_t>{1, 1}), Attribute("group", group),
             Attribute("kernel_shape", std::vector<int64_t>{kernel, kernel}),
             Attribute("pads", std::vector<int64_t>{pad, pad, pad, pad}),
             Attribute("strides", std::vector<int64_t>{stride, stride})});
}

Value* ModelBuilder::batchNorm(const std::string& name, Value* x, int64_t channels) {
  Value* scale = uniform(name + ".weight", {channels}, 0.9, 1.1);
  Value* bias = uniform(name + ".bias", {channels}, -0.1, 0.1);
  Value* mean = uniform(name + ".running_mean", {channels}, -0.1, 0.1);
  Value* var = uniform(name + ".running_var", {channels}, 0.9, 1.1);
  return op("BatchNormalization", name, {x, scale, bias, mean, var},
            {Attribute("epsilon", 1e-5f), Attribute("momentum", 0.9f)});
}

Value* ModelBuilder::linear(const std::string& name, Value* x, int64_t in, int64_t out,
                            const std::string& outputName) {
  // torch.nn.Linear's default initialization: U(-1/sqrt(in), 1/sqrt(in)).
  double bound = 1.0 / std::sqrt(static_cast<double>(in));
  Value* w = uniform(name + ".weight", {out, in}, -bound, bound);
  Value* b = uniform(name + ".bias", {out}, -bound, bound);
  return op("Gemm", name, {x, w, b},
            {Attribute("alpha", 1.0f), Attribute("beta", 1.0f), Attribute("transB", int64_t{1})},
            outputName);
}

}  // namespace subgraph::zoo::detail
