//===- tests/core/op_inference_fuzz_test.cpp - Bad nodes never crash ------===//
//
// For every built-in op, builds many one-node graphs with random operand
// counts, input types (ranks 0-4, static/symbolic/unknown/zero dims),
// constant integer inputs and attribute values (sometimes of the wrong
// kind), then runs shape inference and verification. Whatever the input,
// both must return a Status: no exception may escape and nothing may crash
// (run it under SUBGRAPH_SANITIZE=ON to also catch memory errors). The seed
// is printed so that a failure can be replayed with SUBGRAPH_FUZZ_SEED.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>

#include "subgraph/ir/op_classes.h"
#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

class NodeFuzzer {
 public:
  explicit NodeFuzzer(unsigned seed) : rng_(seed) {}

  /// A one-node graph applying `schema` to random operands and attributes.
  std::unique_ptr<Graph> build(const OpSchema& schema) {
    auto g = std::make_unique<Graph>("fuzz");
    std::vector<Value*> inputs;
    for (const OperandSpec& spec : schema.inputs) {
      size_t count = spec.arity == Arity::kVariadic ? pick(0, 3) : 1;
      for (size_t i = 0; i < count; ++i) {
        if (spec.arity == Arity::kOptional && chance(0.3)) {
          inputs.push_back(nullptr);
          continue;
        }
        inputs.push_back(randomValue(*g, "in" + std::to_string(inputs.size())));
      }
    }
    if (chance(0.05) && !inputs.empty()) inputs.pop_back();  // too few
    size_t outputs = schema.minOutputs() + pick(0, 2);
    if (chance(0.05)) outputs = pick(0, 4);  // possibly out of range
    std::vector<Attribute> attrs;
    for (const AttrSpec& spec : schema.attributes)
      if (spec.required ? !chance(0.05) : chance(0.6))
        attrs.emplace_back(spec.name, randomAttr(chance(0.1) ? randomKind() : spec.kind));
    Node* n = g->addNode(schema.qualifiedName(), inputs, outputs, std::move(attrs), "n");
    for (Value* out : n->outputs()) g->addOutput(out);
    return g;
  }

 private:
  size_t pick(size_t lo, size_t hi) { return lo + rng_() % (hi - lo + 1); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  Dim randomDim() {
    if (chance(0.02)) return Dim(INT64_MAX);  // sizes from a hostile file
    switch (pick(0, 6)) {
      case 0: return Dim::symbol("N");
      case 1: return Dim::unknown();
      case 2: return Dim(0);
      default: return Dim(static_cast<int64_t>(pick(1, 4)));
    }
  }

  DataType randomDtype() {
    static const DataType kTypes[] = {DataType::kFloat32,  DataType::kFloat16, DataType::kInt64,
                                      DataType::kInt32,    DataType::kBool,    DataType::kUInt8,
                                      DataType::kUndefined};
    return kTypes[pick(0, std::size(kTypes) - 1)];
  }

  std::vector<int64_t> randomInts(size_t maxLen) {
    std::vector<int64_t> v(pick(0, maxLen));
    for (int64_t& x : v) x = static_cast<int64_t>(pick(0, 8)) - 3;
    if (chance(0.05) && !v.empty()) v[0] = chance(0.5) ? INT64_MAX : INT64_MIN;
    return v;
  }

  // A graph input of random type, or an integer / float constant.
  Value* randomValue(Graph& g, const std::string& name) {
    if (chance(0.35)) {
      std::vector<int64_t> values = randomInts(5);
      if (chance(0.5))
        return g.addInitializer(
            name, Tensor::fromVector<int64_t>(DataType::kInt64,
                                              {static_cast<int64_t>(values.size())}, values));
      if (!values.empty() && chance(0.5))
        return g.addInitializer(name,
                                Tensor::fromVector<int64_t>(DataType::kInt64, {}, {values[0]}));
      std::vector<float> floats(values.begin(), values.end());
      return g.addInitializer(
          name, Tensor::fromVector<float>(DataType::kFloat32, {static_cast<int64_t>(floats.size())},
                                          floats));
    }
    TensorType type(randomDtype());
    if (!chance(0.1)) {
      Shape shape(pick(0, 4));
      for (Dim& d : shape) d = randomDim();
      type.shape = std::move(shape);
    }
    return g.addInput(name, std::move(type));
  }

  AttrKind randomKind() { return static_cast<AttrKind>(pick(0, 7)); }

  AttrValue randomAttr(AttrKind kind) {
    static const char* const kStrings[] = {"",       "NOTSET",   "SAME_UPPER", "VALID",
                                           "linear", "constant", "DCR",        "bogus"};
    static const float kFloats[] = {0.0f, 1.0f, 2.5f, -1.0f, 1e30f, NAN, INFINITY};
    switch (kind) {
      case AttrKind::kInt:
        return chance(0.05) ? int64_t{INT64_MAX} : static_cast<int64_t>(pick(0, 9)) - 3;
      case AttrKind::kFloat: return kFloats[pick(0, std::size(kFloats) - 1)];
      case AttrKind::kString: return std::string(kStrings[pick(0, std::size(kStrings) - 1)]);
      case AttrKind::kInts: return randomInts(6);
      case AttrKind::kFloats: return std::vector<float>{kFloats[pick(0, 3)]};
      case AttrKind::kStrings: return std::vector<std::string>{kStrings[pick(0, 7)]};
      case AttrKind::kTensor: {
        std::vector<int64_t> values = randomInts(3);
        return Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(values.size())},
                                           values);
      }
      case AttrKind::kGraph: {
        auto body = std::make_shared<Graph>("body");
        for (size_t i = 0, n = pick(0, 3); i < n; ++i)
          body->addInput("b" + std::to_string(i), TensorType(randomDtype()));
        Value* c = body->addInitializer("c", Tensor::splat(DataType::kFloat32, {2}, 1.0));
        for (size_t i = 0, n = pick(0, 3); i < n; ++i) body->addOutput(c);
        return body;
      }
      default: return std::vector<std::shared_ptr<Graph>>{};
    }
  }

  std::mt19937 rng_;
};

/// The generated members that must not throw on a malformed node.
template <typename T>
void exerciseTypedClass(Node* node) {
  T* typed = dyn_cast<T>(node);
  if (!typed) return;
  std::ostringstream os;
  typed->print(os);
  EXPECT_FALSE(os.str().empty());
  (void)typed->hash();
  EXPECT_TRUE(typed->isEqual(*typed));
  (void)typed->verify();
}

/// Inference and verification return a Status for any malformed node.
TEST(OpInferenceFuzz, RandomNodesNeverThrowOrCrash) {
  const char* env = std::getenv("SUBGRAPH_FUZZ_SEED");
  const unsigned seed =
      env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device()();
  std::printf("OpInferenceFuzz seed %u (replay with SUBGRAPH_FUZZ_SEED=%u)\n", seed, seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  NodeFuzzer fuzzer(seed);
  int inferred = 0, rejected = 0;
  for (const OpSchema* schema : OpRegistry::global().schemas()) {
    if (!schema->domain.empty()) continue;
    for (int trial = 0; trial < 40; ++trial) {
      std::unique_ptr<Graph> g = fuzzer.build(*schema);
      Node* node = g->findNode("n");
      try {
        Status s = inferShapes(*g);
        (s.isOk() ? inferred : rejected)++;
        if (verifyAgainstSchema(*node).isOk() && schema->verify) (void)schema->verify(*node);
        exerciseTypedClass<ConvNode>(node);
        exerciseTypedClass<CastNode>(node);
        exerciseTypedClass<SliceNode>(node);
        exerciseTypedClass<ResizeNode>(node);
        exerciseTypedClass<ConstantNode>(node);
        exerciseTypedClass<IfNode>(node);
      } catch (const std::exception& e) {
        ADD_FAILURE() << schema->name << " trial " << trial << " threw: " << e.what();
      }
    }
  }
  std::printf("OpInferenceFuzz: %d nodes inferred, %d rejected with a Status\n", inferred,
              rejected);
  EXPECT_GT(inferred, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace subgraph
