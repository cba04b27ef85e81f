//===- core/ops/infer_linalg.cpp - Inference and checks for matrix products ===//
//
// MatMul follows numpy.matmul: a 1-D A is treated as [1, K] and a 1-D B as
// [K, 1], with the added dim dropped from the result; the batch dims
// broadcast. Gemm multiplies two 2-D matrices, optionally transposed, and
// C must broadcast to [M, N] without growing it. The contracted dims must
// agree whenever both are static.
//
//===----------------------------------------------------------------------===//
#include <cctype>
#include <map>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

bool conflicts(const Dim& a, const Dim& b) { return a.isStatic() && b.isStatic() && a != b; }

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

}  // namespace

Status inferMatMul(InferenceContext& ctx) {
  DataType dtype = ctx.inputType(0).dtype;
  if (dtype == DataType::kUndefined) dtype = ctx.inputType(1).dtype;
  return inferMatMulLike(ctx, 0, 1, dtype);
}

Status inferMatMulLike(InferenceContext& ctx, size_t aInput, size_t bInput, DataType dtype) {
  const Shape* a = inputShape(ctx, aInput);
  const Shape* b = inputShape(ctx, bInput);
  TensorType out(dtype);
  if (!a || !b) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  if (a->empty() || b->empty()) return ctx.fail("A and B must not be scalars");
  Shape sa = *a, sb = *b;
  const bool aVector = sa.size() == 1, bVector = sb.size() == 1;
  if (aVector) sa.insert(sa.begin(), Dim(1));
  if (bVector) sb.push_back(Dim(1));
  const Dim& ka = sa.back();
  const Dim& kb = sb[sb.size() - 2];
  if (conflicts(ka, kb))
    return ctx.fail("inner dims differ: A " + shapeToString(*a) + " and B " + shapeToString(*b));
  std::optional<Shape> batch =
      broadcastShapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  if (!batch)
    return ctx.fail("batch dims of A " + shapeToString(*a) + " and B " + shapeToString(*b) +
                    " do not broadcast");
  Shape shape = std::move(*batch);
  if (!aVector) shape.push_back(sa[sa.size() - 2]);
  if (!bVector) shape.push_back(sb.back());
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferGemm(InferenceContext& ctx) {
  const Node& node = ctx.node();
  SUBGRAPH_RETURN_IF_ERROR(verifyGemm(node));
  const Shape* a = inputShape(ctx, 0);
  const Shape* b = inputShape(ctx, 1);
  const bool transA = node.getInt("transA", 0) != 0;
  const bool transB = node.getInt("transB", 0) != 0;
  const Dim m = a ? (*a)[transA ? 1 : 0] : Dim();
  const Dim n = b ? (*b)[transB ? 0 : 1] : Dim();
  TensorType out(ctx.inputType(0).dtype, Shape{m, n});
  if (const Shape* c = inputShape(ctx, 2)) {
    std::optional<Shape> bc = broadcastShapes(*out.shape, *c);
    if (!bc || bc->size() != 2 || conflicts((*bc)[0], m) || conflicts((*bc)[1], n))
      return ctx.fail("C " + shapeToString(*c) +
                      " does not broadcast to [M, N] = " + shapeToString(*out.shape));
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyGemm(const Node& node) {
  for (const char* flag : {"transA", "transB"}) {
    int64_t v = node.getInt(flag, 0);
    if (v != 0 && v != 1)
      return nodeError(node, std::string(flag) + " " + std::to_string(v) + " must be 0 or 1");
  }
  const Shape* a = shapeOf(node.input(0));
  const Shape* b = shapeOf(node.input(1));
  if (a && a->size() != 2) return nodeError(node, "A must be 2-D, got " + shapeToString(*a));
  if (b && b->size() != 2) return nodeError(node, "B must be 2-D, got " + shapeToString(*b));
  if (const Shape* c = shapeOf(node.input(2)); c && c->size() > 2)
    return nodeError(node, "C must have rank <= 2, got " + shapeToString(*c));
  if (a && b) {
    const Dim& ka = (*a)[node.getInt("transA", 0) ? 0 : 1];
    const Dim& kb = (*b)[node.getInt("transB", 0) ? 1 : 0];
    if (conflicts(ka, kb))
      return nodeError(node, "inner dims differ: A " + shapeToString(*a) + " and B " +
                                 shapeToString(*b) + " (transA " +
                                 std::to_string(node.getInt("transA", 0)) + ", transB " +
                                 std::to_string(node.getInt("transB", 0)) + ")");
  }
  return Status::ok();
}

namespace {

// One operand of an Einsum equation: its labels, with '.' marking where the
// ellipsis dims go.
struct EinsumTerm {
  std::string labels;  // letters, and at most one '.' for "..."
};

// Parses "ab,b...->a..." into terms; the output term is empty when the
// equation has no "->" (implicit output).
StatusOr<std::pair<std::vector<EinsumTerm>, std::optional<EinsumTerm>>> parseEinsum(
    const InferenceContext& ctx, std::string equation) {
  std::string compact;
  for (char c : equation)
    if (c != ' ') compact += c;
  std::optional<EinsumTerm> output;
  const size_t arrow = compact.find("->");
  std::string lhs = compact.substr(0, arrow);
  auto parseTerm = [&](const std::string& text) -> StatusOr<EinsumTerm> {
    EinsumTerm term;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "...") == 0) {
        if (term.labels.find('.') != std::string::npos)
          return ctx.fail("equation '" + equation + "' has two ellipses in one term");
        term.labels += '.';
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(text[i]))) {
        term.labels += text[i];
      } else {
        return ctx.fail("equation '" + equation + "' has an invalid character '" +
                        std::string(1, text[i]) + "'");
      }
    }
    return term;
  };
  if (arrow != std::string::npos) {
    StatusOr<EinsumTerm> out = parseTerm(compact.substr(arrow + 2));
    if (!out.isOk()) return out.status();
    output = out.value();
  }
  std::vector<EinsumTerm> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    StatusOr<EinsumTerm> term = parseTerm(lhs.substr(start, comma - start));
    if (!term.isOk()) return term.status();
    terms.push_back(term.value());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return std::make_pair(std::move(terms), std::move(output));
}

}  // namespace

Status inferEinsum(InferenceContext& ctx) {
  const Attribute* eq = ctx.node().attr("equation");
  if (!eq || eq->kind() != AttrKind::kString) return ctx.fail("attribute 'equation' is missing");
  auto parsed = parseEinsum(ctx, eq->asString());
  if (!parsed.isOk()) return parsed.status();
  const auto& [terms, explicitOutput] = parsed.value();
  if (terms.size() != ctx.numInputs())
    return ctx.fail("equation '" + eq->asString() + "' has " + std::to_string(terms.size()) +
                    " operands but the node has " + std::to_string(ctx.numInputs()) + " inputs");
  TensorType out(ctx.inputType(0).dtype);
  std::map<char, Dim> dims;
  std::map<char, int> counts;
  std::optional<Shape> ellipsis = Shape();
  bool allRanked = true;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string& labels = terms[t].labels;
    const size_t letters = labels.size() - (labels.find('.') != std::string::npos ? 1 : 0);
    for (char c : labels)
      if (c != '.') ++counts[c];
    const Shape* s = inputShape(ctx, t);
    if (!s) {
      allRanked = false;
      continue;
    }
    const bool hasEllipsis = labels.find('.') != std::string::npos;
    if (s->size() < letters || (!hasEllipsis && s->size() != letters))
      return ctx.fail("operand " + std::to_string(t) + " of shape " + shapeToString(*s) +
                      " does not match '" + labels + "' in the equation");
    const size_t ellipsisRank = s->size() - letters;
    size_t d = 0;
    for (char c : labels) {
      if (c == '.') {
        Shape part(s->begin() + static_cast<std::ptrdiff_t>(d),
                   s->begin() + static_cast<std::ptrdiff_t>(d + ellipsisRank));
        ellipsis = ellipsis ? broadcastShapes(*ellipsis, part) : std::nullopt;
        if (!ellipsis) return ctx.fail("the '...' dims of the operands do not broadcast");
        d += ellipsisRank;
        continue;
      }
      const Dim& dim = (*s)[d++];
      auto [it, inserted] = dims.emplace(c, dim);
      if (inserted) continue;
      Dim& known = it->second;
      if (known.isStatic() && dim.isStatic() && known != dim && known != Dim(1) && dim != Dim(1))
        return ctx.fail("label '" + std::string(1, c) + "' is " + known.toString() +
                        " in one operand and " + dim.toString() + " in another");
      if (!known.isStatic() || known == Dim(1)) known = dim.isStatic() ? dim : known;
    }
  }
  EinsumTerm output;
  if (explicitOutput) {
    output = *explicitOutput;
  } else {
    // Implicit output: the ellipsis, then the labels used once, sorted.
    bool anyEllipsis = false;
    for (const EinsumTerm& t : terms) anyEllipsis |= t.labels.find('.') != std::string::npos;
    if (anyEllipsis) output.labels += '.';
    for (const auto& [c, n] : counts)
      if (n == 1) output.labels += c;
  }
  const bool outputEllipsis = output.labels.find('.') != std::string::npos;
  if (allRanked || !outputEllipsis) {
    Shape shape;
    for (char c : output.labels) {
      if (c == '.') {
        if (ellipsis) shape.insert(shape.end(), ellipsis->begin(), ellipsis->end());
        continue;
      }
      if (!counts.count(c))
        return ctx.fail("output label '" + std::string(1, c) + "' is not in any operand");
      auto it = dims.find(c);
      shape.push_back(it != dims.end() ? it->second : Dim::unknown());
    }
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferDet(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  if (const Shape* x = inputShape(ctx, 0)) {
    if (x->size() < 2) return ctx.fail("X must have rank >= 2, got " + shapeToString(*x));
    const Dim& m = (*x)[x->size() - 2];
    const Dim& n = x->back();
    if (m.isStatic() && n.isStatic() && m != n)
      return ctx.fail("matrices of shape " + shapeToString(*x) + " are not square");
    out.shape = Shape(x->begin(), x->end() - 2);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

}  // namespace subgraph::ops
