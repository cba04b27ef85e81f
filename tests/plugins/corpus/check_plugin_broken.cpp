//===- tests/plugins/corpus/check_plugin_broken.cpp - Plugins check-plugin must fail -===//
//
// Two plugins that load fine but are wrong, the fixtures proving that
// `subgraph check-plugin` catches what it promises to (tests/cli/
// check_plugin_test.cpp):
//  * BROKEN_CYCLE, backend `broken_cycle`: a selector that starts on Relu
//    and grows to any Add reading it, skipping what lies between. For
//        r = Relu(x); s = Sigmoid(r); y = Add(r, s)
//    it proposes {Relu, Add}, which is not convex: fused, the region would
//    feed Sigmoid and read it back, a cycle. (The partitioner cuts such a
//    region; check-plugin reports that the selector asked for it.)
//  * BROKEN_KERNEL, backend `broken_kernel`: fuses each Relu alone and runs
//    it with a kernel that forgets the max, y = x, so negative inputs come
//    out wrong.
//  * BROKEN_CRASH_SELECT, backend `crash_select`: a selector that writes
//    through a null pointer when it is offered a Relu (SIGSEGV in Select);
//  * BROKEN_CRASH_RUN, backend `crash_run`: fuses each Relu alone, and its
//    kernel writes through a null pointer (SIGSEGV in a kernel's run).
//    The host must name the plugin, the call and the node, and exit with 3;
//  * BROKEN_OVERFLOW_RUN, backend `overflow_run`: fuses each Relu alone, and
//    its kernel recurses until the stack overflows. The crash handler must
//    still name it: the thread running the kernel has an alternate signal
//    stack, whichever thread that is;
//  * BROKEN_HELPER_CRASH, backend `helper_crash`: fuses each Relu alone, and
//    its kernel starts a thread that writes through a null pointer while
//    the kernel waits for it: the crash is on a thread with no plugin call
//    of its own, during this one;
//  * BROKEN_THROW_SELECT, backend `throw_select`: a selector that throws an
//    int (not an exception class) when it is offered a Relu. The error must
//    name the call, the node and the phase, as a selection error;
//  * BROKEN_HANG_RUN, backend `hang_run`: fuses each Relu alone, and its
//    kernel never returns. check-plugin must fail the case as hung, after
//    its --case-timeout, and go on;
//  * BROKEN_SPEW_RUN, backend `spew_run`: fuses each Relu alone, and its
//    kernel writes to stderr without end. check-plugin must keep only a
//    bounded tail of it (no file growing on disk, no memory growing in the
//    parent) and fail the case as hung;
//  * BROKEN_NEVER_FUSES, backend `never_fuses`: a selector that accepts no
//    node, so check-plugin's cases all pass without testing anything.
//    check-plugin must fail it, saying the plugin was not exercised.
//  * BROKEN_DECLINES, backend `declines`: fuses each Relu alone, and its
//    kernel creator declines every region, so the regions run their bodies
//    on the reference backend and every case passes without its kernel.
//    check-plugin must fail it, saying its kernels were not exercised;
//  * BROKEN_MATMUL_ADD, backend `matmul_add`: a correct selector (no
//    kernels) that starts at a MatMul with constant weights, declared as
//    its seed, and grows into an Add of a constant reading it. The default
//    probe must find MatMul and the Add without --ops;
//  * BROKEN_SEEDS, backend `broken_seeds`: a selector that declares Relu as
//    its only seed op but also says yes to Sigmoid. The host never offers
//    it a Sigmoid, so those regions silently never form; check-plugin must
//    fail it, naming the broken promise.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace sdk = subgraph::sdk;

// A write through a null pointer that the compiler must emit.
[[maybe_unused]] void crash() {
  volatile int* volatile nowhere = nullptr;
  *nowhere = 1;
}

// Recursion the compiler cannot turn into a loop: each frame keeps a
// buffer live across the call. (It stops at a depth no stack holds.)
[[maybe_unused]] int overflow(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth > (1 << 30)) return frame[0];
  return overflow(depth + 1) + frame[0];
}

#if defined(BROKEN_MATMUL_ADD)
bool constantInput(const sdk::NodeView& node, size_t i) {
  return node.numInputs() > i && node.input(i) && node.input(i).isConstant();
}

class MatMulAddSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& node) override {
    return node.is("MatMul") && constantInput(node, 1);
  }
  sdk::Decision SelectInput(const sdk::NodeView&, const sdk::NodeView&) override { return false; }
  sdk::Decision SelectOutput(const sdk::NodeView& node, const sdk::NodeView& consumer) override {
    return node.is("MatMul") && consumer.is("Add") &&
           (constantInput(consumer, 0) || constantInput(consumer, 1));
  }
};

class MatMulAddProperty final : public sdk::SubgraphProperty {
 public:
  MatMulAddProperty() : SubgraphProperty("matmul_add") {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<MatMulAddSelector>();
  }
  std::vector<std::string> SeedOpTypes() const override { return {"MatMul"}; }
};
#elif defined(BROKEN_CYCLE)
class ReluToAddSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& node) override { return node.is("Relu"); }
  sdk::Decision SelectInput(const sdk::NodeView&, const sdk::NodeView&) override { return false; }
  sdk::Decision SelectOutput(const sdk::NodeView& node, const sdk::NodeView& consumer) override {
    return node.is("Relu") && consumer.is("Add");
  }
};

class ReluAddProperty final : public sdk::SubgraphProperty {
 public:
  ReluAddProperty() : SubgraphProperty("relu_add") {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<ReluToAddSelector>();
  }
};
#else
class ReluSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& node) override {
#if defined(BROKEN_CRASH_SELECT)
    if (node.is("Relu")) crash();
#elif defined(BROKEN_THROW_SELECT)
    if (node.is("Relu")) throw 42;
#elif defined(BROKEN_NEVER_FUSES)
    return false;
#elif defined(BROKEN_SEEDS)
    return node.is("Relu") || node.is("Sigmoid");
#endif
    return node.is("Relu");
  }
  sdk::Decision SelectInput(const sdk::NodeView&, const sdk::NodeView&) override { return false; }
  sdk::Decision SelectOutput(const sdk::NodeView&, const sdk::NodeView&) override { return false; }
};

class ReluProperty final : public sdk::SubgraphProperty {
 public:
  ReluProperty() : SubgraphProperty("relu") {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<ReluSelector>();
  }
#if defined(BROKEN_SEEDS)
  std::vector<std::string> SeedOpTypes() const override { return {"Relu"}; }
#endif
};

/// The bug: copies x to y, forgetting max(x, 0).
class ForgetfulReluKernel final : public sdk::Kernel {
 public:
  void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
#if defined(BROKEN_CRASH_RUN)
    crash();
#elif defined(BROKEN_HANG_RUN)
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
#elif defined(BROKEN_SPEW_RUN)
    static const std::string line(4096, 'x');
    while (true) std::fwrite(line.data(), 1, line.size(), stderr);
#elif defined(BROKEN_OVERFLOW_RUN)
    if (overflow(0) == 42) return;
#elif defined(BROKEN_HELPER_CRASH)
    std::thread helper(crash);
    helper.join();
#endif
    std::memcpy(out[0].raw(), in[0].raw(), std::min(in[0].bytes(), out[0].bytes()));
  }
};
#endif

}  // namespace

#if defined(BROKEN_MATMUL_ADD)
SUBGRAPH_PLUGIN("matmul_add", "0.0.1", "test fixture: MatMul with constant weights, then Add") {
  plugin.addProperty<MatMulAddProperty>();
}
#elif defined(BROKEN_DECLINES)
SUBGRAPH_PLUGIN("declines", "0.0.1", "test fixture: a Relu kernel creator that always declines") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel(
      "subgraph.declines.relu",
      [](const sdk::NodeView&, const sdk::KernelContext&) -> std::unique_ptr<sdk::Kernel> {
        return nullptr;
      });
}
#elif defined(BROKEN_CYCLE)
SUBGRAPH_PLUGIN("broken_cycle", "0.0.1", "test fixture: a selector that proposes cycles") {
  plugin.addProperty<ReluAddProperty>();
}
#elif defined(BROKEN_CRASH_SELECT)
SUBGRAPH_PLUGIN("crash_select", "0.0.1", "test fixture: a selector that segfaults on Relu") {
  plugin.addProperty<ReluProperty>();
}
#elif defined(BROKEN_THROW_SELECT)
SUBGRAPH_PLUGIN("throw_select", "0.0.1", "test fixture: a selector that throws an int on Relu") {
  plugin.addProperty<ReluProperty>();
}
#elif defined(BROKEN_SEEDS)
SUBGRAPH_PLUGIN("broken_seeds", "0.0.1", "test fixture: a selector breaking its seed promise") {
  plugin.addProperty<ReluProperty>();
}
#elif defined(BROKEN_NEVER_FUSES)
SUBGRAPH_PLUGIN("never_fuses", "0.0.1", "test fixture: a selector that accepts nothing") {
  plugin.addProperty<ReluProperty>();
}
#elif defined(BROKEN_CRASH_RUN)
SUBGRAPH_PLUGIN("crash_run", "0.0.1", "test fixture: a Relu kernel that segfaults") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel("subgraph.crash_run.relu", [](const sdk::NodeView&, const sdk::KernelContext&) {
    return std::make_unique<ForgetfulReluKernel>();
  });
}
#elif defined(BROKEN_OVERFLOW_RUN)
SUBGRAPH_PLUGIN("overflow_run", "0.0.1", "test fixture: a Relu kernel that overflows its stack") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel("subgraph.overflow_run.relu",
                   [](const sdk::NodeView&, const sdk::KernelContext&) {
                     return std::make_unique<ForgetfulReluKernel>();
                   });
}
#elif defined(BROKEN_HELPER_CRASH)
SUBGRAPH_PLUGIN("helper_crash", "0.0.1",
                "test fixture: a Relu kernel whose helper thread crashes") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel("subgraph.helper_crash.relu",
                   [](const sdk::NodeView&, const sdk::KernelContext&) {
                     return std::make_unique<ForgetfulReluKernel>();
                   });
}
#elif defined(BROKEN_SPEW_RUN)
SUBGRAPH_PLUGIN("spew_run", "0.0.1", "test fixture: a Relu kernel that writes without end") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel("subgraph.spew_run.relu", [](const sdk::NodeView&, const sdk::KernelContext&) {
    return std::make_unique<ForgetfulReluKernel>();
  });
}
#elif defined(BROKEN_HANG_RUN)
SUBGRAPH_PLUGIN("hang_run", "0.0.1", "test fixture: a Relu kernel that never returns") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel("subgraph.hang_run.relu", [](const sdk::NodeView&, const sdk::KernelContext&) {
    return std::make_unique<ForgetfulReluKernel>();
  });
}
#else
SUBGRAPH_PLUGIN("broken_kernel", "0.0.1", "test fixture: a Relu kernel computing y = x") {
  plugin.addProperty<ReluProperty>();
  plugin.addKernel("subgraph.broken_kernel.relu",
                   [](const sdk::NodeView&, const sdk::KernelContext&) {
                     return std::make_unique<ForgetfulReluKernel>();
                   });
}
#endif
