//===- core/ops/infer_rnn.cpp - Inference and checks for recurrent layers -===//
//
// LSTM, GRU and RNN share one rule. The hidden size is the attribute, or
// W's second dim divided by the gate count (4, 3 and 1); the direction
// count is 2 for "bidirectional". With layout 0, Y is [seq, dirs, batch,
// hidden] and Y_h / Y_c are [dirs, batch, hidden]; layout 1 moves batch to
// the front: [batch, seq, dirs, hidden] and [batch, dirs, hidden].
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

int64_t gateCount(const Node& node) {
  if (node.opType() == "LSTM") return 4;
  if (node.opType() == "GRU") return 3;
  return 1;
}

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

}  // namespace

Status verifyRecurrent(const Node& node) {
  const std::string direction = node.getString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return nodeError(node,
                     "direction '" + direction + "' is not one of forward, reverse, bidirectional");
  const int64_t layout = node.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    return nodeError(node, "layout " + std::to_string(layout) + " must be 0 or 1");
  const Attribute* hidden = node.attr("hidden_size");
  if (hidden && hidden->kind() == AttrKind::kInt && hidden->asInt() < 1)
    return nodeError(node, "hidden_size " + std::to_string(hidden->asInt()) + " must be >= 1");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  for (size_t i = 0; i < 3; ++i) {
    const Shape* s = shapeOf(node.input(i));
    if (!s) continue;
    const char* name = i == 0 ? "X" : i == 1 ? "W" : "R";
    if (s->size() != 3)
      return nodeError(node, std::string(name) + " must be 3-D, got " + shapeToString(*s));
    if (i > 0 && (*s)[0].isStatic() && (*s)[0].size() != dirs)
      return nodeError(node, std::string(name) + " " + shapeToString(*s) + " has " +
                                 (*s)[0].toString() + " directions, expected " +
                                 std::to_string(dirs) + " for direction '" + direction + "'");
    if (i > 0 && hidden && hidden->kind() == AttrKind::kInt && (*s)[1].isStatic() &&
        (CheckedInt(hidden->asInt()) * gateCount(node)).value() != (*s)[1].size())
      return nodeError(node, std::string(name) + " " + shapeToString(*s) + " does not hold " +
                                 std::to_string(gateCount(node)) + " gates of hidden_size " +
                                 std::to_string(hidden->asInt()));
  }
  return Status::ok();
}

Status inferRecurrent(InferenceContext& ctx) {
  const Node& node = ctx.node();
  SUBGRAPH_RETURN_IF_ERROR(verifyRecurrent(node));
  const bool batchFirst = node.getInt("layout", 0) == 1;
  const Dim dirs(node.getString("direction", "forward") == "bidirectional" ? 2 : 1);
  Dim hidden;
  if (const Attribute* h = node.attr("hidden_size"); h && h->kind() == AttrKind::kInt)
    hidden = Dim(h->asInt());
  else if (const Shape* w = inputShape(ctx, 1); w && (*w)[1].isStatic())
    hidden = Dim((*w)[1].size() / gateCount(node));
  Dim seq, batch;
  if (const Shape* x = inputShape(ctx, 0)) {
    seq = (*x)[batchFirst ? 1 : 0];
    batch = (*x)[batchFirst ? 0 : 1];
  }
  const DataType dtype = ctx.inputType(0).dtype;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    Shape shape =
        i == 0 ? (batchFirst ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden})
               : (batchFirst ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden});
    ctx.setOutputType(i, TensorType(dtype, std::move(shape)));
  }
  return Status::ok();
}

}  // namespace subgraph::ops
