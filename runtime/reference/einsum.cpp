//===- runtime/reference/einsum.cpp - Einsum ------------------------------===//
//
// Einsum by its definition: every output element is the sum, over all
// values of the labels that are not in the output, of the product of the
// operands at the positions the labels name. A label repeated within one
// operand takes the diagonal ("ii->i"); "..." stands for the same
// broadcast dims in every operand (numpy rules, right-aligned). Without
// "->" the output is the ellipsis dims followed by the labels that occur
// once, in alphabetical order, as numpy does. Whitespace is ignored.
//
// Cost is the product of all label sizes, which is fine for an oracle;
// output elements run in parallel. Floats accumulate in double; integers
// in wrapping unsigned 64-bit arithmetic (no overflow UB), then narrow.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

constexpr int kEllipsis = -1;
constexpr int kLetters = 52;  // a-z, A-Z; ellipsis dims get labels from here.

int letterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -2;
}

// One term: labels in order, kEllipsis where "..." stands.
using Term = std::vector<int>;

// The equation, parsed once per kernel.
struct Equation {
  std::vector<Term> inputs;
  Term output;
  bool explicitOutput = false;
};

// How to evaluate for concrete input dims.
struct Plan {
  std::vector<int64_t> outDims;
  std::vector<int> outLabels, sumLabels;
  std::vector<int64_t> labelSize;             // per label
  std::vector<std::vector<int64_t>> strides;  // per input, per label (0 if unused)
};

bool parseTerm(const std::string& text, Term& term) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      if (std::count(term.begin(), term.end(), kEllipsis)) return false;
      term.push_back(kEllipsis);
      i += 2;
      continue;
    }
    int l = letterLabel(text[i]);
    if (l < 0) return false;
    term.push_back(l);
  }
  return true;
}

Equation parseEquation(const Node& node) {
  std::string eq;
  for (char c : node.getString("equation"))
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  Equation e;
  std::string lhs = eq, rhs;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    e.explicitOutput = true;
  }
  size_t start = 0;
  for (;;) {
    size_t comma = lhs.find(',', start);
    Term t;
    if (!parseTerm(lhs.substr(start, comma == std::string::npos ? comma : comma - start), t))
      throwNodeError(node, "cannot parse equation '" + eq + "'");
    e.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.explicitOutput && !parseTerm(rhs, e.output))
    throwNodeError(node, "cannot parse equation '" + eq + "'");
  if (e.inputs.size() != node.numInputs())
    throwNodeError(node, "equation '" + eq + "' has " + std::to_string(e.inputs.size()) +
                             " operands, the node " + std::to_string(node.numInputs()));
  for (int l : e.output)
    if (l != kEllipsis && std::count(e.output.begin(), e.output.end(), l) > 1)
      throwNodeError(node, "equation '" + eq + "' repeats an output label");
  return e;
}

// Resolves label sizes, the output and the strides for `dims`; an error
// message (no node prefix) when the operands do not fit the equation.
Status makePlan(const Equation& e, const std::vector<const std::vector<int64_t>*>& dims, Plan& p) {
  // Ellipsis dims: right-aligned broadcast over the operands that have one.
  size_t ellipsisRank = 0;
  std::vector<size_t> eRank(e.inputs.size(), 0);
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    const Term& t = e.inputs[k];
    const size_t letters = static_cast<size_t>(
        std::count_if(t.begin(), t.end(), [](int l) { return l != kEllipsis; }));
    const bool hasEllipsis = letters != t.size();
    if (dims[k]->size() < letters || (!hasEllipsis && dims[k]->size() != letters))
      return Status::invalid("operand " + std::to_string(k) + " " + dimsToString(*dims[k]) +
                             " does not match its term's " + std::to_string(letters) + " labels");
    eRank[k] = dims[k]->size() - letters;
    ellipsisRank = std::max(ellipsisRank, eRank[k]);
  }
  const size_t numLabels = kLetters + ellipsisRank;
  p.labelSize.assign(numLabels, -1);
  p.strides.assign(e.inputs.size(), std::vector<int64_t>(numLabels, 0));
  std::vector<int> used(numLabels, 0);  // operands-wide occurrence count
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    std::vector<int64_t> st = contiguousStrides(*dims[k]);
    size_t axis = 0;
    auto bind = [&](int label, int64_t size, int64_t stride, bool broadcastable) -> Status {
      int64_t& known = p.labelSize[static_cast<size_t>(label)];
      if (broadcastable && size == 1) {
        if (known < 0) known = 1;
        return Status::ok();  // Stride stays 0: the operand repeats.
      }
      if (known >= 0 && known != size && !(broadcastable && known == 1))
        return Status::invalid("label size " + std::to_string(size) + " of operand " +
                               std::to_string(k) + " disagrees with " + std::to_string(known));
      known = size;
      p.strides[k][static_cast<size_t>(label)] += stride;
      return Status::ok();
    };
    for (int l : e.inputs[k]) {
      if (l == kEllipsis) {
        for (size_t j = 0; j < eRank[k]; ++j, ++axis) {
          int label = static_cast<int>(kLetters + ellipsisRank - eRank[k] + j);
          SUBGRAPH_RETURN_IF_ERROR(bind(label, (*dims[k])[axis], st[axis], true));
          ++used[static_cast<size_t>(label)];
        }
        continue;
      }
      SUBGRAPH_RETURN_IF_ERROR(bind(l, (*dims[k])[axis], st[axis], false));
      ++used[static_cast<size_t>(l)];
      ++axis;
    }
  }
  // Output labels.
  p.outLabels.clear();
  auto pushEllipsis = [&] {
    for (size_t j = 0; j < ellipsisRank; ++j) p.outLabels.push_back(static_cast<int>(kLetters + j));
  };
  if (e.explicitOutput) {
    for (int l : e.output) {
      if (l == kEllipsis) {
        pushEllipsis();
        continue;
      }
      if (!used[static_cast<size_t>(l)])
        return Status::invalid("output label does not occur in any operand");
      p.outLabels.push_back(l);
    }
  } else {
    pushEllipsis();
    // Alphabetical: A-Z sort before a-z in ASCII, as numpy orders them.
    for (int l = 26; l < kLetters; ++l)
      if (used[static_cast<size_t>(l)] == 1) p.outLabels.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (used[static_cast<size_t>(l)] == 1) p.outLabels.push_back(l);
  }
  p.sumLabels.clear();
  for (size_t l = 0; l < numLabels; ++l)
    if (used[l] &&
        std::find(p.outLabels.begin(), p.outLabels.end(), static_cast<int>(l)) == p.outLabels.end())
      p.sumLabels.push_back(static_cast<int>(l));
  p.outDims.clear();
  for (int l : p.outLabels) p.outDims.push_back(p.labelSize[static_cast<size_t>(l)]);
  return Status::ok();
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(const Node& node)
      : eq_(parseEquation(node)), workLimit_(kernelWorkLimit()) {}

  Status resize(ResizeContext& ctx) const override {
    const DataType dt = ctx.inputDesc(0).dtype;
    if (!typeInSet(dt, kNumeric)) return unsupportedType(ctx.node(), dt);
    std::vector<const std::vector<int64_t>*> dims;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) return ctx.fail("input " + std::to_string(i) + " is missing");
      if (ctx.inputDesc(i).dtype != dt) return ctx.fail("operands differ in element type");
      dims.push_back(&ctx.inputDesc(i).dims);
    }
    Plan p;
    Status st = makePlan(eq_, dims, p);
    if (!st.isOk()) return ctx.fail(st.message());
    // The equation sets the loop: every combination of every label's size,
    // summed ones too ("ab,cd->" visits |a||b||c||d| of them).
    CheckedInt steps = 1;
    for (int64_t size : p.labelSize)
      if (size >= 0) steps = steps * size;  // -1: a label the equation does not use
    SUBGRAPH_RETURN_IF_ERROR(checkKernelWork(ctx.node(), steps, workLimit_, "its equation"));
    ctx.setOutput(0, TensorDesc{dt, p.outDims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    std::vector<const std::vector<int64_t>*> dims;
    for (size_t i = 0; i < ctx.numInputs(); ++i) dims.push_back(&ctx.input(i).dims());
    Plan p;
    Status st = makePlan(eq_, dims, p);
    if (!st.isOk()) return ctx.fail(st.message());
    int64_t sumCount = 1;
    for (int l : p.sumLabels) sumCount *= p.labelSize[static_cast<size_t>(l)];
    const size_t numInputs = ctx.numInputs();
    const TensorView& y = ctx.output(0);
    bool ok = visitType<kNumeric>(y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      // Accumulator: double for floats, wrapping uint64 for integers.
      using Acc = std::conditional_t<std::is_floating_point_v<C>, double, uint64_t>;
      std::vector<const T*> in(numInputs);
      for (size_t k = 0; k < numInputs; ++k) in[k] = ctx.input(k).template data<T>();
      T* py = y.mutableData<T>();
      parallelFor(y.numElements(), sumCount * static_cast<int64_t>(numInputs),
                  [&](int64_t begin, int64_t end) {
                    std::vector<int64_t> base(numInputs), off(numInputs);
                    std::vector<int64_t> sumIdx(p.sumLabels.size());
                    for (int64_t o = begin; o < end; ++o) {
                      // Offsets of the output labels' positions.
                      std::fill(base.begin(), base.end(), 0);
                      int64_t rest = o;
                      for (size_t d = p.outLabels.size(); d-- > 0;) {
                        const size_t l = static_cast<size_t>(p.outLabels[d]);
                        const int64_t v = rest % p.labelSize[l];
                        rest /= p.labelSize[l];
                        for (size_t k = 0; k < numInputs; ++k) base[k] += v * p.strides[k][l];
                      }
                      Acc acc = 0;
                      std::fill(sumIdx.begin(), sumIdx.end(), 0);
                      for (int64_t s = 0; s < sumCount; ++s) {
                        off = base;
                        for (size_t j = 0; j < sumIdx.size(); ++j)
                          for (size_t k = 0; k < numInputs; ++k)
                            off[k] += sumIdx[j] * p.strides[k][static_cast<size_t>(p.sumLabels[j])];
                        Acc prod = 1;
                        for (size_t k = 0; k < numInputs; ++k)
                          prod *= static_cast<Acc>(load(in[k][off[k]]));
                        acc += prod;
                        for (size_t j = sumIdx.size(); j-- > 0;) {
                          if (++sumIdx[j] < p.labelSize[static_cast<size_t>(p.sumLabels[j])]) break;
                          sumIdx[j] = 0;
                        }
                      }
                      py[o] = store<T>(static_cast<C>(acc));
                    }
                  });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), y.dtype());
  }

 private:
  Equation eq_;
  uint64_t workLimit_;  // WorkLimits::kernelWork of the session; 0: none
};

}  // namespace

void registerEinsumKernels(Provider& p) { p.add("Einsum", creatorFor<EinsumKernel>()); }

}  // namespace subgraph::runtime::reference
