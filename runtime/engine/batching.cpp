//===- runtime/engine/batching.cpp - Dynamic batching of requests ---------===//
//
// The batch-axis check (which ops keep the rows of dim 0 apart) and the
// Batcher that merges concurrent requests; see engine/batching.h.
//
//===----------------------------------------------------------------------===//
#include "engine/batching.h"

#include "subgraph/ir/shape_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <optional>
#include <set>
#include <unordered_map>

namespace subgraph::runtime::engine {

namespace {

// What a value is to the batch: computed from constants only, or indexed by
// the batch on dim 0.
enum class Kind { kConstant, kBatched };

const std::set<std::string, std::less<>>& rowwiseOps() {
  // Each output row is a function of the same row of input 0 (element-wise,
  // or one image, one sequence, one row at a time), the other inputs being
  // parameters.
  static const std::set<std::string, std::less<>> ops = {"Abs",
                                                         "Acos",
                                                         "Acosh",
                                                         "Asin",
                                                         "Asinh",
                                                         "Atan",
                                                         "Atanh",
                                                         "AveragePool",
                                                         "BatchNormalization",
                                                         "Cast",
                                                         "CastLike",
                                                         "Ceil",
                                                         "Celu",
                                                         "Clip",
                                                         "Conv",
                                                         "ConvInteger",
                                                         "ConvTranspose",
                                                         "Cos",
                                                         "Cosh",
                                                         "DepthToSpace",
                                                         "DequantizeLinear",
                                                         "Dropout",
                                                         "Elu",
                                                         "Erf",
                                                         "Exp",
                                                         "Floor",
                                                         "Gelu",
                                                         "GlobalAveragePool",
                                                         "GlobalLpPool",
                                                         "GlobalMaxPool",
                                                         "HardSigmoid",
                                                         "HardSwish",
                                                         "Identity",
                                                         "InstanceNormalization",
                                                         "IsInf",
                                                         "IsNaN",
                                                         "LRN",
                                                         "LeakyRelu",
                                                         "Log",
                                                         "LpPool",
                                                         "MaxPool",
                                                         "Mish",
                                                         "Neg",
                                                         "Not",
                                                         "QLinearConv",
                                                         "QuantizeLinear",
                                                         "Reciprocal",
                                                         "Relu",
                                                         "Round",
                                                         "Selu",
                                                         "Shrink",
                                                         "Sigmoid",
                                                         "Sign",
                                                         "Sin",
                                                         "Sinh",
                                                         "Softplus",
                                                         "Softsign",
                                                         "SpaceToDepth",
                                                         "Sqrt",
                                                         "Tan",
                                                         "Tanh",
                                                         "ThresholdedRelu"};
  return ops;
}

const std::set<std::string, std::less<>>& broadcastingOps() {
  // Multidirectional broadcasting: the operands' ranks decide the axes.
  static const std::set<std::string, std::less<>> ops = {
      "Add",  "And",         "BitShift", "Div",  "Equal", "Greater", "GreaterOrEqual",
      "Less", "LessOrEqual", "Max",      "Mean", "Min",   "Mod",     "Mul",
      "Or",   "PRelu",       "Pow",      "Sub",  "Sum",   "Where",   "Xor"};
  return ops;
}

size_t rankOf(const Value* v) { return v && v->type().hasRank() ? v->type().rank() : 0; }

std::vector<int64_t> constantInts(const Value* v) {
  std::vector<int64_t> out;
  if (!v || !v->initializer()) return out;
  const Tensor& t = *v->initializer();
  if (t.dtype() == DataType::kInt64)
    for (int64_t x : t.data<int64_t>()) out.push_back(x);
  if (t.dtype() == DataType::kInt32)
    for (int32_t x : t.data<int32_t>()) out.push_back(x);
  return out;
}

int64_t normalized(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

/// The axes of `node` from attribute `attr` or input `input` (opset 13+).
std::optional<std::vector<int64_t>> axesOf(const Node& node, const char* attr, size_t input) {
  if (node.hasAttr(attr)) return node.getInts(attr);
  if (node.numInputs() > input && node.input(input)) {
    if (!node.input(input)->initializer()) return std::nullopt;
    return constantInts(node.input(input));
  }
  return std::vector<int64_t>{};
}

bool touchesBatch(const std::vector<int64_t>& axes, size_t rank) {
  return std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return normalized(a, rank) == 0; });
}

// "" if `node`, some of whose inputs are batched (kinds[i]), keeps rows apart.
std::string ruleFor(const Node& node, const std::vector<Kind>& kinds) {
  const std::string& op = node.opType();
  const Value* out = node.output(0);
  const size_t rank = rankOf(node.input(0));
  auto batched = [&](size_t i) { return i < kinds.size() && kinds[i] == Kind::kBatched; };
  if (!node.domain().empty()) return "is not an ONNX op";
  if (broadcastingOps().count(op)) {
    // Every batched operand has the output's rank (its dim 0 is the
    // output's), and every constant one broadcasts along dim 0.
    size_t outRank = 0;
    for (size_t i = 0; i < node.numInputs(); ++i)
      if (node.input(i)) {
        if (!node.input(i)->type().hasRank()) return "has an operand of unknown rank";
        outRank = std::max(outRank, rankOf(node.input(i)));
      }
    for (size_t i = 0; i < node.numInputs(); ++i) {
      const Value* in = node.input(i);
      if (!in) continue;
      size_t r = rankOf(in);
      if (batched(i) && r != outRank) return "broadcasts a batched operand of lower rank";
      if (!batched(i) && r == outRank && outRank > 0) {
        const Shape& s = *in->type().shape;
        if (!(s[0].isStatic() && s[0].size() == 1))
          return "reads a constant whose dim 0 is not 1 beside the batch";
      }
    }
    return {};
  }
  if (rowwiseOps().count(op)) {
    // One image or row at a time; weights and parameters must not come
    // from the batch.
    if (std::any_of(kinds.begin() + 1, kinds.end(), [](Kind k) { return k == Kind::kBatched; }))
      return "takes a parameter from the batch";
    return {};
  }
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax" || op == "LayerNormalization" ||
      op == "Flatten")
    return normalized(node.getInt("axis", op == "Flatten" ? 1 : -1), rank) == 0
               ? "works along axis 0, the batch"
               : "";
  if (op == "Gemm") {
    if (!batched(0) || batched(1) || batched(2)) return "multiplies by a batched B or C";
    return node.getInt("transA", 0) ? "transposes A, moving the batch" : "";
  }
  if (op == "MatMul") {
    if (batched(1) && (!batched(0) || rankOf(node.input(1)) != rank || rank < 3))
      return "multiplies by a batched B that is no matching batch of matrices";
    if (!batched(1) && rankOf(node.input(1)) > 2 && rankOf(node.input(1)) >= rank)
      return "multiplies by a constant batch of matrices";
    return rank >= 2 ? "" : "multiplies a batched vector";
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm = node.getInts("perm");
    return !perm.empty() && perm[0] == 0 ? "" : "moves the batch axis";
  }
  if (op == "Reshape") {
    std::vector<int64_t> shape = constantInts(node.input(1));
    if (!node.input(1) || !node.input(1)->initializer() || shape.empty())
      return "reshapes to a shape computed at run time";
    if (shape[0] == 0 && node.getInt("allowzero", 0) == 0) return "";
    return "does not keep dim 0 (write 0 there, as a copy of the batch)";
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    std::optional<std::vector<int64_t>> axes = axesOf(node, "axes", 1);
    size_t r = op == "Squeeze" ? rank : rankOf(out);
    if (!axes || axes->empty() || touchesBatch(*axes, r)) return "may add or remove axis 0";
    return "";
  }
  if (op == "Concat" || op == "Split")
    return normalized(node.getInt("axis", 0), rank) == 0 ? "joins or splits along the batch"
           : op == "Concat" && std::any_of(kinds.begin(), kinds.end(),
                                           [](Kind k) { return k != Kind::kBatched; })
               ? "joins a constant to the batch"
               : "";
  if (op == "Slice") {
    std::optional<std::vector<int64_t>> axes = axesOf(node, "axes", 3);
    if (!axes || axes->empty() || touchesBatch(*axes, rank)) return "may slice the batch";
    return "";
  }
  if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
    if (op == "ArgMax" || op == "ArgMin")
      return normalized(node.getInt("axis", 0), rank) == 0 ? "reduces the batch" : "";
    std::optional<std::vector<int64_t>> axes = axesOf(node, "axes", 1);
    if (!axes || axes->empty() || touchesBatch(*axes, rank)) return "reduces the batch";
    return "";
  }
  if (op == "Gather") {
    if (batched(0) && !batched(1))
      return normalized(node.getInt("axis", 0), rank) == 0 ? "gathers along the batch" : "";
    if (!batched(0) && batched(1) && normalized(node.getInt("axis", 0), rank) == 0) return "";
    return "gathers from the batch with batched indices";
  }
  if (op == "Pad") {
    std::vector<int64_t> pads =
        node.hasAttr("pads") ? node.getInts("pads") : constantInts(node.input(1));
    if (pads.empty() || pads[0] != 0 || pads[pads.size() / 2] != 0) return "may pad the batch";
    return "";
  }
  if (op == "Shape" || op == "Size") return "reads the batch size";
  return "has no batching rule";
}

}  // namespace

namespace {

/// Marks in `kinds` the values of `graph` computed from the batch (its
/// batched inputs are marked already); "" if every node keeps the rows
/// apart, else why one does not. A fused region (a node of a partition
/// backend's domain with a "body" graph) is judged by its body, whose
/// inputs and outputs are the node's in order: the partitioner's fused
/// node hides its ops, and a session receives graphs already partitioned.
std::string judge(const Graph& graph, std::unordered_map<const Value*, Kind>& kinds) {
  StatusOr<std::vector<Node*>> order = const_cast<Graph&>(graph).topologicalOrder();
  if (!order.isOk()) return order.status().message();
  for (const Node* node : order.value()) {
    std::vector<Kind> in;
    bool any = false;
    for (size_t i = 0; i < node->numInputs(); ++i) {
      auto it = node->input(i) ? kinds.find(node->input(i)) : kinds.end();
      in.push_back(it == kinds.end() ? Kind::kConstant : it->second);
      any = any || in.back() == Kind::kBatched;
    }
    if (!any) continue;  // computed from constants alone
    const Attribute* body = node->domain().empty() ? nullptr : node->attr("body");
    if (body && body->kind() == AttrKind::kGraph && body->asGraph()) {
      const Graph& b = *body->asGraph();
      if (b.inputs().size() != node->numInputs() || b.outputs().size() != node->numOutputs())
        return fmt::format("{} node '{}' has a body whose inputs or outputs are not the node's",
                           node->opType(), node->displayName());
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i] == Kind::kBatched && b.inputs()[i]) kinds[b.inputs()[i]] = Kind::kBatched;
      if (std::string why = judge(b, kinds); !why.empty()) return why;
      for (size_t o = 0; o < node->numOutputs(); ++o)
        if (node->output(o) && kinds.count(b.outputs()[o])) kinds[node->output(o)] = Kind::kBatched;
      continue;
    }
    if (std::string why = ruleFor(*node, in); !why.empty())
      return fmt::format("{} node '{}' {}", node->opType(), node->displayName(), why);
    for (size_t o = 0; o < node->numOutputs(); ++o)
      if (node->output(o)) kinds[node->output(o)] = Kind::kBatched;
  }
  return {};
}

}  // namespace

std::string batchRefusal(const Graph& loaded) {
  // The rules read ranks, which a loaded text graph may not state yet.
  std::unique_ptr<Graph> inferred = loaded.clone();
  (void)inferShapes(*inferred);
  const Graph& graph = *inferred;
  std::unordered_map<const Value*, Kind> kinds;
  for (const Value* in : graph.inputs()) {
    if (!in || in->initializer()) continue;
    const TensorType& t = in->type();
    if (!t.hasRank() || t.rank() == 0)
      return fmt::format("input '{}' has no dim 0 to batch along", in->name());
    const Dim& d = (*t.shape)[0];
    if (d.isStatic() && d.size() != 1)
      return fmt::format("input '{}' has dim 0 fixed at {}, not free (symbolic or 1)", in->name(),
                         d.size());
    kinds[in] = Kind::kBatched;
  }
  if (std::string why = judge(graph, kinds); !why.empty()) return why;
  for (const Value* out : graph.outputs())
    if (out && kinds.count(out) == 0)
      return fmt::format("output '{}' does not depend on the batch", out->name());
  return {};
}

//===--- Batcher ----------------------------------------------------------===//

struct Batcher::Request {
  const std::vector<InputView>* inputs;
  int64_t rows;
  std::promise<StatusOr<RunResult>> result;
};

struct Batcher::Batch {
  std::vector<Request*> requests;
  int64_t rows = 0;
  bool closed = false;
  std::condition_variable full;
};

namespace {

/// Everything but dim 0 of every input: requests with equal keys merge.
std::string signatureOf(const std::vector<InputView>& inputs) {
  std::string key;
  for (const InputView& in : inputs) {
    key += in.name + ':' + std::to_string(static_cast<int>(in.dtype));
    for (size_t d = 1; d < in.dims.size(); ++d) key += ',' + std::to_string(in.dims[d]);
    key += ';';
  }
  return key;
}

}  // namespace

StatusOr<RunResult> Batcher::run(const std::vector<InputView>& inputs, int64_t rows) {
  if (rows >= options_.maxBatch) return run_(inputs);
  Request mine{&inputs, rows, {}};
  std::future<StatusOr<RunResult>> answer = mine.result.get_future();
  std::string key = signatureOf(inputs);
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = open_.find(key);
  if (it != open_.end() && !it->second->closed && it->second->rows + rows <= options_.maxBatch) {
    std::shared_ptr<Batch> batch = it->second;
    batch->requests.push_back(&mine);
    batch->rows += rows;
    if (batch->rows >= options_.maxBatch) batch->full.notify_one();
    lock.unlock();
    return answer.get();
  }
  auto batch = std::make_shared<Batch>();
  batch->requests.push_back(&mine);
  batch->rows = rows;
  open_[key] = batch;
  lead(lock, key, batch);
  return answer.get();
}

void Batcher::lead(std::unique_lock<std::mutex>& lock, const std::string& key,
                   std::shared_ptr<Batch> batch) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(options_.maxDelayUs);
  batch->full.wait_until(lock, deadline, [&] { return batch->rows >= options_.maxBatch; });
  batch->closed = true;
  if (auto it = open_.find(key); it != open_.end() && it->second == batch) open_.erase(it);
  lock.unlock();
  if (batch->requests.size() == 1) {
    deliver(*batch, run_(*batch->requests[0]->inputs));
    return;
  }
  // The merged inputs: each input's rows, request after request (dim 0 is
  // outermost, so a request's rows are one contiguous range of bytes).
  const std::vector<InputView>& first = *batch->requests[0]->inputs;
  std::vector<std::vector<std::byte>> bytes(first.size());
  std::vector<InputView> merged = first;
  for (size_t i = 0; i < first.size(); ++i) {
    for (const Request* r : batch->requests) {
      const InputView& in = (*r->inputs)[i];
      const auto* b = static_cast<const std::byte*>(in.data);
      bytes[i].insert(bytes[i].end(), b, b + in.bytes);
    }
    merged[i].dims[0] = batch->rows;
    merged[i].data = bytes[i].data();
    merged[i].bytes = bytes[i].size();
  }
  deliver(*batch, run_(merged));
}

void Batcher::deliver(Batch& batch, StatusOr<RunResult> merged) {
  size_t n = batch.requests.size();
  if (!merged.isOk() || n == 1) {
    if (merged.isOk()) {
      batch.requests[0]->result.set_value(std::move(merged));
      return;
    }
    for (Request* r : batch.requests) r->result.set_value(merged.status());
    return;
  }
  // Each output's rows back to the request they belong to.
  int64_t row = 0;
  for (Request* r : batch.requests) {
    RunResult mine;
    mine.wallMs = merged->wallMs;
    mine.batchedRequests = n;
    Status bad;
    for (const NamedTensor& out : merged->outputs) {
      const Tensor& t = out.tensor;
      if (t.dims().empty() || t.dims()[0] != batch.rows) {
        bad = Status::error(StatusCode::kInternal, "dynamic batching: output '" + out.name +
                                                       "' has no dim 0 of " +
                                                       std::to_string(batch.rows) + " rows");
        break;
      }
      size_t rowBytes = t.bytes().size() / static_cast<size_t>(batch.rows);
      std::vector<int64_t> dims = t.dims();
      dims[0] = r->rows;
      std::vector<std::byte> part(
          t.bytes().begin() + static_cast<ptrdiff_t>(rowBytes * row),
          t.bytes().begin() + static_cast<ptrdiff_t>(rowBytes * (row + r->rows)));
      mine.outputs.push_back({out.name, Tensor(t.dtype(), std::move(dims), std::move(part))});
    }
    row += r->rows;
    if (bad.isOk())
      r->result.set_value(std::move(mine));
    else
      r->result.set_value(bad);
  }
}

}  // namespace subgraph::runtime::engine
