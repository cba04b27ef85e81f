#include <gtest/gtest.h>
#include "subgraph/ir/graph.h"
using namespace subgraph;
TEST(GraphSmoke, Builds) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DataType::kFloat32, {1, 3}));
  Node* r = g.addNode("Relu", {x});
  g.addOutput(r->output(0));
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(x->uses().size(), 1u);
}
